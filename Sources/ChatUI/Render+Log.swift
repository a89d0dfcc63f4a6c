import SyncCore

/// The sync log pane: a title that says the filter, whether the pane has the
/// keys and whether it is scrolled back; below it the rows of `LogPane`, newest at the bottom.
extension Render {
    static func drawLog(_ g: inout Grid, _ s: ViewState, _ l: Layout) {
        let rows = l.stripTop - l.logTop - 1
        let end = s.logFrozenAt.map { max(0, min(s.log.count, s.log.count - (s.logCount - $0))) } ?? s.log.count
        // Scrolled back further than there is: the oldest screenful.
        var lines = LogPane.rows(s.log[..<end], filter: s.logFilter, width: l.width, needed: rows, skip: s.logScroll, emoji: g.emoji)
        if lines.count < rows, s.logScroll > 0 {
            let all = LogPane.rows(s.log[..<end], filter: s.logFilter, width: l.width, needed: rows + s.logScroll, emoji: g.emoji)
            lines = Array(all.suffix(rows))
        }
        let scroll = 0
        let focused = s.focus == .log
        var title = "─ sync log · " + (s.logFilter == .decisions ? "decisions" : "everything") + " (L)"
        if let frozen = s.logFrozenAt {
            let newer = s.logCount - frozen
            title += " · scrolled back" + (newer > 0 ? ", \(newer) new below" : "") + " (End)"
        }
        title += focused ? " · ↑↓ PgUp PgDn End " : " · l hides "
        g.fill(x: 0, y: l.logTop, width: l.width, height: 1, role: .logTitle)
        let shown = TextWidth.truncate(title, to: l.width)
        let after = g.put(shown, x: 0, y: l.logTop, role: focused ? .focus : .logTitle)
        g.put(String(repeating: "─", count: max(0, l.width - after)), x: after, y: l.logTop, role: .logTitle)
        let visible = Array(lines.dropFirst(scroll).prefix(rows))
        for (i, row) in visible.enumerated() {
            let y = l.logTop + visible.count - i  // oldest at the top, the newest last
            g.put(row.text, x: row.indent, y: y, role: .logLine, maxX: l.width)
        }
    }
}
