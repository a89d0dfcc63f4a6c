import SyncCore
import SyncEngine

/// The compose line: a window of the line being written around its cursor.
extension Render {
    static func drawCompose(_ g: inout Grid, _ s: ViewState, _ l: Layout) {
        let y = l.composeY
        g.fill(x: 0, y: y, width: l.width, height: 1, role: .compose)
        // An open prompt keeps its line: what is wrong with its answer shows beside it.
        if let prompt = s.prompt {
            var x = g.put(prompt.label + "> ", x: 0, y: y, role: .focus)
            for cell in composeWindow(prompt.input, cursor: prompt.input.cursor, columns: max(4, l.width - x - 24), emoji: g.emoji) {
                x = g.put(cell.text, x: x, y: y, role: cell.isCursor ? .composeCursor : .compose, maxX: l.width)
            }
            if let error = prompt.error {
                g.put("  " + error + " (Esc: cancel)", x: x, y: y, role: .warning, maxX: l.width)
            } else {
                g.put("  (Enter · Esc)", x: x, y: y, role: .messageMeta, maxX: l.width)
            }
            return
        }
        if let search = s.search, search.editing {
            drawSearchPrompt(&g, s, search, y: y, width: l.width)
            return
        }
        guard let name = s.openRow?.name else {
            g.put("  select a conversation with ↑/↓ and press Enter to write", x: 0, y: y, role: .messageMeta)
            return
        }
        let prompt = g.truncate("to " + name, to: 16) + "> "
        let x0 = g.columns(prompt)
        g.put(prompt, x: 0, y: y, role: .compose)
        let focused = s.focus == .compose
        let line = s.compose
        var x = x0
        for cell in composeWindow(line, cursor: line.cursor, columns: l.width - x0, emoji: g.emoji) {
            x = g.put(cell.text, x: x, y: y, role: cell.isCursor && focused ? .composeCursor : cell.isNewline ? .messageMeta : .compose, maxX: l.width)
        }
        if line.isEmpty, !focused {
            g.put("Tab or Enter to write", x: x0, y: y, role: .messageMeta)
        }
        // Where the keys go, in words (the focus role's colour may not show: NO_COLOR, a
        // monochrome terminal).
        if !focused, let pane = focusWords(s.focus) {
            let words = " keys: " + pane + " "
            let at = l.width - TextWidth.of(words)
            if at > x + 1 { g.put(words, x: at, y: y, role: .messageMeta) }
        }
    }

    /// The pane that has the keys, in words (nil: the compose line, whose cursor says so).
    static func focusWords(_ focus: Focus) -> String? {
        switch focus {
        case .list: return "conversations"
        case .messages: return "messages"
        case .log: return "sync log"
        case .compose: return nil
        }
    }

    /// A notice, or what a server that no longer knows the user needs done, wrapped to at most
    /// two rows of its own above the compose line, which stays visible and editable.
    static func noticeLines(_ s: ViewState, width: Int) -> [String] {
        let text: String
        if case .forgotten(let words) = s.status.link { text = words } else if let notice = s.notice { text = notice } else { return [] }
        let lines = TextWidth.wrap(UntrustedText.visible(text), width: width - 2)
        guard lines.count > 2 else { return lines.map { " " + $0 } }
        return [" " + lines[0], " " + TextWidth.truncate(lines[1...].joined(separator: " "), to: width - 2)]
    }

    static func drawNotice(_ g: inout Grid, _ lines: [String], _ l: Layout) {
        for (i, line) in lines.enumerated() {
            g.fill(x: 0, y: l.noticeY + i, width: l.width, height: 1, role: .warning)
            g.put(line, x: 0, y: l.noticeY + i, role: .warning, maxX: l.width)
        }
    }

    /// What the compose line shows of `line` in `columns`: its characters as they are drawn
    /// (controls made visible, a new line as `⏎`: `isNewline`), scrolled so that the cursor stays in view, the cursor's cell
    /// marked, and a blank cell for the cursor at the end of the line.
    ///
    /// It reads only the characters around the cursor, at most `columns` on each side, never
    /// the whole line, so that a frame costs the same on a 16 KiB line as on a short one;
    /// a long run of zero-width characters just shows fewer of them.
    public static func composeWindow<Line: RandomAccessCollection>(_ line: Line, cursor: Int, columns: Int, emoji: EmojiWidths = .safe) -> [(text: String, isCursor: Bool, isNewline: Bool)]
    where Line.Element == Character, Line.Index == Int {
        guard columns > 0 else { return [] }
        let count = line.count
        let cursorWidth = cursor < count ? max(1, shownWidth(line[cursor], emoji)) : 1
        let room = columns - cursorWidth
        // Walk back from the cursor over what fits before it.
        var start = cursor, used = 0
        while start > 0, cursor - start < room {
            let w = shownWidth(line[start - 1], emoji)
            if used + w > room { break }
            used += w
            start -= 1
        }
        var cells: [(text: String, isCursor: Bool, isNewline: Bool)] = []
        var x = 0
        var i = start
        while i < count, i - start < 2 * columns {
            let shown = visible(line[i])
            let w = TextWidth.of(shown, emoji: emoji)
            if x + w > columns { break }
            cells.append((shown, i == cursor, line[i] == "\n"))
            x += w
            i += 1
        }
        if cursor == count, x < columns { cells.append((" ", true, false)) }
        return cells
    }

    /// A character of the compose line as it is drawn: a control shows as `^@`, `^[`, …, and
    /// a new line of the message (a paste's, or Ctrl-J's) as `⏎`.
    static func visible(_ ch: Character) -> String {
        if ch == "\n" { return UntrustedText.newlineMark }
        return isPlain(ch) ? String(ch) : UntrustedText.visible(String(ch))
    }

    static func shownWidth(_ ch: Character, _ emoji: EmojiWidths = .safe) -> Int {
        if let a = ch.asciiValue, a >= 0x20, a != 0x7F { return 1 }
        return isPlain(ch) ? TextWidth.of(ch, emoji: emoji) : TextWidth.of(visible(ch), emoji: emoji)
    }

    /// No scalar that `UntrustedText` would rewrite: no C0, DEL or C1, and no format
    /// character (the bidi controls are among them), so it is drawn as it is.
    static func isPlain(_ ch: Character) -> Bool {
        ch.unicodeScalars.allSatisfy { s in
            (s.value >= 0x20 && s.value < 0x7F) || (s.value >= 0xA0 && s.properties.generalCategory != .format)
        }
    }
}
