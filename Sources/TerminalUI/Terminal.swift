import CNCurses
import ChatUI
import Config
import Foundation
import SyncCore

/// The thin ncurses adapter (docs/design.md): opens the terminal, reads keys, and draws a grid by
/// writing only the runs of cells that changed since the last frame. Nothing else here
/// knows about curses, and no test ever calls it.
public final class Terminal {
    public struct OpenError: Error, CustomStringConvertible {
        public var description: String
    }

    private var screen: OpaquePointer?
    private(set) var window: UnsafeMutablePointer<WINDOW>?
    private var previous: Grid?
    private let theme: Theme
    private var pairs: [Role: (attrs: attr_t, pair: Int16)] = [:]
    public private(set) var isOpen = false
    /// What `--emoji` asks for; the probe at `open` answers it (`TerminalProbe`).
    public var emojiRequest = TerminalProbe.Request.auto
    /// What the probe found: how emoji sequences are drawn here, and the line that says so.
    public private(set) var emoji = TerminalProbe.Finding(widths: .safe, enableClustering: false, report: "terminal: not asked yet")
    /// Until when (uptime, ns) replies the probe stopped waiting for may still come in as keys.
    private var lateRepliesUntil: UInt64 = 0
    /// The SGR sequence of each role, for what the adapter writes itself (whole emoji sequences).
    var sgr: [Role: String] = [:]

    public init(theme: Theme) {
        self.theme = theme
    }

    /// Opens the terminal, or explains in one line why it cannot.
    public func open() throws {
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else {
            throw OpenError(description: "not a terminal: the TUI needs an interactive terminal (try synchat simulate)")
        }
        guard let term = ProcessInfo.processInfo.environment["TERM"], !term.isEmpty else {
            throw OpenError(description: "TERM is not set: cannot drive the terminal")
        }
        let shown = UntrustedText.visible(term)
        // Asked of terminfo before curses starts: a terminal that cannot move its cursor
        // (TERM=dumb) would get a screen drawn as a stream of garbage.
        switch synchat_can_address_cursor(term) {
        case 1: break
        case 0:
            throw OpenError(description: "terminal type TERM=\(shown) cannot move the cursor (no cup in its terminfo): the TUI needs a full-screen terminal, such as TERM=xterm-256color")
        default:
            throw OpenError(description: "unknown terminal type TERM=\(shown)")
        }
        _ = TextWidth.localeReady
        // Asked before curses takes the terminal: its replies are read here, not as keys.
        let env = ProcessInfo.processInfo.environment
        let inTmux = !(env["TMUX"] ?? "").isEmpty
        // Inside tmux the queries reach tmux, not the terminal: tmux is asked instead.
        let (finding, replies, typed) = TerminalProbe.run(emojiRequest, identifying: notifyRequest == .auto && !inTmux,
                                                          input: STDIN_FILENO, output: STDOUT_FILENO)
        emoji = finding
        notifyChoice = Self.chooseNotifications(notifyRequest, term: term, environment: env, replies: replies)
        CastRecorder.tellRecorder(finding, request: emojiRequest)
        if emojiRequest != .safe, finding.report.contains("no answer") {
            lateRepliesUntil = DispatchTime.now().uptimeNanoseconds + 5_000_000_000
        }
        guard let s = synchat_newterm() else {
            throw OpenError(description: "unknown terminal type TERM=\(shown)")
        }
        // Keys typed while the probe waited go to curses, as if they came now (its input is a
        // stack): an arrow as the arrow, not Esc, `[` and a letter.
        for typedAhead in TypedAhead.read(typed).reversed() {
            switch typedAhead {
            case .scalar(let scalar): _ = unget_wch(wchar_t(bitPattern: scalar.value))
            case .key(let key): if let code = Self.cursesCode(key) { _ = ungetch(code) }
            }
        }
        if finding.enableClustering { writeRaw("\u{1B}[?2027h") }
        screen = s
        set_term(s)
        window = synchat_stdscr()
        isOpen = true
        synchat_install_signal_handlers()
        raw()
        noecho()
        nonl()
        keypad(window, true)
        // Home and End come in several spellings whatever TERM says: tmux sends \e[1~ and
        // \e[4~ to a program that believes it is in an xterm (whose terminfo says \eOH and
        // \eOF), rxvt \e[7~ and \e[8~. Every one of them is Home or End.
        for (sequence, key) in [("\u{1B}[1~", KEY_HOME), ("\u{1B}[4~", KEY_END), ("\u{1B}[7~", KEY_HOME), ("\u{1B}[8~", KEY_END),
                                ("\u{1B}OH", KEY_HOME), ("\u{1B}OF", KEY_END), ("\u{1B}[H", KEY_HOME), ("\u{1B}[F", KEY_END)] {
            _ = define_key(sequence, key)
        }
        set_escdelay(25)
        // Bracketed paste: the terminal brackets what is pasted with ESC [200~ … ESC [201~,
        // read as one paste (its new lines kept, nothing sent), not as keys (whose Enter would
        // send the first line).
        _ = define_key("\u{1B}[200~", synchat_key_paste_start())
        _ = define_key("\u{1B}[201~", synchat_key_paste_end())
        writeRaw("\u{1B}[?2004h")
        // Focus reporting: the terminal says when its window gains and loses the focus, so a
        // notification reaches the desktop only while you are away (`DesktopAttention`).
        _ = define_key("\u{1B}[I", synchat_key_focus_in())
        _ = define_key("\u{1B}[O", synchat_key_focus_out())
        writeRaw("\u{1B}[?1004h")
        _ = synchat_mouse(mouse ? 1 : 0)
        // No typeahead check in a refresh: ncursesw would cut a frame short when a key waits,
        // and a frame drawn in passes (see draw) must always be finished. Keys waiting are all
        // read before the next frame anyway.
        typeahead(-1)
        curs_set(0)
        setUpColours()
    }

    /// The curses key code `read` turns back into `key`.
    static func cursesCode(_ key: Key) -> Int32? {
        switch key {
        case .up: KEY_UP
        case .down: KEY_DOWN
        case .left: KEY_LEFT
        case .right: KEY_RIGHT
        case .home: KEY_HOME
        case .end: KEY_END
        case .pageUp: KEY_PPAGE
        case .pageDown: KEY_NPAGE
        case .delete: KEY_DC
        case .tab: KEY_BTAB
        default: nil
        }
    }

    /// Puts the terminal back. Safe to call more than once.
    public func close() {
        guard isOpen else { return }
        isOpen = false
        if titleShown != nil { writeRaw("\u{1B}[23;0t") }  // the title as it was, where the terminal keeps a stack
        endwin()
        synchat_paste_mode_off()
        if emoji.enableClustering { writeRaw("\u{1B}[?2027l") }  // as it was before the probe switched it on
        if let screen { delscreen(screen) }
        screen = nil
    }

    deinit { close() }

    public var size: (width: Int, height: Int) { (Int(synchat_cols()), Int(synchat_lines())) }

    public enum Input: Equatable {
        case key(Key)
        /// What the terminal said was pasted, as it came (CR for its new lines, most often);
        /// `replaced`: bytes that were not UTF-8, each kept as U+FFFD.
        case paste(String, replaced: Int)
        case resize
        case mouse(MouseEvent)
        /// The terminal's window gained (true) or lost the focus.
        case focus(Bool)
    }

    /// Clicks and the wheel are reported (`--no-mouse` leaves the terminal's own selection).
    public var mouse = true
    /// `--notify`: how desktop notifications reach the terminal, asked for.
    public var notifyRequest = DesktopNotification.Request.auto
    /// What `open` chose for `notifyRequest`, with why.
    public internal(set) var notifyChoice = DesktopNotification.choose(.off, .init())

    private var titleShown: String?

    /// Sets the terminal's title (OSC 2). The text is the app's own — never a message or a
    /// name — and made of printable characters only; the title there was before is pushed
    /// on the terminal's stack first and popped at close (xterm; elsewhere the app's stays).
    public func setTitle(_ text: String) {
        guard isOpen, text != titleShown else { return }
        let safe = String(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F && !(0x80...0x9F).contains($0.value) })
        if titleShown == nil { writeRaw("\u{1B}[22;0t") }
        titleShown = text
        writeRaw("\u{1B}]2;" + safe + "\u{07}")
    }

    /// The terminal bell, as ncurses rings it.
    public func bell() {
        guard isOpen else { return }
        _ = beep()
    }

    func writeRaw(_ s: String) {
        // Straight to the descriptor: curses has flushed its frame (a refresh writes it all).
        _ = s.utf8CString.withUnsafeBufferPointer { p in Foundation.write(STDOUT_FILENO, p.baseAddress, p.count - 1) }
    }

    /// Waits up to `timeoutMs` for a key, or until `descriptor` (the network's wake pipe)
    /// is readable: then nil, as for a timeout, and the caller looks at what came.
    public func read(timeoutMs: Int32, alsoWakingOn descriptor: Int32?) -> Input? {
        guard let descriptor, timeoutMs > 0 else { return read(timeoutMs: timeoutMs) }
        // Keys already taken in by curses are read first; then both are waited on together.
        if let key = read(timeoutMs: 0) { return key }
        var fds = [pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0), pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
        _ = poll(&fds, 2, timeoutMs)
        return fds[0].revents != 0 ? read(timeoutMs: 0) : nil
    }

    /// Waits up to `timeoutMs` for a key.
    public func read(timeoutMs: Int32) -> Input? {
        guard let window else { return nil }
        wtimeout(window, timeoutMs)
        var wch: wint_t = 0
        let r = wget_wch(window, &wch)
        if r == ERR { return nil }
        if r == synchat_key_code_yes() {
            switch Int32(wch) {
            case KEY_RESIZE: return .resize
            case synchat_key_mouse():
                var x: Int32 = 0, y: Int32 = 0
                switch synchat_mouse_event(&x, &y) {
                case 1: return .mouse(MouseEvent(x: Int(x), y: Int(y), kind: .click))
                case 4: return .mouse(MouseEvent(x: Int(x), y: Int(y), kind: .wheelUp))
                case 5: return .mouse(MouseEvent(x: Int(x), y: Int(y), kind: .wheelDown))
                default: return nil
                }
            case KEY_UP: return .key(.up)
            case KEY_DOWN: return .key(.down)
            case KEY_LEFT: return .key(.left)
            case KEY_RIGHT: return .key(.right)
            case KEY_HOME: return .key(.home)
            case KEY_END: return .key(.end)
            case KEY_PPAGE: return .key(.pageUp)
            case KEY_NPAGE: return .key(.pageDown)
            case KEY_BACKSPACE: return .key(.backspace)
            case KEY_DC: return .key(.delete)
            case KEY_ENTER: return .key(.enter)
            case KEY_BTAB: return .key(.tab)
            case synchat_key_paste_start():
                let (text, replaced) = readPaste()
                return .paste(text, replaced: replaced)
            case synchat_key_focus_in(): return .focus(true)
            case synchat_key_focus_out(): return .focus(false)
            default: return nil
            }
        }
        if wch == 27, DispatchTime.now().uptimeNanoseconds < lateRepliesUntil, swallowedLateReply() { return nil }
        if wch == 27, altEnter() { return .key(.altEnter) }
        if let key = Key.control(byte: UInt32(wch)) { return .key(key) }
        switch wch {
        default:
            guard let scalar = UnicodeScalar(UInt32(wch)), wch >= 32 else { return nil }
            return .key(.char(Character(scalar)))
        }
    }

    /// After an ESC: whether Enter (CR or LF) came with it, in the same read, as Alt-Enter
    /// sends it; anything else is given back to curses.
    private func altEnter() -> Bool {
        guard let window else { return false }
        wtimeout(window, 0)
        var next: wint_t = 0
        let r = wget_wch(window, &next)
        guard r != ERR else { return false }
        if r == OK, next == 13 || next == 10 { return true }
        if r == synchat_key_code_yes() { _ = ungetch(Int32(next)) } else { _ = unget_wch(wchar_t(bitPattern: UInt32(next))) }
        return false
    }

    /// After an ESC while the probe's replies may still come late (it stopped waiting for them):
    /// whether what follows was one of them, read and dropped. Anything else is given back to
    /// curses as it came, and the ESC is a key.
    private func swallowedLateReply() -> Bool {
        guard let window else { return false }
        wtimeout(window, 0)
        var taken: [UInt32] = []
        var replies = TerminalReplies()
        replies.feed([0x1B])
        while taken.count < TerminalReplies.longest {
            var next: wint_t = 0
            guard wget_wch(window, &next) != ERR else { break }
            taken.append(UInt32(next))
            guard next < 0x80 else { break }
            replies.feed([UInt8(next)])
            if (0x40...0x7E).contains(next), taken.count > 1 { break }
        }
        // A whole sequence that was no key (nothing of it given back) was a reply.
        if let last = taken.last, (0x40...0x7E).contains(last), taken.count > 1, replies.leftover.isEmpty {
            if replies.fenced { lateRepliesUntil = 0 }  // the last of them
            return true
        }
        for c in taken.reversed() { _ = unget_wch(wchar_t(bitPattern: c)) }
        return false
    }

    /// Draws a frame: only the cells that changed are written, each on its own at its column
    /// (`TextWidth.cells` decided what a cell may hold; ncursesw checks it again and a cell it
    /// would lay out at another width is drawn as `�` and blanks).
    ///
    /// A cell of a grapheme cluster drawn in several cells (`Cell.isolated`: Indic conjuncts,
    /// spacing marks) is where terminals may disagree (one laying text out by cluster draws it
    /// narrower than ncursesw counts). Such cells are blank in the first pass; then each is
    /// written in a refresh of its own, followed by an absolute cursor move to where the grid
    /// says it ends, so that no disagreement moves any other cell (ratatui's crossterm backend
    /// moves the cursor before any cell that does not follow the last one written).
    ///
    /// A whole emoji sequence (`Cell.whole`) is more than curses can hold in a cell: curses is
    /// given braille blanks there, and the adapter writes the sequence itself after the
    /// frame, with an absolute cursor move after it, in every row the frame wrote.
    public func draw(_ grid: Grid) {
        guard window != nil else { return }
        let full = previous == nil || previous!.width != grid.width || previous!.height != grid.height
        if full, let window { werase(window) }
        // The cells compared in place, the last frame read once: at rest a frame changes a
        // few cells of the status bar, and copying each of the others out to compare it would
        // be most of the frame's time.
        let before = full ? nil : previous
        var isolated: [(x: Int, y: Int, cell: Cell)] = []
        var rows = Set<Int>()
        grid.cells.withUnsafeBufferPointer { now in
            (before?.cells ?? []).withUnsafeBufferPointer { old in
                put(now[...], from: 0, comparedWith: old.isEmpty ? nil : old[...], width: grid.width, height: grid.height, isolated: &isolated, rows: &rows)
            }
        }
        previous = grid
        show(isolated, wholeIn: rows, of: grid)
    }

    /// Changes the last frame in place, when `change` can (see `Render.redraw`), and writes
    /// the rows it drew anew, each compared with what it held: the rest of the screen is not
    /// looked at, and the frame is not copied.
    /// False, with nothing drawn, when there is no last frame or `change` returns nil.
    public func redraw(_ change: (inout Grid) -> Render.RedrawnRows?) -> Bool {
        guard window != nil, var grid = previous else { return false }
        previous = nil  // the grid is held once: changed in place
        guard let rows = change(&grid) else {
            previous = grid
            return false
        }
        var isolated: [(x: Int, y: Int, cell: Cell)] = []
        var changed = Set<Int>()
        for (y, before) in rows {
            grid.row(y).withUnsafeBufferPointer { now in
                before.withUnsafeBufferPointer { old in
                    put(now[...], from: y * grid.width, comparedWith: old[...], width: grid.width, height: grid.height, isolated: &isolated, rows: &changed)
                }
            }
        }
        previous = grid
        show(isolated, wholeIn: changed, of: grid)
        return true
    }

    /// Puts the cells of `now` (the screen's cells from index `start` on) that differ from
    /// `old` (all of them without it); isolated cells are kept for `show`, and the rows
    /// written in `rows`. A whole emoji sequence's cells hold braille blanks (U+2800) for
    /// curses: never the blank it would compare the next frame's with, and no character curses
    /// would print again to move its cursor over them.
    private func put(_ now: UnsafeBufferPointer<Cell>.SubSequence, from start: Int, comparedWith old: UnsafeBufferPointer<Cell>.SubSequence?,
                     width: Int, height: Int, isolated: inout [(x: Int, y: Int, cell: Cell)], rows: inout Set<Int>) {
        for i in now.indices where now[i].width != 0 && (old.map { $0[$0.startIndex + (i - now.startIndex)] != now[i] } ?? true) {
            let cell = now[i], at = start + (i - now.startIndex), x = at % width, y = at / width
            rows.insert(y)
            if cell.whole {
                for k in 0..<Int(cell.width) where x + k < width { put(Cell("\u{2800}", role: cell.role), x: x + k, y: y, last: false) }
            } else if cell.isolated {
                isolated.append((x, y, cell))
                put(Cell(" ", role: cell.role), x: x, y: y, last: false)
            } else {
                put(cell, x: x, y: y, last: y == height - 1 && x + Int(cell.width) == width)
            }
        }
    }

    /// Shows the frame, then the isolated cells one by one, each after the cells around it,
    /// then every whole emoji sequence of the rows written (`wholeIn`), changed or not: curses
    /// writes a row's unchanged cells again when that is cheaper than moving its cursor over
    /// them, and for a sequence's cells it would write its braille blanks.
    private func show(_ isolated: [(x: Int, y: Int, cell: Cell)], wholeIn rows: Set<Int>, of grid: Grid) {
        guard let window else { return }
        let width = grid.width, height = grid.height
        wnoutrefresh(window)
        doupdate()
        for (x, y, cell) in isolated {
            put(cell, x: x, y: y, last: y == height - 1 && x + Int(cell.width) == width)
            wnoutrefresh(window)
            doupdate()
            synchat_replace_cursor(Int32(y), Int32(min(x + Int(cell.width), width - 1)))
        }
        writeLinks(of: grid, in: rows)
        guard grid.emoji.whole else { return }
        for y in rows.sorted() {
            for x in 0..<width where grid[x, y].whole {
                // Curses cannot hold it in a cell: written here, at its place, in its role's
                // colours, then the attributes reset as curses leaves them after a refresh.
                let cell = grid[x, y]
                writeRaw("\u{1B}[\(y + 1);\(x + 1)H" + (sgr[cell.role] ?? "\u{1B}[0m") + String(cell.character) + "\u{1B}[0m")
                synchat_replace_cursor(Int32(y), Int32(min(x + Int(cell.width), width - 1)))
            }
        }
    }

    /// Writes one cell; one ncursesw refuses is drawn as `�` and blanks of its width.
    private func put(_ cell: Cell, x: Int, y: Int, last: Bool) {
        guard let window else { return }
        let (attrs, pair) = style(cell.role)
        let text = cell.character.unicodeScalars.map { wchar_t(bitPattern: $0.value) }
        if synchat_put_cell(window, Int32(y), Int32(x), text, Int32(text.count), Int32(cell.width), attrs, pair) == ERR,
           !last {  // the last cell of the screen always answers ERR: the cursor cannot move on
            let blank: [wchar_t] = [0xFFFD, 0x20]
            _ = synchat_put(window, Int32(y), Int32(x), blank, Int32(cell.width), attrs, pair)
        }
    }

    /// Whether the screen shows a frame of this size (none after `invalidate`).
    public func hasFrame(width: Int, height: Int) -> Bool { previous?.width == width && previous?.height == height }

    /// Forgets the last frame, so that the next one is drawn whole (after a resize).
    public func invalidate() {
        previous = nil
        if let window { clearok(window, true) }
    }

    // MARK: - Colours

    private func setUpColours() {
        let useColour = theme.colour && synchat_has_colors() != 0
        if useColour {
            start_color()
            use_default_colors()
        }
        var next: Int16 = 1
        for role in Role.allCases {
            let style = theme.style(for: role)
            var attrs = synchat_a_normal()
            if style.bold { attrs |= synchat_a_bold() }
            if style.dim { attrs |= synchat_a_dim() }
            if style.reverse { attrs |= synchat_a_reverse() }
            if style.underline { attrs |= synchat_a_underline() }
            var pair: Int16 = 0
            if useColour, style.fg != nil || style.bg != nil {
                let limit = Int16(max(8, min(256, Int(synchat_colors()))))
                let fg = style.fg.map { Int16($0) < limit ? Int16($0) : Int16($0) % 8 } ?? -1
                let bg = style.bg.map { Int16($0) < limit ? Int16($0) : Int16($0) % 8 } ?? -1
                init_pair(next, fg, bg)
                pair = next
                next += 1
            }
            pairs[role] = (attrs, pair)
            sgr[role] = style.sgr(colours: useColour ? Int(synchat_colors()) : 0)
        }
    }

    private func style(_ role: Role) -> (attr_t, Int16) {
        pairs[role] ?? (synchat_a_normal(), 0)
    }
}
