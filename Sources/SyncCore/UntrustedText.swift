// Untrusted text (message bodies, display names) must never reach a terminal raw (docs/screen.md).
// This is the one place that turns it into something safe to print: C0 and C1 controls,
// DEL, and therefore every ESC-introduced sequence (CSI, OSC, DCS, …), and the bidi
// controls that reorder text, become visible escapes such as `^[`, `^M`, `<U+009B>` or
// `<U+202E>`. Printable text, wide characters and joiners included, passes unchanged.

public enum UntrustedText {
    /// What a message's new lines (LF, and CRLF) become.
    public enum Newlines: Sendable {
        /// `^J` (and `^M^J`), as every other control: one line of a log, a file's error.
        case escaped
        /// One LF each, for a pane that starts a new line there (a lone CR stays `^M`).
        case kept
        /// ` ⏎ ` each, for a place that has one row for the whole text (a banner, a search hit).
        case marked
    }

    /// The mark that stands for a message's new line where it has one row (`Newlines.marked`)
    /// and in the compose line.
    public static let newlineMark = "⏎"

    public static func visible(_ text: String) -> String { visible(text, newlines: .escaped) }

    public static func visible(_ text: String, newlines: Newlines) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        let scalars = text.unicodeScalars
        var i = scalars.startIndex
        while i < scalars.endIndex {
            let scalar = scalars[i]
            i = scalars.index(after: i)
            if newlines != .escaped {
                let crlf = scalar == "\r" && i < scalars.endIndex && scalars[i] == "\n"
                if scalar == "\n" || crlf {
                    if crlf { i = scalars.index(after: i) }
                    out += newlines == .kept ? "\n" : " " + newlineMark + " "
                    continue
                }
            }
            switch scalar.value {
            case 0x00...0x1F:
                out += "^" + String(UnicodeScalar(UInt8(scalar.value + 0x40)))
            case 0x7F:
                out += "^?"
            case 0x80...0x9F:
                out += "<U+" + hex(scalar.value) + ">"
            // Bidirectional controls reorder what follows on screen (a name could show one
            // thing and be another): they are made visible too.
            case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:
                out += "<U+" + hex(scalar.value) + ">"
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Text for a place that shows no escape and takes no control: a desktop notification's
    /// title and body. What `visible` would make visible is dropped here (C0 and C1
    /// controls, DEL, so every ESC-introduced sequence and BEL, and the bidi controls); new
    /// lines, tabs and the line and paragraph separators become one space; runs of spaces
    /// one; cut to `limit` characters with `…`.
    public static func plain(_ text: String, limit: Int) -> String {
        var out = String.UnicodeScalarView()
        var space = false
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x09, 0x0A, 0x0D, 0x2028, 0x2029, 0x20:
                space = !out.isEmpty
                continue
            case 0x00...0x1F, 0x7F, 0x80...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:
                continue
            default:
                if space { out.append(" ") }
                space = false
                out.append(scalar)
            }
        }
        let plain = String(out)
        guard plain.count > limit else { return plain }
        return String(plain.prefix(max(0, limit - 1))) + "…"
    }

    /// The longest text a log line quotes whole, in characters.
    public static let briefLength = 60

    /// Text as one line of a log quotes it: made visible, and cut to its first `briefLength`
    /// characters with its size when longer (`abc… (16384 bytes)`): a 16 KiB message is not
    /// a page of log.
    /// `quoted`: in double quotes (`"abc…" (16384 bytes)`), as a directive's text.
    public static func brief(_ text: String, quoted: Bool = false) -> String {
        let shown = visible(text)
        let q = quoted ? "\"" : ""
        guard shown.count > briefLength else { return q + shown + q }
        return "\(q)\(shown.prefix(briefLength))…\(q) (\(Words.count(text.utf8.count, "byte")))"
    }

    private static func hex(_ v: UInt32) -> String {
        let digits = Array("0123456789ABCDEF")
        return String((0..<4).reversed().map { digits[Int((v >> (UInt32($0) * 4)) & 0xF)] })
    }
}

extension UntrustedText {
    /// Where the first byte that is not UTF-8 is: its 1-based line, and its 1-based byte
    /// column in that line. Nil when all of `bytes` is UTF-8. For files: an error names the line.
    public static func firstInvalidUTF8(_ bytes: [UInt8]) -> (line: Int, column: Int)? {
        var line = 1
        var start = 0
        while start <= bytes.count {
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            var decoder = UTF8()
            var iterator = bytes[start..<end].makeIterator()
            var consumed = 0
            decoding: while true {
                switch decoder.decode(&iterator) {
                case .scalarValue(let s): consumed += UTF8.width(s)
                case .emptyInput: break decoding
                case .error: return (line, consumed + 1)
                }
            }
            line += 1
            start = end + 1
        }
        return nil
    }
}
