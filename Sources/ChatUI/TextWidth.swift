import CWidth

/// One terminal cell as synchat draws it: one spacing scalar whose `wcwidth` is `width`, and at
/// most four zero-width marks that every terminal keeps in that cell.
public struct DrawnCell: Equatable, Sendable {
    public let text: String
    public let width: Int
    /// One of several cells a single grapheme cluster was drawn in (Indic conjuncts and
    /// spacing marks, halfwidth sound marks): a terminal that lays text out by cluster (kitty,
    /// WezTerm, foot, iTerm2, Windows Terminal) may draw the cluster in fewer columns than
    /// ncursesw and tmux 3.3a. The adapter re-places the cursor after such a cell, so that a
    /// disagreement stays in the cluster's own cells.
    public let isolated: Bool
    /// A whole emoji sequence (`EmojiWidths`), in `width` columns: more than one spacing
    /// character, which ncursesw cannot hold in a cell; the adapter writes it itself.
    public let whole: Bool

    public init(text: String, width: Int, isolated: Bool = false, whole: Bool = false) {
        self.text = text
        self.width = width
        self.isolated = isolated
        self.whole = whole
    }
}

/// Display widths, and what is drawn for each grapheme cluster: the one place that decides both
/// (grid, wrapping, truncation, the compose line and the terminal adapter all come here).
///
/// Measured on this machine (`synchat-bench widths --measure`, the whole corpus of
/// `TestData/width-corpus`): ncursesw lays a string out one cell per scalar with `wcwidth` ≥ 1, the
/// zero-width ones riding in the cell before, and tmux 3.3a advances by the same sum for every
/// class of the corpus but one: after a zero-width joiner it joins the next emoji into the
/// cell (👨‍👩‍👧: tmux 2 columns, ncursesw 6). Other terminals disagree elsewhere too (kitty,
/// WezTerm, foot and iTerm2 draw 👍🏽, ❤️ and flags by grapheme cluster). So synchat draws
/// every cluster in the form all of them agree on, and its width is the sum of those cells:
///
/// - text without emoji machinery: one cell per scalar of `wcwidth` ≥ 1, zero-width marks in
///   the cell before (as ncursesw does), at most four of them (ncursesw's `CCHARW_MAX`);
/// - an emoji sequence (ZWJ, VS15/VS16, skin tone, keycap, tags): its emoji one by one, without
///   the joiners, selectors, modifiers, keycap marks and tags (UTS #51's fallback for a
///   sequence a terminal cannot draw); a flag: its two region letters (`🇺🇸` → `US`);
/// - format characters (Cf: ZWSP, ZWNJ, soft hyphen, BOM, …), line and paragraph separators,
///   variation selectors: nothing (WeeChat's choice for U+00AD and U+200B);
/// - a mark with nothing to ride on: on a dotted circle `◌`; a code point the C library
///   calls unprintable (unassigned, noncharacter): `�`.
///
/// Where the terminal was found to draw emoji sequences whole (`EmojiWidths`, told by the
/// caller, default `.safe`), an emoji sequence is one cell of the columns that terminal gives
/// it instead; everything else is drawn as above.
public enum TextWidth {
    /// Must run once before the first measurement (the TUI and the tests call it).
    public static let localeReady: Bool = synchat_use_utf8_locale() == 1

    /// The cells synchat draws for one grapheme cluster (none for a format character).
    public static func cells(_ ch: Character, emoji: EmojiWidths = .safe) -> [DrawnCell] {
        _ = localeReady
        let scalars = ch.unicodeScalars
        if scalars.count == 1, let s = scalars.first, s.isASCII { return [DrawnCell(text: String(ch), width: 1)] }
        if let advance = emoji.wholeAdvance(ch), advance >= 1 { return [DrawnCell(text: String(ch), width: advance, whole: true)] }
        if scalars.contains(where: isRegionalIndicator) {
            return scalars.filter(isRegionalIndicator).map { DrawnCell(text: String(Character(Unicode.Scalar($0.value - 0x1F1E6 + 0x41)!)), width: 1) }
        }
        if scalars.contains(where: isEmojiMachinery) {
            // Each component's emoji alone: what follows a joiner starts a new one.
            var out: [DrawnCell] = []
            var startOfComponent = true
            for s in scalars {
                if s.value == 0x200D { startOfComponent = true; continue }
                guard startOfComponent, !isEmojiMachinery(s), !isDropped(s) else { continue }
                startOfComponent = false
                let w = Int(synchat_wcwidth(s.value))
                if w >= 1 { out.append(DrawnCell(text: String(Character(s)), width: min(w, 2))) }
                else if w < 0 { out.append(replacement) }
            }
            return out
        }
        var out: [DrawnCell] = []
        var cell = String.UnicodeScalarView(), cellWidth = 0, marks = 0
        func flush() {
            // A mark that does not extend what it rides on (a lone Hangul vowel on ◌) stays out:
            // a cell is one grapheme cluster.
            if let first = String(cell).first { out.append(DrawnCell(text: String(first), width: cellWidth)) }
            cell = String.UnicodeScalarView()
            marks = 0
        }
        for s in scalars where !isDropped(s) {
            let w = Int(synchat_wcwidth(s.value))
            if w >= 1 {
                flush()
                cell.append(s)
                cellWidth = min(w, 2)
            } else if w == 0 {
                if cell.isEmpty {
                    // Nothing to ride on. A lone Hangul vowel or final goes on the fillers, as
                    // Unicode §3.12 shows isolated jamo; anything else on a dotted circle.
                    switch s.value {
                    case 0x1160...0x11A7, 0xD7B0...0xD7C6: cell.append("\u{115F}"); cellWidth = 2
                    case 0x11A8...0x11FF, 0xD7CB...0xD7FB: cell.append("\u{115F}"); cell.append("\u{1160}"); cellWidth = 2
                    default: cell.append("\u{25CC}"); cellWidth = 1
                    }
                }
                if marks < 4 { cell.append(s); marks += 1 }
            } else {
                flush()
                out.append(replacement)
            }
        }
        flush()
        if out.count > 1 { return out.map { DrawnCell(text: $0.text, width: $0.width, isolated: true) } }
        return out
    }

    static let replacement = DrawnCell(text: "\u{FFFD}", width: 1)

    static func isRegionalIndicator(_ s: Unicode.Scalar) -> Bool { (0x1F1E6...0x1F1FF).contains(s.value) }

    /// Scalars that make an emoji sequence: the joiner, the presentation selectors, skin tones,
    /// the keycap mark and tags.
    static func isEmojiMachinery(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x200D, 0xFE0E, 0xFE0F, 0x1F3FB...0x1F3FF, 0x20E3, 0xE0020...0xE007F: return true
        default: return false
        }
    }

    /// Never drawn: format characters, line and paragraph separators, variation selectors.
    static func isDropped(_ s: Unicode.Scalar) -> Bool {
        switch s.properties.generalCategory {
        case .format, .lineSeparator, .paragraphSeparator: return true
        default: return (0xFE00...0xFE0F).contains(s.value) || (0xE0100...0xE01EF).contains(s.value)
        }
    }

    /// Columns one grapheme cluster takes: the sum of its drawn cells.
    public static func of(_ ch: Character, emoji: EmojiWidths = .safe) -> Int {
        if ch.isASCII { return 1 }
        return cells(ch, emoji: emoji).reduce(0) { $0 + $1.width }
    }

    public static func of(_ s: String, emoji: EmojiWidths = .safe) -> Int { s.reduce(0) { $0 + of($1, emoji: emoji) } }

    /// The longest prefix of `s` that fits in `columns`, with its width.
    public static func prefix(_ s: String, fitting columns: Int, emoji: EmojiWidths = .safe) -> (String, Int) {
        var out = "", used = 0
        for ch in s {
            let w = of(ch, emoji: emoji)
            if used + w > columns { break }
            out.append(ch)
            used += w
        }
        return (out, used)
    }

    /// Fits `s` in `columns`, ending with `…` when cut.
    public static func truncate(_ s: String, to columns: Int, emoji: EmojiWidths = .safe) -> String {
        guard columns > 0 else { return "" }
        if of(s, emoji: emoji) <= columns { return s }
        return prefix(s, fitting: columns - 1, emoji: emoji).0 + "…"
    }

    /// Word-wraps by display width; breaks inside a word only when the word alone is too wide.
    public static func wrap(_ s: String, width: Int, emoji: EmojiWidths = .safe) -> [String] {
        guard width > 0 else { return [] }
        if let lines = wrapPrintableASCII(s, width: width) { return lines }
        return wrapCharacters(s, width: width, emoji: emoji)
    }

    /// The same wrap for text of printable ASCII only (most log lines and many messages),
    /// on bytes: one column a byte, no grapheme clusters to walk. Nil for any other text.
    static func wrapPrintableASCII(_ s: String, width: Int) -> [String]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(s.utf8.count)
        for b in s.utf8 {
            guard b >= 0x20, b < 0x7F else { return nil }
            bytes.append(b)
        }
        var lines: [String] = []
        var line: [UInt8] = []
        func text(_ b: ArraySlice<UInt8>) -> String { String(decoding: b, as: UTF8.self) }
        for word in bytes.split(separator: 0x20, omittingEmptySubsequences: false) {
            let sep = line.isEmpty ? 0 : 1
            if line.count + sep + word.count <= width {
                if sep == 1 { line.append(0x20) }
                line.append(contentsOf: word)
                continue
            }
            if !line.isEmpty { lines.append(text(line[...])); line = [] }
            var rest = word[...]
            while rest.count > width {
                lines.append(text(rest.prefix(width)))
                rest = rest.dropFirst(width)
            }
            line = Array(rest)
        }
        lines.append(text(line[...]))
        return lines
    }

    /// How many rows `wrap` gives, without building them (cheap for printable ASCII).
    public static func wrappedRowCount(_ s: String, width: Int, emoji: EmojiWidths = .safe) -> Int {
        guard width > 0 else { return 0 }
        // The same greedy walk as `wrapPrintableASCII`, counting: a line is empty exactly
        // when its length (`used`, one column a byte) is 0.
        var rows = 1, used = 0
        for word in s.utf8.split(separator: 0x20, omittingEmptySubsequences: false) {
            var n = 0
            for b in word {
                guard b >= 0x20, b < 0x7F else { return wrap(s, width: width, emoji: emoji).count }
                n += 1
            }
            let sep = used == 0 ? 0 : 1
            if used + sep + n <= width {
                used += sep + n
                continue
            }
            if used > 0 { rows += 1; used = 0 }
            var rest = n
            while rest > width { rows += 1; rest -= width }
            used = rest
        }
        return rows
    }

    static func wrapCharacters(_ s: String, width: Int, emoji: EmojiWidths = .safe) -> [String] {
        var lines: [String] = []
        for paragraph in s.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = "", used = 0
            for word in paragraph.split(separator: " ", omittingEmptySubsequences: false) {
                let w = of(String(word), emoji: emoji)
                let sep = line.isEmpty ? 0 : 1
                if used + sep + w <= width {
                    if sep == 1 { line += " " }
                    line += word
                    used += sep + w
                    continue
                }
                if !line.isEmpty { lines.append(line); line = ""; used = 0 }
                var rest = String(word)
                while of(rest, emoji: emoji) > width {
                    let (head, _) = prefix(rest, fitting: width, emoji: emoji)
                    guard !head.isEmpty else { break }
                    lines.append(head)
                    rest = String(rest.dropFirst(head.count))
                }
                line = rest
                used = of(rest, emoji: emoji)
            }
            lines.append(line)
        }
        return lines
    }
}
