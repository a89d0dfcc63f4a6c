import CWidth

/// Display widths from the C library's `wcwidth` under a UTF-8 locale: the terminal's own
/// idea of how many columns a character takes (CJK and most emoji: 2).
public enum TextWidth {
    /// Must run once before the first measurement (the TUI and the tests call it).
    public static let localeReady: Bool = synchat_use_utf8_locale() == 1

    /// Columns one character takes: 0 (combining), 1 or 2.
    public static func of(_ ch: Character) -> Int {
        _ = localeReady
        guard let first = ch.unicodeScalars.first else { return 0 }
        if first.isASCII { return 1 }
        let w = Int(synchat_wcwidth(first.value))
        if w < 0 { return 1 }  // not printable here: text is sanitised before, count it as one
        if w == 0 { return ch.unicodeScalars.count > 1 ? 1 : 0 }
        // An emoji presentation sequence (e.g. ❤️) draws wide in modern terminals.
        if ch.unicodeScalars.contains(where: { $0.value == 0xFE0F }) { return 2 }
        return min(w, 2)
    }

    public static func of(_ s: String) -> Int { s.reduce(0) { $0 + of($1) } }

    /// The longest prefix of `s` that fits in `columns`, with its width.
    public static func prefix(_ s: String, fitting columns: Int) -> (String, Int) {
        var out = "", used = 0
        for ch in s {
            let w = of(ch)
            if used + w > columns { break }
            out.append(ch)
            used += w
        }
        return (out, used)
    }

    /// Fits `s` in `columns`, ending with `…` when cut.
    public static func truncate(_ s: String, to columns: Int) -> String {
        guard columns > 0 else { return "" }
        if of(s) <= columns { return s }
        return prefix(s, fitting: columns - 1).0 + "…"
    }

    /// Word-wraps by display width; breaks inside a word only when the word alone is too wide.
    public static func wrap(_ s: String, width: Int) -> [String] {
        guard width > 0 else { return [] }
        var lines: [String] = []
        for paragraph in s.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = "", used = 0
            for word in paragraph.split(separator: " ", omittingEmptySubsequences: false) {
                let w = of(String(word))
                let sep = line.isEmpty ? 0 : 1
                if used + sep + w <= width {
                    if sep == 1 { line += " " }
                    line += word
                    used += sep + w
                    continue
                }
                if !line.isEmpty { lines.append(line); line = ""; used = 0 }
                var rest = String(word)
                while of(rest) > width {
                    let (head, _) = prefix(rest, fitting: width)
                    guard !head.isEmpty else { break }
                    lines.append(head)
                    rest = String(rest.dropFirst(head.count))
                }
                line = rest
                used = of(rest)
            }
            lines.append(line)
        }
        return lines
    }
}
