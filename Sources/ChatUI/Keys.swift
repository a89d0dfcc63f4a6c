/// A key as the view-model sees it; the terminal adapter translates raw input into these.
public enum Key: Hashable, Sendable {
    case char(Character)
    case ctrl(Character)
    case up, down, left, right, home, end, pageUp, pageDown
    case enter, tab, backspace, delete, escape
}

/// What a key does. One table maps keys to actions and also generates the help overlay, so
/// the two cannot drift (STYLE.md, bubbles' `key.Binding`).
public enum KeyAction: Hashable, Sendable {
    case focusNext, moveUp, moveDown, open, scrollUp, scrollDown, scrollEnd
    case background, foreground, cyclePushFault, toggleRealtime, makeStale, toggleIndexer, expireToken
    case syncNow, cycleMode, cyclePreview, toggleLog, faster, slower, toggleHelp, openBanner, quit
    case togglePause, step, toggleInspector, retrySends, toggleLogFilter, toggleTimeline, nextUnread
    case search, searchOlder, searchNewer
    // Compose line
    case left, right, home, end, backspace, delete, killToStart, killWord, historyUp, historyDown, send, leaveCompose
}

public struct KeyBinding: Sendable {
    public var keys: [Key]
    /// How the keys read in the help overlay.
    public var label: String
    public var help: String
    public var action: KeyAction
}

public enum KeyTable {
    /// Keys outside the compose line (SPEC §7).
    public static let global: [KeyBinding] = [
        KeyBinding(keys: [.tab], label: "Tab", help: "switch focus: conversations → messages → compose → sync log", action: .focusNext),
        KeyBinding(keys: [.up, .char("k")], label: "↑ k", help: "move up", action: .moveUp),
        KeyBinding(keys: [.down, .char("j")], label: "↓ j", help: "move down", action: .moveDown),
        KeyBinding(keys: [.enter], label: "Enter", help: "open the conversation and compose", action: .open),
        KeyBinding(keys: [.char("u")], label: "u", help: "open the next conversation with unread messages", action: .nextUnread),
        KeyBinding(keys: [.char("/")], label: "/", help: "search the open conversation's history (Tab in the prompt: all conversations)", action: .search),
        KeyBinding(keys: [.char("n")], label: "n N", help: "the next (older) / previous (newer) match; Esc ends the search", action: .searchOlder),
        KeyBinding(keys: [.char("N")], label: "", help: "", action: .searchNewer),
        KeyBinding(keys: [.pageUp], label: "PgUp", help: "scroll the messages (or the focused log) back", action: .scrollUp),
        KeyBinding(keys: [.pageDown], label: "PgDn", help: "scroll forward", action: .scrollDown),
        KeyBinding(keys: [.end], label: "End", help: "jump to the newest message (or log line)", action: .scrollEnd),
        KeyBinding(keys: [.char("b")], label: "b", help: "send the app to the background", action: .background),
        KeyBinding(keys: [.char("f")], label: "f", help: "bring the app to the foreground", action: .foreground),
        KeyBinding(keys: [.char("o")], label: "o", help: "open the latest notification's conversation", action: .openBanner),
        KeyBinding(keys: [.char("p")], label: "p", help: "push fault: ok → drop all → delay 90s → ok", action: .cyclePushFault),
        KeyBinding(keys: [.char("r")], label: "r", help: "realtime down / up", action: .toggleRealtime),
        KeyBinding(keys: [.char("s")], label: "s", help: "make the realtime connection stale (silent)", action: .makeStale),
        KeyBinding(keys: [.char("x")], label: "x", help: "indexer down / up", action: .toggleIndexer),
        KeyBinding(keys: [.char("t")], label: "t", help: "expire the push token", action: .expireToken),
        KeyBinding(keys: [.char("S")], label: "S", help: "sync now (forced catch-up)", action: .syncNow),
        KeyBinding(keys: [.char("R")], label: "R", help: "retry now the messages the network refused", action: .retrySends),
        KeyBinding(keys: [.char("m")], label: "m", help: "notification mode: remote-push → background-fetch → off", action: .cycleMode),
        KeyBinding(keys: [.char("v")], label: "v", help: "notification preview: message → contact → hidden", action: .cyclePreview),
        KeyBinding(keys: [.char("l")], label: "l", help: "show / hide the sync log", action: .toggleLog),
        KeyBinding(keys: [.char("L")], label: "L", help: "sync log: decisions only / everything (message arrivals too)", action: .toggleLogFilter),
        KeyBinding(keys: [.char("+"), .char("=")], label: "+ -", help: "simulated time faster / slower (×0.25 to ×300)", action: .faster),
        KeyBinding(keys: [.char("-")], label: "", help: "", action: .slower),
        KeyBinding(keys: [.char(" ")], label: "Space", help: "pause / resume simulated time", action: .togglePause),
        KeyBinding(keys: [.char(".")], label: ".", help: "while paused: step to the next event of the log", action: .step),
        KeyBinding(keys: [.char("i")], label: "i", help: "inspector: the engine's push, gate, cursors, timers and faults", action: .toggleInspector),
        KeyBinding(keys: [.char("T")], label: "T", help: "timeline of the last hour: app, push, catch-ups, faults, requests", action: .toggleTimeline),
        KeyBinding(keys: [.char("?")], label: "?", help: "this help", action: .toggleHelp),
        KeyBinding(keys: [.char("q"), .ctrl("c")], label: "q ^C", help: "quit", action: .quit),
    ]

    /// Keys inside the compose line; any other printable character is typed.
    public static let compose: [KeyBinding] = [
        KeyBinding(keys: [.enter], label: "Enter", help: "send", action: .send),
        KeyBinding(keys: [.left, .right], label: "← →", help: "move the cursor", action: .left),
        KeyBinding(keys: [.right], label: "", help: "", action: .right),
        KeyBinding(keys: [.home, .ctrl("a")], label: "Home ^A", help: "start of line", action: .home),
        KeyBinding(keys: [.end, .ctrl("e")], label: "End ^E", help: "end of line", action: .end),
        KeyBinding(keys: [.backspace], label: "Bksp", help: "delete before the cursor", action: .backspace),
        KeyBinding(keys: [.delete], label: "", help: "", action: .delete),
        KeyBinding(keys: [.ctrl("u")], label: "^U", help: "delete to the start of the line", action: .killToStart),
        KeyBinding(keys: [.ctrl("w")], label: "^W", help: "delete the word before the cursor", action: .killWord),
        KeyBinding(keys: [.up, .down], label: "↑ ↓", help: "history", action: .historyUp),
        KeyBinding(keys: [.down], label: "", help: "", action: .historyDown),
        KeyBinding(keys: [.escape], label: "Esc", help: "leave the compose line", action: .leaveCompose),
        KeyBinding(keys: [.tab], label: "Tab", help: "leave it for the next pane (sync log, conversations)", action: .focusNext),
        KeyBinding(keys: [.ctrl("c")], label: "^C", help: "quit", action: .quit),
    ]

    /// The first binding of `table` for `key` (a key listed under a shared label is matched
    /// by its own row further down, so `.left`'s row wins for ←, `.right`'s for →).
    public static func action(for key: Key, in table: [KeyBinding]) -> KeyAction? {
        // Exact single-key rows first, then shared rows.
        if let row = table.first(where: { $0.keys == [key] }) { return row.action }
        return table.first { $0.keys.contains(key) }?.action
    }

    /// The help overlay's two sections: one line per labelled binding, outside the compose
    /// line and in it.
    public static func helpSections() -> (global: [(label: String, help: String)], compose: [(label: String, help: String)]) {
        (global.filter { !$0.label.isEmpty }.map { ($0.label, $0.help) }, compose.filter { !$0.label.isEmpty }.map { ($0.label, $0.help) })
    }

    /// The help overlay's lines: one per labelled binding.
    public static func helpLines() -> [(label: String, help: String)] {
        let g = global.filter { !$0.label.isEmpty }.map { ($0.label, $0.help) }
        let c = compose.filter { !$0.label.isEmpty }.map { ($0.label, $0.help) }
        return g + [("", ""), ("compose", "")] + c
    }
}
