import Foundation

/// What a message of a width run must show: its body and, for the display-name part, the
/// names its sender may carry (the name it had when the message was stored, or the next one).
public struct ExpectedMessage: Sendable {
    public let index: Int
    public let body: String
    public let senders: [String]?
    public let entry: CorpusEntry?
}

/// Judges a screen captured from tmux, knowing only what the README promises about the layout
/// (a title row that ends in `? help`, the list's border `│` in one column, the sync log's
/// timestamped rows, the compose prompt, the status bar) and the columns **tmux** gives each
/// character, measured by `TerminalProbe`. It never asks synchat's width model.
///
/// A row is read by grapheme clusters: a cluster of several scalars (an emoji sequence drawn
/// whole, an Indic conjunct, a letter and its marks) counts the columns the terminal advanced
/// for that same sequence printed raw (`clusterAdvance`, measured as a `printf` of it leaves
/// the cursor), which is what the pane holds if synchat wrote it as the terminal takes it.
public struct ScreenJudge {
    public let width: Int
    public let height: Int
    /// Columns the terminal advances for each scalar (measured on that terminal).
    public var advance: [UInt32: Int]
    /// Columns the terminal advances for each cluster of several scalars printed at once.
    public var clusterAdvance: [String: Int] = [:]
    /// Whether zero-width joiners may reach the terminal: synchat draws emoji sequences whole
    /// (`--emoji` auto or full), and what follows a joiner is measured with it.
    public var joinersAllowed = false
    public var expected: [Int: ExpectedMessage]

    public init(width: Int, height: Int, advance: [UInt32: Int], expected: [Int: ExpectedMessage]) {
        self.width = width
        self.height = height
        self.advance = advance
        self.expected = expected
    }

    /// Clusters of several scalars on `screen` the judge has no measurement for.
    public func unmeasuredClusters(_ screen: String) -> Set<String> {
        Set(screen.filter { $0.unicodeScalars.count > 1 && $0 != "\r\n" }.map(String.init).filter { clusterAdvance[$0] == nil })
    }

    /// Measures, on the terminal (`TerminalProbe.measureInTmux` through `probe`), every scalar
    /// and every cluster of several scalars that `screens` hold and the judge has not measured.
    /// The clusters of `originals` (the texts the screens show) are measured as a `printf` of
    /// each leaves them: the columns it advances, filed under what the pane then holds
    /// (`TerminalProbe.heldInTmux`), which may be less than was printed.
    public mutating func measure(_ screens: [String], originals: [String] = [], probe: [String]) throws {
        let sent = Set(originals.flatMap { $0.filter { $0.unicodeScalars.count > 1 && $0 != "\r\n" }.map(String.init) }).sorted()
        if !sent.isEmpty {
            let held = try TerminalProbe.heldInTmux(sent)
            let advances = try TerminalProbe.measureInTmux(sent, probe: probe)
            for (h, a) in zip(held, advances) where !h.isEmpty && clusterAdvance[h] == nil {
                if let a { clusterAdvance[h] = a }
            }
        }
        var scalars = Set<UInt32>(), clusters = Set<String>()
        for t in screens + originals {
            scalars.formUnion(unmeasured(t))
            clusters.formUnion(unmeasuredClusters(t))
        }
        let singles = scalars.sorted(), several = clusters.sorted()
        let advances = try TerminalProbe.measureInTmux(singles.map { String(Character(Unicode.Scalar($0)!)) } + several, probe: probe)
        for (s, a) in zip(singles, advances) { advance[s] = a ?? 1 }
        for (c, a) in zip(several, advances.dropFirst(singles.count)) { clusterAdvance[c] = a ?? columns(c.unicodeScalars) }
    }

    func columns(_ scalars: String.UnicodeScalarView) -> Int { scalars.reduce(0) { $0 + (advance[$1.value] ?? 1) } }

    /// Columns the terminal gives one cluster: measured whole, or (a single scalar) by itself.
    func columns(_ ch: Character) -> Int {
        let scalars = ch.unicodeScalars
        if scalars.count > 1, let a = clusterAdvance[String(ch)] { return a }
        return scalars.reduce(0) { $0 + (advance[$1.value] ?? 1) }
    }

    public struct Verdict {
        public var problems: [String] = []
        /// Messages seen whole on this screen, top to bottom.
        public var messages: [Int] = []
        /// Messages seen whole whose text was not readable (with why).
        public var unreadable: [(Int, String)] = []
        public var broken: Bool { !problems.isEmpty || !unreadable.isEmpty }
    }

    /// Scalars of `screen` the judge has no measurement for.
    public func unmeasured(_ screen: String) -> Set<UInt32> {
        Set(screen.unicodeScalars.map(\.value).filter { advance[$0] == nil && $0 != 0x0A })
    }

    func columns(_ row: String) -> Int { row.reduce(0) { $0 + columns($1) } }

    public func judge(_ screen: String) -> Verdict {
        var v = Verdict()
        var rows = screen.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if screen.hasSuffix("\n") { rows.removeLast() }
        guard rows.count == height else {
            v.problems.append("the screen has \(rows.count) rows, not \(height)")
            return v
        }
        if !joinersAllowed, screen.unicodeScalars.contains("\u{200D}") {
            v.problems.append("a zero-width joiner reached the terminal (tmux joins what follows it)")
        }
        for (y, row) in rows.enumerated() where columns(row) > width {
            v.problems.append("a row wider than the terminal: row \(y) is \(columns(row)) columns")
        }
        // Title row: " Conversations", the border, and "? help" ending in the last column but one.
        let title = rows[0]
        guard title.hasPrefix(" Conversations"), let borderIndex = title.firstIndex(of: "│") else {
            v.problems.append("title row broken: \(title)")
            return v
        }
        let border = columns(String(title[..<borderIndex]))
        if !title.hasSuffix("? help") || columns(title) != width - 1 {
            v.problems.append("title row: \"? help\" not at the right edge: \(columns(title)) columns: \(title)")
        }
        // Bottom up: status bar (one or two rows), compose row, sync log.
        var y = height - 1
        var statusRows = 0
        while y > 0, statusRows < 2, isStatusRow(rows[y]) { statusRows += 1; y -= 1 }
        if statusRows == 0 || !rows[y + 1].contains("push: ") || !(rows[y + 1].hasPrefix(" foreground │ ") || rows[y + 1].hasPrefix(" background │ ")) {
            v.problems.append("status bar broken: \(rows[height - 1])")
        }
        let composeY = y
        // The pane that has the keys, in words at the row's end, is not the line's content.
        let compose = rows[composeY].replacingOccurrences(of: #"\s+keys: (conversations|messages|sync log)$"#, with: "", options: .regularExpression)
        if !(compose.unicodeScalars.starts(with: "to ".unicodeScalars) && (compose.hasSuffix("> Tab or Enter to write") || compose.hasSuffix(">"))) && !compose.hasPrefix("  select a conversation") {
            v.problems.append("compose row broken: \(compose)")
        }
        let logY = rows.firstIndex { $0.hasPrefix("─ sync log") }
        if let logY {
            if columns(rows[logY]) != width { v.problems.append("sync log title is not \(width) columns wide") }
            // A log row starts with its time, or continues the line above it, indented under
            // its text (a long line wraps); the first row may continue one scrolled above.
            for ly in (logY + 1)..<composeY where !rows[ly].isEmpty {
                let timed = rows[ly].range(of: #"^\d\d:\d\d:\d\d(\.\d\d\d)? "#, options: .regularExpression) != nil
                let continues = rows[ly].hasPrefix("         ") && rows[ly].dropFirst(9).first != " "
                if !timed && !continues {
                    v.problems.append("a log row neither starting with its time nor continuing the one above: row \(ly): \(rows[ly])")
                }
                if columns(rows[ly]) > width { v.problems.append("a log row wider than the screen: row \(ly)") }
            }
        }
        let paneBottom = logY ?? composeY
        // The border on every row of the panes, and what is right of it.
        var pane: [(y: Int, text: String)] = []
        for py in 1..<paneBottom {
            var col = 0
            var rest: String?
            var chars = rows[py][...]
            while let c = chars.first {
                if c == "│" && col == border { rest = String(chars.dropFirst()); break }
                if col > border { break }
                col += columns(c)
                chars = chars.dropFirst()
            }
            guard let rest else {
                v.problems.append("the border is not in its column: row \(py): \(rows[py])")
                continue
            }
            pane.append((py, rest))
        }
        checkMessages(pane, &v)
        return v
    }

    func isStatusRow(_ row: String) -> Bool {
        row.hasPrefix(" ") && row.unicodeScalars.allSatisfy { ($0.value >= 0x20 && $0.value < 0x7F) || $0 == "│" }
            && (row.contains(" │ ") || row.hasPrefix(" catch-up") || row.hasPrefix(" foreground") || row.hasPrefix(" background"))
    }

    /// Message rows: " HH:MM c TEXT", continuation rows "         TEXT", day separators, blanks.
    func checkMessages(_ pane: [(y: Int, text: String)], _ v: inout Verdict) {
        var current: [String]? = nil
        var whole: [[String]] = []
        for (y, text) in pane {
            if text.range(of: #"^ \d\d:\d\d . "#, options: .regularExpression) != nil {
                if let c = current { whole.append(c) }
                current = [String(text.dropFirst(9))]
            } else if text.hasPrefix("         "), text.contains(where: { $0 != " " }) {
                // A continuation, indented under the body (or by two under a long sender): read
                // from its first character. One of a message above the pane is skipped.
                current?.append(String(text.dropFirst(9).drop { $0 == " " }))
            } else if text.allSatisfy({ $0 == " " }) || text.contains("── day ") || text.hasPrefix(" no messages yet") || text.hasPrefix(" waiting for contacts")
                        || text.hasPrefix(" background · badge") || text.hasPrefix("  🔔 ") {
                if let c = current { whole.append(c) }
                current = nil
            } else {
                v.problems.append("a pane row that is no message: row \(y): \(text)")
                if let c = current { whole.append(c) }
                current = nil
            }
        }
        if let c = current { whole.append(c) }
        guard !expected.isEmpty else { return }
        for rowsOfMessage in whole {
            let full = rowsOfMessage.joined()
            guard let (k, sender, body) = parse(full) else {
                v.unreadable.append((-1, "no [k|…|k] markers: \(full)"))
                continue
            }
            v.messages.append(k)
            guard let e = expected[k] else { v.unreadable.append((k, "unknown message \(k)")); continue }
            let undrawable: (Unicode.Scalar) -> Bool = { self.advance[$0.value] == 0 }
            if let why = Self.unreadable(shown: body, original: e.body, rowsAtNewLines: true, undrawable: undrawable) {
                v.unreadable.append((k, "body \(why): \(full)"))
            }
            if let senders = e.senders, !senders.contains(where: { Self.unreadable(shown: sender, original: $0, undrawable: undrawable) == nil }) {
                v.unreadable.append((k, "sender \(Self.unreadable(shown: sender, original: senders[0], undrawable: undrawable) ?? ""): \(full)"))
            }
        }
        if v.messages != v.messages.sorted() || Set(v.messages).count != v.messages.count {
            v.problems.append("messages out of order: \(v.messages)")
        }
    }

    /// "SENDER: [k|BODY|k]" → (k, SENDER, BODY), on scalars (a mark in BODY may ride on the
    /// marker's `|`); the space after the colon may have gone with a wrap.
    func parse(_ full: String) -> (Int, String, String)? {
        let u = Array(full.unicodeScalars)
        guard u.last == "]", let bar = u.lastIndex(of: "|") else { return nil }
        guard let k = Int(String(String.UnicodeScalarView(u[(bar + 1)..<(u.count - 1)]))) else { return nil }
        let marker = Array("[\(k)|".unicodeScalars)
        guard let open = (0..<max(0, bar - marker.count + 1)).first(where: { i in
            i > 0 && u[i - 1] == ":" || i > 1 && u[i - 1] == " " && u[i - 2] == ":" ? Array(u[i..<(i + marker.count)]) == marker : false
        }) else { return nil }
        let senderEnd = u[open - 1] == ":" ? open - 1 : open - 2
        return (k, String(String.UnicodeScalarView(u[..<senderEnd])), String(String.UnicodeScalarView(u[(open + marker.count)..<bar])))
    }

    // MARK: - Readable

    /// What docs/screen.md promises for untrusted text, written out again here (not imported): C0 and
    /// DEL as `^X`, C1 and the bidi controls as `<U+XXXX>`; in a message's body
    /// (`rowsAtNewLines`) an LF or a CRLF starts a new row instead, and shows as nothing.
    public static func madeVisible(_ s: String, rowsAtNewLines: Bool = false) -> String {
        var out = ""
        var scalars = Array(s.unicodeScalars)
        if rowsAtNewLines {
            var kept: [Unicode.Scalar] = []
            for (i, c) in scalars.enumerated() where !(c == "\n" || c == "\r" && i + 1 < scalars.count && scalars[i + 1] == "\n") {
                kept.append(c)
            }
            scalars = kept
        }
        for c in scalars {
            switch c.value {
            case 0x00...0x1F: out += "^" + String(Character(Unicode.Scalar(UInt8(c.value + 0x40))))
            case 0x7F: out += "^?"
            case 0x80...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:
                out += "<U+" + String(format: "%04X", c.value) + ">"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    /// Placeholders a screen may show instead of what it cannot draw the same everywhere: the
    /// replacement character, the dotted circle a lone mark is shown on, the ellipsis of a cut,
    /// and the Hangul fillers that carry a lone vowel or final jamo (Unicode §3.12).
    static let placeholders: Set<UInt32> = [0xFFFD, 0x25CC, 0x2026, 0x115F, 0x1160]

    static func isKeep(_ s: Unicode.Scalar) -> Bool {
        switch s.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .decimalNumber, .letterNumber, .otherNumber, .spacingMark: return true
        default: return false
        }
    }

    /// Nil when `shown` reads as `original` made visible: nothing on screen that the text did not
    /// hold (bar spaces and placeholders, and a flag's letters), in its order, and every letter,
    /// digit and spacing mark of it there, bar those the terminal itself draws in no column
    /// (`undrawable`: measured, e.g. a letter newer than its tables). Otherwise why not.
    public static func unreadable(shown: String, original: String, rowsAtNewLines: Bool = false, undrawable: (Unicode.Scalar) -> Bool = { _ in false }) -> String? {
        let orig = Array(madeVisible(original, rowsAtNewLines: rowsAtNewLines).unicodeScalars)
        let hasFlags = orig.contains { (0x1F1E6...0x1F1FF).contains($0.value) }
        func isFlagLetter(_ s: Unicode.Scalar) -> Bool { hasFlags && (0x41...0x5A).contains(s.value) }
        let own = Set(orig.map(\.value))
        let shownScalars = shown.unicodeScalars.filter { $0 != " " && !(placeholders.contains($0.value) && !own.contains($0.value)) }
        // Nothing foreign, in order.
        var i = 0
        for s in shownScalars {
            let from = i
            while i < orig.count, orig[i] != s { i += 1 }
            if i == orig.count {
                if isFlagLetter(s), let ri = orig[from...].firstIndex(where: { (0x1F1E6...0x1F1FF).contains($0.value) }) {
                    // The letter stands for a regional indicator of the text (a flag split, or
                    // one left alone beside whole flags): the rest goes on after it.
                    i = ri + 1
                    continue
                }
                return "shows \(Self.describe(s)), which the text does not hold (or out of order)"
            }
            i += 1
        }
        // Nothing readable lost.
        let want = orig.filter { isKeep($0) && !undrawable($0) }
        let have = shownScalars.filter { isKeep($0) && !undrawable($0) }
        var j = 0
        for s in have {
            if j < want.count, want[j] == s { j += 1; continue }
            if isFlagLetter(s) { continue }
            return "shows \(Self.describe(s)) where \(j < want.count ? Self.describe(want[j]) : "nothing") was expected"
        }
        if j < want.count { return "lost \(Self.describe(want[j])) and what follows" }
        return nil
    }

    static func describe(_ s: Unicode.Scalar) -> String { "U+" + String(format: "%04X", s.value) }
}
