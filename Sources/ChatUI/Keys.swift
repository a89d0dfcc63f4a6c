/// A key as the view-model sees it; the terminal adapter translates raw input into these.
public enum Key: Hashable, Sendable {
    case char(Character)
    case ctrl(Character)
    case up, down, left, right, home, end, pageUp, pageDown
    case enter, tab, backspace, delete, escape
    /// Alt-Enter (Esc then Enter, in one read): a new line in the compose line.
    case altEnter

    /// The key a terminal's control byte (1–31 and DEL) is read as: one table for the terminal
    /// adapter, which reads keys, and the key file, which warns about a binding no terminal can
    /// send. Ctrl-H is byte 8, Backspace's; ctrl-I is Tab; ctrl-M is Enter (terminals send CR
    /// for Enter); ctrl-J is byte 10, LF, a key of its own (a new line in the compose line);
    /// byte 27 is Esc (and starts the escape sequences of the arrows).
    public static func control(byte: UInt32) -> Key? {
        switch byte {
        case 9: return .tab
        case 13: return .enter
        case 27: return .escape
        case 8, 127: return .backspace
        case 1...26: return .ctrl(Character(UnicodeScalar(UInt8(byte) + 96)))
        default: return nil
        }
    }

    /// For `ctrl-X` that the terminal reads as another key (ctrl-H as Backspace): that key.
    public var readAs: Key? {
        guard case .ctrl(let c) = self, let ascii = c.asciiValue, (97...122).contains(ascii) else { return nil }
        let read = Self.control(byte: UInt32(ascii - 96))
        return read == self ? nil : read
    }
}

/// What a key does. One table maps keys to actions and also generates the help overlay, so
/// the two cannot drift (docs/keys.md, bubbles' `key.Binding`).
public enum KeyAction: String, Hashable, Sendable, CaseIterable {
    case focusNext, moveUp, moveDown, open, scrollUp, scrollDown, scrollEnd, scrollOldest, toggleFold
    case background, foreground, cyclePushFault, toggleRealtime, makeStale, toggleIndexer, expireToken, toggleNetwork
    case syncNow, cycleMode, cyclePreview, toggleLog, faster, slower, toggleHelp, openBanner, quit
    case togglePause, step, toggleInspector, retrySends, toggleLogFilter, toggleTimeline, nextUnread
    case search, searchOlder, searchNewer, addContact, renameContact, toggleMute
    // Compose line
    case left, right, home, end, backspace, delete, killToStart, killWord, historyUp, historyDown, send, leaveCompose, newline
}

public struct KeyBinding: Equatable, Sendable {
    public var keys: [Key]
    public var help: String
    public var action: KeyAction

    public init(keys: [Key], help: String, action: KeyAction) {
        self.keys = keys
        self.help = help
        self.action = action
    }

    /// How the keys read in the help overlay: from the keys themselves, so a rebound key
    /// (keys.toml) shows as it is.
    public var label: String { keys.map(\.display).joined(separator: " ") }
}

extension Key {
    /// How a key reads in the help and in keys.toml.
    public var display: String {
        switch self {
        case .char(" "): return "Space"
        case .char(let c): return String(c)
        case .ctrl(let c): return "^" + String(c).uppercased()
        case .up: return "↑"
        case .down: return "↓"
        case .left: return "←"
        case .right: return "→"
        case .home: return "Home"
        case .end: return "End"
        case .pageUp: return "PgUp"
        case .pageDown: return "PgDn"
        case .enter: return "Enter"
        case .tab: return "Tab"
        case .backspace: return "Bksp"
        case .delete: return "Del"
        case .escape: return "Esc"
        case .altEnter: return "Alt-Enter"
        }
    }
}

public enum KeyTable {
    /// Keys outside the compose line (docs/keys.md).
    public static let global: [KeyBinding] = [
        KeyBinding(keys: [.tab], help: "switch focus: conversations → messages → compose → sync log", action: .focusNext),
        KeyBinding(keys: [.up, .char("k")], help: "move up", action: .moveUp),
        KeyBinding(keys: [.down, .char("j")], help: "move down", action: .moveDown),
        KeyBinding(keys: [.enter], help: "open the conversation and compose", action: .open),
        KeyBinding(keys: [.char("u")], help: "open the next conversation with unread messages", action: .nextUnread),
        KeyBinding(keys: [.char("/")], help: "search the open conversation's history (Tab in the prompt: all conversations)", action: .search),
        KeyBinding(keys: [.char("n")], help: "the next (older) match of a search; Esc ends it", action: .searchOlder),
        KeyBinding(keys: [.char("N")], help: "the previous (newer) match", action: .searchNewer),
        KeyBinding(keys: [.pageUp], help: "scroll the messages (or the focused log) back", action: .scrollUp),
        KeyBinding(keys: [.pageDown], help: "scroll forward", action: .scrollDown),
        KeyBinding(keys: [.end], help: "jump to the newest message (or log line)", action: .scrollEnd),
        KeyBinding(keys: [.home], help: "jump to the oldest message", action: .scrollOldest),
        KeyBinding(keys: [.char("z")], help: "show long messages whole, or folded to their first rows", action: .toggleFold),
        KeyBinding(keys: [.char("a")], help: "add a contact by address", action: .addContact),
        KeyBinding(keys: [.char("E")], help: "rename the selected contact", action: .renameContact),
        KeyBinding(keys: [.char("M")], help: "mute / unmute the selected contact", action: .toggleMute),
        KeyBinding(keys: [.char("b")], help: "send the app to the background", action: .background),
        KeyBinding(keys: [.char("f")], help: "bring the app to the foreground", action: .foreground),
        KeyBinding(keys: [.char("o")], help: "open the latest notification's conversation", action: .openBanner),
        KeyBinding(keys: [.char("p")], help: "push fault: ok → drop all → delay 90s → ok", action: .cyclePushFault),
        KeyBinding(keys: [.char("r")], help: "realtime down / up", action: .toggleRealtime),
        KeyBinding(keys: [.char("s")], help: "make the realtime connection stale (silent)", action: .makeStale),
        KeyBinding(keys: [.char("x")], help: "indexer down / up", action: .toggleIndexer),
        KeyBinding(keys: [.char("t")], help: "expire the push token", action: .expireToken),
        KeyBinding(keys: [.char("A")], help: "airplane mode: the device's network off / on", action: .toggleNetwork),
        KeyBinding(keys: [.char("S")], help: "sync now (forced catch-up)", action: .syncNow),
        KeyBinding(keys: [.char("R")], help: "retry now the messages the network refused", action: .retrySends),
        KeyBinding(keys: [.char("m")], help: "notification mode: remote-push → background-fetch → off", action: .cycleMode),
        KeyBinding(keys: [.char("v")], help: "notification preview: message → contact → hidden", action: .cyclePreview),
        KeyBinding(keys: [.char("l")], help: "show / hide the sync log", action: .toggleLog),
        KeyBinding(keys: [.char("L")], help: "sync log: decisions only / everything (message arrivals too)", action: .toggleLogFilter),
        KeyBinding(keys: [.char("+"), .char("=")], help: "simulated time faster (up to ×300)", action: .faster),
        KeyBinding(keys: [.char("-")], help: "simulated time slower (down to ×0.25)", action: .slower),
        KeyBinding(keys: [.char(" ")], help: "pause / resume simulated time", action: .togglePause),
        KeyBinding(keys: [.char(".")], help: "while paused: step to the next event of the log", action: .step),
        KeyBinding(keys: [.char("i")], help: "inspector: the engine's push, gate, cursors, timers and faults", action: .toggleInspector),
        KeyBinding(keys: [.char("T")], help: "timeline of the last hour: app, push, catch-ups, faults, requests", action: .toggleTimeline),
        KeyBinding(keys: [.char("?")], help: "this help", action: .toggleHelp),
        KeyBinding(keys: [.char("q"), .ctrl("c")], help: "quit", action: .quit),
    ]

    /// Keys inside the compose line; any other printable character is typed.
    public static let compose: [KeyBinding] = [
        KeyBinding(keys: [.enter], help: "send", action: .send),
        KeyBinding(keys: [.ctrl("j"), .altEnter], help: "a new line in the message (a paste keeps its own)", action: .newline),
        KeyBinding(keys: [.left], help: "cursor left", action: .left),
        KeyBinding(keys: [.right], help: "cursor right", action: .right),
        KeyBinding(keys: [.home, .ctrl("a")], help: "start of line", action: .home),
        KeyBinding(keys: [.end, .ctrl("e")], help: "end of line", action: .end),
        KeyBinding(keys: [.backspace], help: "delete before the cursor", action: .backspace),
        KeyBinding(keys: [.delete], help: "delete under the cursor", action: .delete),
        KeyBinding(keys: [.ctrl("u")], help: "delete to the start of the line", action: .killToStart),
        KeyBinding(keys: [.ctrl("w")], help: "delete the word before the cursor", action: .killWord),
        KeyBinding(keys: [.up], help: "history: an earlier line", action: .historyUp),
        KeyBinding(keys: [.down], help: "history: a later line", action: .historyDown),
        KeyBinding(keys: [.escape], help: "leave the compose line", action: .leaveCompose),
        KeyBinding(keys: [.tab], help: "leave it for the next pane (sync log, conversations)", action: .focusNext),
        KeyBinding(keys: [.ctrl("c")], help: "quit", action: .quit),
    ]

    /// The binding of `table` for `key`.
    public static func action(for key: Key, in table: [KeyBinding]) -> KeyAction? {
        table.first { $0.keys.contains(key) }?.action
    }

    /// The help overlay's two sections, one line per binding, outside the compose line and in it.
    public static func helpSections(_ map: KeyMap = .standard) -> (global: [(label: String, help: String)], compose: [(label: String, help: String)]) {
        (map.global.filter { !$0.keys.isEmpty }.map { ($0.label, $0.help) }, map.compose.filter { !$0.keys.isEmpty }.map { ($0.label, $0.help) })
    }
}

/// The key table in force: the standard one, perhaps rebound by keys.toml.
public struct KeyMap: Equatable, Sendable {
    public var global: [KeyBinding]
    public var compose: [KeyBinding]

    public init(global: [KeyBinding], compose: [KeyBinding]) {
        self.global = global
        self.compose = compose
    }

    public static let standard = KeyMap(global: KeyTable.global, compose: KeyTable.compose)

    /// `action` answers `keys` from now on, in the compose line's table or the other; any
    /// other action of that table loses those keys. Returns the actions left with no key.
    @discardableResult
    public mutating func rebind(_ action: KeyAction, to keys: [Key], inCompose: Bool) -> [KeyAction] {
        var table = inCompose ? compose : global
        guard let i = table.firstIndex(where: { $0.action == action }) else { return [] }
        var orphaned: [KeyAction] = []
        for j in table.indices where j != i {
            let before = table[j].keys
            table[j].keys.removeAll { keys.contains($0) }
            if !before.isEmpty, table[j].keys.isEmpty { orphaned.append(table[j].action) }
        }
        table[i].keys = keys
        if inCompose { compose = table } else { global = table }
        return orphaned
    }
}
