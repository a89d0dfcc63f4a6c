import SyncCore
import SyncEngine

extension Render {
    /// The help overlay, from the key table: the keys outside the compose line and those in
    /// it side by side when the screen is wide enough, one after the other when not; a help
    /// taller than the screen scrolls (↑/↓, PgUp/PgDn) and says so.
    static func drawHelp(_ g: inout Grid, _ s: ViewState, width: Int, height: Int) {
        let (global, compose) = KeyTable.helpSections(s.keys)
        func rendered(_ rows: [(label: String, help: String)]) -> [(key: String, help: String)] {
            let labelWidth = rows.map { TextWidth.of($0.label) }.max() ?? 0
            return rows.map { ($0.label + String(repeating: " ", count: max(0, labelWidth - TextWidth.of($0.label))) + "  ", $0.help) }
        }
        let left = [("── keys ──", "")] + rendered(global)
        let right = [("── compose line ──", "")] + rendered(compose)
        func measure(_ column: [(key: String, help: String)]) -> Int {
            var widest = 0
            for line in column { widest = max(widest, TextWidth.of(line.key) + TextWidth.of(line.help)) }
            return widest
        }
        let sideBySide: Bool = measure(left) + measure(right) + 7 <= width - 4
        let columns: [[(key: String, help: String)]] = sideBySide ? [left, right] : [left + [("", "")] + right]
        let columnWidths: [Int] = columns.map(measure)
        let content: Int = columnWidths.reduce(0, +) + 3 * (columns.count - 1) + 4
        let boxWidth = min(width - 4, content)
        let rows: Int = columns.map(\.count).max() ?? 0
        let boxHeight = min(height - 2, rows + 3)
        let visibleRows = boxHeight - 3
        let scroll = min(s.helpScroll, max(0, rows - visibleRows))
        let x0 = (width - boxWidth) / 2, y0 = (height - boxHeight) / 2
        g.fill(x: x0, y: y0, width: boxWidth, height: boxHeight, role: .help)
        let more = rows > visibleRows ? " · ↑↓ scroll, \(scroll + 1)–\(scroll + visibleRows) of \(rows)" : ""
        g.put(TextWidth.truncate(" keys — any key closes" + more + " ", to: boxWidth - 2), x: x0 + 1, y: y0, role: .helpKey)
        var x = x0 + 2
        for (c, column) in columns.enumerated() {
            let room = min(columnWidths[c], x0 + boxWidth - 2 - x)
            for (i, line) in column.dropFirst(scroll).prefix(visibleRows).enumerated() where room > 0 {
                let y = y0 + 2 + i
                let key = TextWidth.truncate(line.key, to: room)
                let after = g.put(key, x: x, y: y, role: line.help.isEmpty ? .help : .helpKey, maxX: x + room)
                g.put(TextWidth.truncate(line.help, to: max(0, room - TextWidth.of(key))), x: after, y: y, role: .help, maxX: x + room)
            }
            x += columnWidths[c] + 3
        }
    }
}
