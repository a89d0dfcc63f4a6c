/// The rule of a user's name on a server, for the server that holds it to joins and the
/// clients that check a `--user` before they ask: one copy, so the two cannot differ.
public enum UserName {
    /// The rule in words, as every refusal of a name says it.
    public static let rule = "1 to 32 of a-z, 0-9, _ and -, starting with a letter or a digit"

    /// 1 to 32 of `a-z 0-9 _ -`, starting with a letter or a digit.
    public static func isValid(_ name: String) -> Bool {
        guard (1...32).contains(name.utf8.count), let first = name.utf8.first, first != UInt8(ascii: "_"), first != UInt8(ascii: "-") else { return false }
        return name.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
    }
}
