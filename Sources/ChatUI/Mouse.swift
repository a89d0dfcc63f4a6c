/// A click or a turn of the wheel at a cell, as the terminal adapter reads it.
public struct MouseEvent: Equatable, Sendable {
    public enum Kind: Equatable, Sendable { case click, wheelUp, wheelDown }
    public var x: Int
    public var y: Int
    public var kind: Kind

    public init(x: Int, y: Int, kind: Kind) {
        self.x = x
        self.y = y
        self.kind = kind
    }
}

/// What is under a cell of the screen, from the same layout `Render.screen` draws.
public enum ScreenArea: Equatable, Sendable {
    case conversation(Int)
    case list
    case messages
    case log
    case compose
    case none
}

extension Render {
    /// The area under (x, y) on a `width`×`height` screen of `s` (pure, as the render is).
    public static func area(_ s: ViewState, width: Int, height: Int, x: Int, y: Int) -> ScreenArea {
        guard width >= minWidth, height >= minHeight, !s.showHelp else { return .none }
        let statusRows = statusLines(s.status, width: width).count
        let l = Layout(width: width, height: height, showLog: s.showLog, logFocused: s.focus == .log, statusRows: statusRows,
                       stripRows: s.showTimeline ? stripRows : 0, noticeRows: noticeLines(s, width: width).count)
        if y == l.composeY { return .compose }
        if s.showLog, y > l.logTop, y < l.stripTop { return .log }
        guard y >= l.contentTop, y < l.contentBottom else { return .none }
        if x < l.listWidth {
            let rows = l.paneHeight
            let first = max(0, min(s.selected - rows + 1, s.conversations.count - rows))
            let i = first + (y - l.contentTop)
            return s.conversations.indices.contains(i) ? .conversation(i) : .list
        }
        return x > l.listWidth ? .messages : .none
    }
}

extension ViewModel {
    /// A click opens the conversation under it, or gives the keys to the pane under it; the
    /// wheel scrolls the pane under it, whichever has the keys.
    static func mouse(_ state: inout ViewState, _ event: MouseEvent, area: ScreenArea) -> [Command] {
        state.notice = nil
        state.noticeUnbidden = false
        if state.search?.editing == true { return [] }
        switch (event.kind, area) {
        case (.click, .conversation(let i)):
            state.selected = i
            return perform(&state, .open)
        case (.click, .messages): state.focus = .messages
        case (.click, .log): state.focus = .log
        case (.click, .compose): if state.open != nil { state.focus = .compose }
        case (.click, _): break
        case (.wheelUp, .messages): state.scroll += 3
        case (.wheelDown, .messages): state.scroll = max(0, state.scroll - 3)
        case (.wheelUp, .log): scrollLog(&state, by: 3)
        case (.wheelDown, .log): scrollLog(&state, by: -3)
        case (.wheelUp, .conversation), (.wheelUp, .list): state.selected = max(0, state.selected - 1)
        case (.wheelDown, .conversation), (.wheelDown, .list):
            state.selected = min(max(0, state.conversations.count - 1), state.selected + 1)
        default: break
        }
        return []
    }
}
