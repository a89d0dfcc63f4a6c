import SyncCore
import SyncEngine

/// Pure rendering (docs/design.md): the whole screen from the view state and a
/// size, as a grid of cells with roles. No terminal, no I/O.
public enum Render {
    public static let minWidth = 60
    public static let minHeight = 16

    public static func screen(_ s: ViewState, width: Int, height: Int) -> Grid {
        var g = Grid(width: width, height: height, emoji: s.emojiWidths)
        guard width >= minWidth, height >= minHeight else {
            // The size it needs first, wrapped by words: a narrow terminal still reads it all.
            let msg = "synchat needs \(minWidth)x\(minHeight); terminal too small (\(width)x\(height))"
            for (y, line) in TextWidth.wrap(msg, width: width).prefix(height).enumerated() {
                g.put(line, x: 0, y: y, role: .warning)
            }
            return g
        }
        let statusRows = statusLines(s.status, width: width)
        let notice = noticeLines(s, width: width)
        let layout = Layout(width: width, height: height, showLog: s.showLog, logFocused: s.focus == .log, statusRows: statusRows.count,
                            stripRows: s.showTimeline ? Self.stripRows : 0, noticeRows: notice.count)
        drawTitles(&g, s, layout)
        drawList(&g, s, layout)
        if s.showInspector { drawInspector(&g, s, layout) }
        else if let search = s.search, search.scope == .all, search.query != nil { drawSearchResults(&g, s, search, layout) }
        else { drawMessages(&g, s, layout) }
        if s.showLog { drawLog(&g, s, layout) }
        if s.showTimeline { drawTimeline(&g, s, layout) }
        drawNotice(&g, notice, layout)
        drawCompose(&g, s, layout)
        for (i, line) in statusRows.enumerated() {
            drawStatusLine(&g, line, y: height - statusRows.count + i, width: width)
        }
        if s.showHelp { drawHelp(&g, s, width: width, height: height) }
        return g
    }

    /// A frame drawn before, and the state it was drawn from.
    public struct Frame: Sendable {
        public let state: ViewState
        public let grid: Grid
        public init(state: ViewState, grid: Grid) {
            self.state = state
            self.grid = grid
        }
    }

    /// `screen(s, width:, height:)`, taken from `previous` when only the world's clock or the
    /// line being written moved since: the previous grid with the compose row and the status
    /// rows drawn anew. At rest the clock ticks once a second and nothing else changes; a key
    /// typed changes the compose line alone. Drawn whole, each would cost a whole screen's
    /// wrapping and widths for one or three rows.
    public static func screen(_ s: ViewState, width: Int, height: Int, after previous: Frame?) -> Grid {
        guard let previous, previous.grid.width == width, previous.grid.height == height else { return screen(s, width: width, height: height) }
        var g = previous.grid
        guard redraw(&g, s, since: previous.state) != nil else { return screen(s, width: width, height: height) }
        return g
    }

    /// The rows a `redraw` drew anew, each with what it held before.
    public typealias RedrawnRows = [(y: Int, before: [Cell])]

    /// `screen(s, …)` made from `g`, the grid drawn for `previous`, in place: when only the
    /// clock or the line being written moved, the compose row (when it moved) and the status
    /// rows (when the clock moved) are drawn anew and returned with what they held (the terminal compares those rows alone, and a
    /// grid nobody else holds is not copied, so a key typed neither copies nor compares
    /// the whole screen). Nil, with `g` untouched, when the screen must be drawn whole.
    public static func redraw(_ g: inout Grid, _ s: ViewState, since previous: ViewState) -> RedrawnRows? {
        let width = g.width, height = g.height
        guard width >= minWidth, height >= minHeight, let moved = partsMoved(s, since: previous),
              !moved.clock || !clockAbove(s), !moved.compose || !s.showHelp
        else { return nil }
        let statusRows = statusLines(s.status, width: width)
        let layout = Layout(width: width, height: height, showLog: s.showLog, logFocused: s.focus == .log,
                            statusRows: statusRows.count, stripRows: s.showTimeline ? Self.stripRows : 0,
                            noticeRows: noticeLines(s, width: width).count)
        // The status rows show `s.status` alone, which is the last frame's but for the clock:
        // drawn again only when the clock moved (a key typed changes the compose row alone).
        var rows = moved.compose ? [layout.composeY] : []
        if moved.clock { rows += (0..<statusRows.count).map { height - statusRows.count + $0 } }
        // Copies of the rows (a slice would share the grid's storage, and the first change
        // would copy the whole grid).
        let redrawn = rows.map { (y: $0, before: Array(g.row($0))) }
        if moved.compose { drawCompose(&g, s, layout) }
        if moved.clock {
            for (i, line) in statusRows.enumerated() {
                drawStatusLine(&g, line, y: height - statusRows.count + i, width: width)
            }
        }
        return redrawn
    }

    /// Whether something above the status bar reads the clock: the inspector's ages, the
    /// timeline's last hour, a failed message's `retry in`; the help overlay covers the bar.
    static func clockAbove(_ s: ViewState) -> Bool {
        if s.showInspector || s.showTimeline || s.showHelp { return true }
        guard let open = s.open else { return false }
        return (s.outbox[open] ?? []).contains { if case .failed = $0.state { return true } else { return false } }
    }

    /// What moved since `previous` when nothing but the clock and the open conversation's
    /// draft did; nil when anything else did.
    static func partsMoved(_ s: ViewState, since previous: ViewState) -> (clock: Bool, compose: Bool)? {
        var same = s
        same.status.clock = previous.status.clock
        if let open = s.open { same.drafts[open] = previous.drafts[open] }
        guard same == previous else { return nil }
        return (s.status.clock != previous.status.clock, s.compose != previous.compose)
    }

    struct Layout {
        let width, height: Int
        let listWidth: Int
        let paneX: Int
        let contentTop = 1
        let contentBottom: Int  // exclusive
        let logTop: Int
        let composeY: Int

        /// The timeline strip's first row (its title), when `T` shows it: just above the
        /// notice, or the compose line.
        let stripTop: Int
        /// The notice's first row, just above the compose line (`composeY` when there is none):
        /// a notice takes rows of its own, so the line being written stays in view.
        let noticeY: Int

        init(width: Int, height: Int, showLog: Bool, logFocused: Bool = false, statusRows: Int, stripRows: Int = 0, noticeRows: Int = 0) {
            self.width = width
            self.height = height
            listWidth = max(18, min(30, width / 4))
            paneX = listWidth + 1
            composeY = height - 1 - statusRows
            noticeY = composeY - noticeRows
            stripTop = noticeY - stripRows
            // The log takes a third of the screen, half while it has the keys.
            let logHeight = showLog ? max(4, (height - 3 - stripRows) / (logFocused ? 2 : 3)) : 0
            logTop = stripTop - logHeight
            contentBottom = logTop
        }

        var paneWidth: Int { width - paneX }
        var paneHeight: Int { contentBottom - contentTop }
    }

    // MARK: - Panes

    static func drawTitles(_ g: inout Grid, _ s: ViewState, _ l: Layout) {
        g.fill(x: 0, y: 0, width: l.width, height: 1, role: .title)
        // The pane that has the keys says so: its title in the focus role.
        g.put(" Conversations", x: 0, y: 0, role: s.focus == .list ? .focus : .title, maxX: l.listWidth)
        g.put("│", x: l.listWidth, y: 0, role: .border)
        var name = s.showInspector ? " inspector — i closes"
            : s.openRow.map { " " + $0.name + ($0.muted ? " (muted)" : "") } ?? " no conversation open — Enter on one"
        if !s.showInspector, let search = s.search, search.query != nil, case .conversation = search.scope {
            let found = search.searching ? "searching…" : search.hits.isEmpty ? "no match" : "\(search.current + 1)/\(search.hits.count)"
            name += " · “\(search.input.string)”: \(found) · n older · N newer · Esc"
        }
        let right = " ? help "
        let paneFocused = s.focus == .messages || (s.focus == .compose && !s.showInspector)
        g.put(g.truncate(name, to: l.paneWidth - TextWidth.of(right)), x: l.paneX, y: 0, role: paneFocused ? .focus : .title)
        g.put(right, x: l.width - TextWidth.of(right), y: 0, role: .title)
        for y in l.contentTop..<l.contentBottom { g.put("│", x: l.listWidth, y: y, role: .border) }
    }

    static func drawList(_ g: inout Grid, _ s: ViewState, _ l: Layout) {
        let rows = l.paneHeight
        guard rows > 0 else { return }
        let first = max(0, min(s.selected - rows + 1, s.conversations.count - rows))
        for (i, c) in s.conversations.enumerated().dropFirst(first).prefix(rows) {
            let y = l.contentTop + i - first
            let selected = i == s.selected
            let role: Role = selected ? .listSelected : c.muted ? .listMuted : c.unread > 0 ? .listUnread : .listItem
            g.fill(x: 0, y: y, width: l.listWidth, height: 1, role: role)
            let marker = selected ? (s.focus == .list ? "▸" : "›") : " "
            var tail = c.unread > 0 ? " \(c.unread)" : ""
            if c.muted { tail += " ∅" }
            tail += " "
            let nameRoom = l.listWidth - 2 - TextWidth.of(tail)
            g.put(marker + " " + g.truncate(c.name, to: nameRoom), x: 0, y: y, role: role, maxX: l.listWidth)
            g.put(tail, x: l.listWidth - TextWidth.of(tail), y: y, role: role, maxX: l.listWidth)
        }
    }
}
