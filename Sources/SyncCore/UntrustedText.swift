// Untrusted text (message bodies, display names) must never reach a terminal raw (SPEC §6).
// This is the one place that turns it into something safe to print: C0 and C1 controls,
// DEL, and therefore every ESC-introduced sequence (CSI, OSC, DCS, …) become visible
// escapes such as `^[`, `^M` or `<U+009B>`. Printable text, wide characters included,
// passes unchanged.

public enum UntrustedText {
    public static func visible(_ text: String) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x00...0x1F:
                out += "^" + String(UnicodeScalar(UInt8(scalar.value + 0x40)))
            case 0x7F:
                out += "^?"
            case 0x80...0x9F:
                out += "<U+" + hex(scalar.value) + ">"
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func hex(_ v: UInt32) -> String {
        let digits = Array("0123456789ABCDEF")
        return String((0..<4).reversed().map { digits[Int((v >> (UInt32($0) * 4)) & 0xF)] })
    }
}
