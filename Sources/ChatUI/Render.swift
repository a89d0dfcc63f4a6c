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
            let msg = "terminal too small: \(width)x\(height), synchat needs \(minWidth)x\(minHeight)"
            g.put(TextWidth.truncate(msg, to: width), x: 0, y: 0, role: .warning)
            return g
        }
        let statusRows = statusLines(s.status, width: width)
        let layout = Layout(width: width, height: height, showLog: s.showLog, logFocused: s.focus == .log, statusRows: statusRows.count,
                            stripRows: s.showTimeline ? Self.stripRows : 0)
        drawTitles(&g, s, layout)
        drawList(&g, s, layout)
        if s.showInspector { drawInspector(&g, s, layout) }
        else if let search = s.search, search.scope == .all, search.query != nil { drawSearchResults(&g, s, search, layout) }
        else { drawMessages(&g, s, layout) }
        if s.showLog { drawLog(&g, s, layout) }
        if s.showTimeline { drawTimeline(&g, s, layout) }
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
    /// typed changes the compose line alone. Each was a whole screen's wrapping and widths
    /// for one or three rows (issue 16).
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
    /// grid nobody else holds is not copied: a key typed copied and compared the whole
    /// screen, issue 16). Nil, with `g` untouched, when the screen must be drawn whole.
    public static func redraw(_ g: inout Grid, _ s: ViewState, since previous: ViewState) -> RedrawnRows? {
        let width = g.width, height = g.height
        guard width >= minWidth, height >= minHeight, let moved = partsMoved(s, since: previous),
              !moved.clock || !clockAbove(s), !moved.compose || !s.showHelp
        else { return nil }
        let statusRows = statusLines(s.status, width: width)
        let layout = Layout(width: width, height: height, showLog: s.showLog, logFocused: s.focus == .log,
                            statusRows: statusRows.count, stripRows: s.showTimeline ? Self.stripRows : 0)
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
        /// compose line.
        let stripTop: Int

        init(width: Int, height: Int, showLog: Bool, logFocused: Bool = false, statusRows: Int, stripRows: Int = 0) {
            self.width = width
            self.height = height
            listWidth = max(18, min(30, width / 4))
            paneX = listWidth + 1
            composeY = height - 1 - statusRows
            stripTop = composeY - stripRows
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

    /// The message pane, wrapped by display width and laid out from the newest message up.
    static func drawMessages(_ g: inout Grid, _ s: ViewState, _ l: Layout) {
        let background = s.status.lifecycle == .background
        let height = l.paneHeight
        guard height > 0, let open = s.open else {
            if s.conversations.isEmpty {
                g.put(" waiting for contacts…", x: l.paneX, y: l.contentTop, role: .messageMeta)
            }
            drawBanners(&g, s, l)
            return
        }
        let list = s.messages[open] ?? []
        let textX = 9  // " HH:MM c "
        let textWidth = max(10, l.paneWidth - 1 - textX)
        var lines: [(text: String, x: Int, role: Role, meta: String?, mark: String?)] = []  // newest first
        var needed = height + s.scroll
        // A search in this conversation: its words are highlighted, and the current hit is
        // brought into view (found in the full history the store searched).
        let search = s.search.flatMap { $0.scope == .conversation(open) ? $0 : nil }
        let target = search?.currentHit?.txId
        var targetLines: Range<Int>?
        var bodyStarts: [Int: Int] = [:]  // line index → the column where the body starts on it
        // Messages the network has not taken yet, newest at the bottom: `…` sending, `!` failed.
        for m in (s.outbox[open] ?? []).reversed() {
            let status: String, role: Role, mark: String
            switch m.state {
            case .sending: (status, role, mark) = ("sending…", .messageMeta, "…")
            case .failed(let reason, let at):
                let wait = at > s.status.clock ? "retry in " + rounded(at - s.status.clock) : "retrying"
                (status, role, mark) = ("not sent: \(UntrustedText.visible(reason)), \(wait) (R: now)", .warning, "!")
            case .sent: continue
            }
            let wrapped = g.wrap("you: " + UntrustedText.visible(m.body) + " · " + status, width: textWidth)
            for (k, part) in wrapped.enumerated().reversed() {
                lines.append((part, textX, background ? .messageDimmed : role, k == 0 ? Clock.hhmm(m.createdAt) : nil, k == 0 ? mark : nil))
            }
        }
        var index = list.count - 1
        // With a hit to show, on until it is built and half a pane beyond it, to centre it.
        while index >= 0, lines.count < needed || (target != nil && (targetLines == nil || lines.count < targetLines!.upperBound + height / 2)) {
            let m = list[index]
            let who = m.outgoing ? "you" : m.sender
            let body: String
            switch m.kind {
            case .contextual: body = m.text
            case .handshake: body = "(handshake) " + m.text
            case .payment: body = "(payment) " + m.text
            }
            let wrapped = g.wrap(who + ": " + body, width: textWidth)
            let role: Role = background ? .messageDimmed : m.outgoing ? .messageOutgoing : .messageIncoming
            let first = lines.count
            for (k, part) in wrapped.enumerated().reversed() {
                if search != nil { bodyStarts[lines.count] = k == 0 ? (who + ": ").count : 0 }
                lines.append((part, textX, role, k == 0 ? Clock.hhmm(m.blockTime) : nil, k == 0 ? mark(m.channel) : nil))
            }
            if m.txId == target { targetLines = first..<lines.count }
            if s.newMarker?.conversation == open, s.newMarker?.txId == m.txId {
                let label = "── new ──"
                lines.append((label, max(0, (l.paneWidth - TextWidth.of(label)) / 2), background ? .messageDimmed : .listUnread, nil, nil))
            }
            let day = Clock.day(m.blockTime)
            if index == 0 || Clock.day(list[index - 1].blockTime) != day {
                lines.append(("── day \(day) ──", max(0, (l.paneWidth - 12) / 2), background ? .messageDimmed : .daySeparator, nil, nil))
            }
            index -= 1
        }
        // The current hit in view: the pane scrolls to it when it is not.
        var wanted = s.scroll
        // Scrolled back, the bottom row is the hint's: a line is in view in the rows above it.
        func rows(at scroll: Int) -> Int { scroll > 0 ? height - 1 : height }
        if let hit = targetLines, !(wanted <= hit.lowerBound && hit.upperBound <= wanted + rows(at: wanted)) {
            wanted = max(0, hit.upperBound - height / 2 - 1)
            needed = wanted + height
        }
        // As far back as the oldest line, shown in the rows above the hint.
        let scroll = lines.count <= height ? 0 : min(wanted, lines.count - (height - 1))
        // Scrolled back: the bottom row is the indicator's own, so that it covers no text.
        let hintRows = scroll > 0 ? 1 : 0
        let visible = Array(lines.dropFirst(scroll).prefix(height - hintRows))
        // Newest at the bottom of the pane.
        for (i, line) in visible.enumerated() {
            let y = l.contentBottom - 1 - hintRows - i
            if let meta = line.meta {
                g.put(" " + meta, x: l.paneX, y: y, role: background ? .messageDimmed : .messageMeta)
            }
            if let mark = line.mark {
                g.put(mark, x: l.paneX + 7, y: y, role: background ? .messageDimmed : .messageMark)
            }
            let row = scroll + i
            let current = targetLines?.contains(row) == true
            g.put(line.text, x: l.paneX + line.x, y: y, role: current && !background ? .focus : line.role, maxX: l.width)
            if let query = search?.query, let bodyStart = bodyStarts[row] {
                highlight(&g, line.text, query: query, from: bodyStart, x: l.paneX + line.x, y: y, maxX: l.width)
            }
        }

        if list.isEmpty {
            g.put(" no messages yet", x: l.paneX, y: l.contentTop, role: .messageMeta)
        }
        if scroll > 0 {
            let hint = " ↓ \(Words.count(scroll, "line")) below · End "
            g.put(hint, x: max(l.paneX, l.width - TextWidth.of(hint)), y: l.contentBottom - 1, role: .messageMeta, maxX: l.width)
        }
        drawBanners(&g, s, l)
    }

    /// The channel that first brought a message (docs/screen.md).
    static func mark(_ c: Channel) -> String {
        switch c {
        case .realtime: return "r"
        case .push: return "p"
        case .fetch: return "f"
        case .background: return "b"
        case .sent: return "›"
        }
    }

    static func drawBanners(_ g: inout Grid, _ s: ViewState, _ l: Layout) {
        guard s.status.lifecycle == .background else { return }
        let top = l.contentTop
        let head = " background · badge \(s.status.badge) · f: foreground · o: open the latest notification "
        g.fill(x: l.paneX, y: top, width: l.paneWidth, height: 1, role: .statusBackground)
        g.put(TextWidth.truncate(head, to: l.paneWidth), x: l.paneX, y: top, role: .statusBackground)
        for (i, b) in s.banners.suffix(max(0, min(4, l.paneHeight - 2))).reversed().enumerated() {
            let y = top + 1 + i
            let text = " 🔔 " + b.title + ": " + b.body + " "
            let shown = g.truncate(text, to: l.paneWidth - 2)
            g.fill(x: l.paneX + 1, y: y, width: g.columns(shown), height: 1, role: .banner)
            g.put(shown, x: l.paneX + 1, y: y, role: .banner)
        }
    }


    static func drawCompose(_ g: inout Grid, _ s: ViewState, _ l: Layout) {
        let y = l.composeY
        g.fill(x: 0, y: y, width: l.width, height: 1, role: .compose)
        if let notice = s.notice {
            g.fill(x: 0, y: y, width: l.width, height: 1, role: .warning)
            g.put(g.truncate(" " + UntrustedText.visible(notice), to: l.width), x: 0, y: y, role: .warning)
            return
        }
        if let search = s.search, search.editing {
            drawSearchPrompt(&g, s, search, y: y, width: l.width)
            return
        }
        if let prompt = s.prompt {
            var x = g.put(prompt.label + "> ", x: 0, y: y, role: .focus)
            for cell in composeWindow(prompt.input, cursor: prompt.input.cursor, columns: max(4, l.width - x - 24), emoji: g.emoji) {
                x = g.put(cell.text, x: x, y: y, role: cell.isCursor ? .composeCursor : .compose, maxX: l.width)
            }
            g.put("  (Enter · Esc)", x: x, y: y, role: .messageMeta, maxX: l.width)
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
            x = g.put(cell.text, x: x, y: y, role: cell.isCursor && focused ? .composeCursor : .compose, maxX: l.width)
        }
        if line.isEmpty, !focused {
            g.put("Tab or Enter to write", x: x0, y: y, role: .messageMeta)
        }
    }

    /// What the compose line shows of `line` in `columns`: its characters as they are drawn
    /// (controls made visible), scrolled so that the cursor stays in view, the cursor's cell
    /// marked, and a blank cell for the cursor at the end of the line.
    ///
    /// It reads only the characters around the cursor, at most `columns` on each side, never
    /// the whole line, so that a frame costs the same on a 16 KiB line as on a short one
    /// (issue 11 #9); a long run of zero-width characters just shows fewer of them.
    public static func composeWindow<Line: RandomAccessCollection>(_ line: Line, cursor: Int, columns: Int, emoji: EmojiWidths = .safe) -> [(text: String, isCursor: Bool)]
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
        var cells: [(text: String, isCursor: Bool)] = []
        var x = 0
        var i = start
        while i < count, i - start < 2 * columns {
            let shown = visible(line[i])
            let w = TextWidth.of(shown, emoji: emoji)
            if x + w > columns { break }
            cells.append((shown, i == cursor))
            x += w
            i += 1
        }
        if cursor == count, x < columns { cells.append((" ", true)) }
        return cells
    }

    /// A character of the compose line as it is drawn: a control shows as `^@`, `^[`, ….
    static func visible(_ ch: Character) -> String {
        isPlain(ch) ? String(ch) : UntrustedText.visible(String(ch))
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

    // MARK: - Status bar

    /// The status bar, with the literal words of docs/screen.md, in two rows: the state of the
    /// channels first (and what is wrong with the world or the store), then time and
    /// counters. Segments are dropped from the least important (highest `priority`) when a
    /// row is too narrow.
    public static func statusSegments(_ info: StatusInfo) -> (state: [Segment], time: [Segment]) {
        let st = info.engine
        let pushRole: Role
        switch st.push {
        case .reliable: pushRole = .statusPushReliable
        case .unknown: pushRole = .statusPushUnknown
        case .unreliable: pushRole = .statusPushUnreliable
        case .disabled: pushRole = .statusPushDisabled
        }
        let lifecycle = st.lifecycle == .background ? "background" : "foreground"
        var catchUp = st.lastCatchUpAt.map { "catch-up \(rounded(info.clock - $0)) ago" } ?? "catch-up never"
        if let end = st.debounceEndsAt, end > info.clock { catchUp += ", next \(rounded(end - info.clock))" }
        var state: [Segment] = [
            (lifecycle, st.lifecycle == .background ? .statusBackground : .statusLifecycle, 0),
            (st.realtime.rawValue, st.realtime == .live ? .statusRealtimeLive : .statusRealtimeDegraded, 0),
            ("push: \(st.push.rawValue) " + missWords(st.misses, threshold: st.missThreshold), pushRole, 0),
            ("token \(st.token.rawValue)", .statusBar, 3),
        ]
        if !info.faults.isEmpty { state.append(("fault: " + info.faults.joined(separator: ", "), .warning, 1)) }
        // Truth beside belief: while the world has broken what the engine does not believe yet.
        if info.knowsTruth {
            for d in info.truth.disagreements { state.append(("truth: \(d.fault) for \(lasted(info.clock - d.since))", .statusTruth, 0)) }
        }
        if let trouble = st.storeTrouble { state.append(("store: \(trouble), \(st.unsaved) unsaved", .warning, 0)) }
        if st.unsent > 0 { state.append(("\(st.unsent) unsent", .warning, 0)) }
        var time: [Segment] = [
            (catchUp, .statusBar, 1),
            ("req \(st.requests) this launch", .statusBar, 2),  // the engine counts from its start; a relaunch starts again
            (st.mode.rawValue, .statusBar, 4),
            (Clock.full(info.clock) + " x" + speedWord(info.speed), .statusBar, 0),
        ]
        if info.paused { time.append(("paused", .warning, 0)) }
        if let script = info.script { time.append((script, .statusBar, 2)) }
        return (state, time)
    }

    /// `2/3` up to the threshold, then `17 misses`: the count the log gives, never held at 3/3.
    static func missWords(_ misses: Int, threshold: Int) -> String {
        misses <= threshold ? "\(misses)/\(threshold)" : Words.count(misses, "miss", plural: "misses")
    }

    /// `30`, `0.25`: the speed as the status bar and the keys say it.
    static func speedWord(_ speed: Double) -> String {
        speed == speed.rounded() ? String(Int(speed)) : String(speed)
    }

    public typealias Segment = (text: String, role: Role, priority: Int)

    /// The status bar's rows: always two, whatever they say, so that the screen above does
    /// not jump when a fault or a script adds a word (issue 14). A row too narrow for its
    /// segments drops the least important first; what still does not fit is cut at the edge.
    static let statusRowCount = 2

    static func statusLines(_ st: StatusInfo, width: Int) -> [[Segment]] {
        let (state, time) = statusSegments(st)
        func fits(_ segs: [Segment]) -> Bool { segs.reduce(-2) { $0 + TextWidth.of($1.text) + 3 } <= width }
        func trimmed(_ segs: [Segment]) -> [Segment] {
            var segs = segs
            while !fits(segs), let worst = segs.indices.max(by: { segs[$0].priority < segs[$1].priority }), segs[worst].priority > 0 {
                segs.remove(at: worst)
            }
            return segs
        }
        return [trimmed(state), trimmed(time)]
    }

    static func drawStatusLine(_ g: inout Grid, _ segments: [Segment], y: Int, width: Int) {
        g.fill(x: 0, y: y, width: width, height: 1, role: .statusBar)
        var x = 1
        for (i, seg) in segments.enumerated() {
            if i > 0 { x = g.put(" │ ", x: x, y: y, role: .statusBar, maxX: width) }
            x = g.put(TextWidth.truncate(seg.text, to: max(0, width - x)), x: x, y: y, role: seg.role, maxX: width)
        }
    }

    static func rounded(_ i: Interval) -> String {
        Interval(milliseconds: i.milliseconds / 1000 * 1000).description
    }

    /// How long something has lasted, in whole seconds: `0s`, `1m12s`.
    static func lasted(_ i: Interval) -> String { i.milliseconds < 1000 ? "0s" : rounded(i) }

    // MARK: - Help

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

/// The simulated wall clock shown to people: the run starts on day 1 at 08:00.
public enum Clock {
    static let start = Interval.hours(8)

    public static func day(_ t: Instant) -> Int { Int((t + start).milliseconds / 86_400_000) + 1 }

    public static func hhmm(_ t: Instant) -> String {
        let m = (t + start).milliseconds / 60_000
        return two(m / 60 % 24) + ":" + two(m % 60)
    }

    public static func full(_ t: Instant) -> String {
        let s = (t + start).milliseconds / 1000
        return "d\(day(t)) " + two(s / 3600 % 24) + ":" + two(s / 60 % 60) + ":" + two(s % 60)
    }

    /// `d1 08:04:08.250`: the status bar's clock to the millisecond, for lines a program
    /// prints as it goes (`synchat bot --events`), so that they and the screen say one time.
    public static func stamp(_ t: Instant) -> String {
        full(t) + "." + String(String((t + start).milliseconds % 1000 + 1000).dropFirst())
    }

    /// `08:04:08`: the world's time of day, as the status bar's clock shows it (the log's).
    public static func time(_ t: Instant) -> String {
        let s = (t + start).milliseconds / 1000
        return two(s / 3600 % 24) + ":" + two(s / 60 % 60) + ":" + two(s % 60)
    }

    static func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
}
