/// Message bodies every store must give back byte for byte, whatever path kept them: a NUL
/// inside an amount, every C0 and C1 control, combining marks with nothing to combine with,
/// a body of 16 KiB with NULs spread through it, and the empty body.
public enum StoredBodies {
    public static let all: [String] = [
        "pay 100\u{0}99 EUR",
        String((0..<0x20).map { Character(Unicode.Scalar(UInt8($0))) }) + "\u{7F}",
        String((0x80...0x9F).map { Character(Unicode.Scalar(UInt8($0))) }),
        "\u{301}\u{302}\u{303} marks first, then e\u{301} and \u{20DD}",
        "\u{0}",
        String(repeating: "0123456789abcde\u{0}", count: 1024),  // 16 KiB
        "",
    ]

    /// The bytes of each body, for comparing without any normalisation in between.
    public static func bytes(_ bodies: [String]) -> [[UInt8]] { bodies.map { Array($0.utf8) } }
}
