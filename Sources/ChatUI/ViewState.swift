import ClientRuntime
import SyncCore
import SyncEngine

/// A conversation as the list shows it. `name` is already sanitised.
public struct ConversationRow: Equatable, Sendable {
    public var address: Address
    /// The contact's handle: what a directive names it by (`send alice …`, `open alice`).
    public var handle: String
    public var name: String
    public var unread: Int
    public var muted: Bool
    public var lastActivity: Instant?

    /// `handle` nil: the address, the name a directive also takes.
    public init(address: Address, handle: String? = nil, name: String, unread: Int, muted: Bool, lastActivity: Instant?) {
        self.address = address
        self.handle = handle ?? address.value
        self.name = UntrustedText.visible(name)
        self.unread = unread
        self.muted = muted
        self.lastActivity = lastActivity
    }
}

/// A message as the pane shows it. Sender and text are sanitised here, once, at the
/// boundary where untrusted text enters the view state (docs/design.md).
public struct MessageRow: Equatable, Sendable {
    public var txId: String
    public var outgoing: Bool
    public var sender: String
    public var text: String
    public var kind: MessageKind
    public var blockTime: Instant
    public var channel: Channel

    public init(txId: String, outgoing: Bool, sender: String, text: String, kind: MessageKind, blockTime: Instant, channel: Channel) {
        self.txId = txId
        self.outgoing = outgoing
        self.sender = UntrustedText.visible(sender)
        self.text = UntrustedText.visible(text, newlines: .kept)  // the pane starts a line at each
        self.kind = kind
        self.blockTime = blockTime
        self.channel = channel
    }
}

public struct BannerRow: Equatable, Sendable {
    public var conversation: Address
    public var title: String
    public var body: String
    public var at: Instant

    public init(conversation: Address, title: String, body: String, at: Instant) {
        self.conversation = conversation
        self.title = UntrustedText.visible(title)
        self.body = UntrustedText.visible(body, newlines: .marked)  // a banner has one row
        self.at = at
    }
}

/// Everything the status bar says (docs/screen.md): the engine's status as its last `.status`
/// event said it, and the app's own clock, speed and script.
public struct StatusInfo: Equatable, Sendable {
    public var engine = EngineStatus()
    /// The world's clock, the one clock on screen (status bar and log).
    public var clock: Instant = .zero
    public var speed: Double = 1
    /// Where a played scenario is; nil without one. The bar says it with the clock
    /// (`script 3m/15m`, `script over: live`: `script`).
    public var scriptPhase: ScriptPhase?
    /// A played scenario's progress in the bar's words, at the clock shown.
    public var script: String? { scriptPhase?.status(at: clock) }
    /// The world's clock is stopped (`space`); `.` steps it.
    public var paused = false
    /// The clock is a server's, at this speed (nil: the app's own, which the keys pace).
    public var serverClock: Double?
    /// The world's faults, and truth beside belief (what the engine has not noticed yet), as
    /// the session last told them: the session's `BeliefLag` decides; the view only shows.
    public var truth = WorldTruth()
    /// Whether the world is reached, as the session last said.
    public var link = ServerLink.reached
    public var faults: WorldFaults { truth.faults }
    public var knowsTruth: Bool { truth.known }

    public init() {}

    public var lifecycle: Lifecycle { engine.lifecycle }
    public var mode: NotificationMode { engine.mode }
    public var preview: PreviewMode { engine.preview }
    public var badge: Int { engine.badge }
}

/// Where the `new` line goes: above the first of the `unread` messages a conversation had
/// when it was opened (`txId` once its history is there).
public struct NewMarker: Equatable, Sendable {
    public var conversation: Address
    public var unread: Int
    public var txId: String?

    public init(conversation: Address, unread: Int, txId: String? = nil) {
        self.conversation = conversation
        self.unread = unread
        self.txId = txId
    }
}

public enum Focus: String, Sendable {
    case list, messages, compose, log
}

/// The whole screen as values. The reducer changes it; `render` draws it.
public struct ViewState: Equatable, Sendable {
    /// How this terminal draws emoji sequences (the adapter finds it out at start); the render
    /// lays text out with it.
    public var emojiWidths: EmojiWidths = .safe
    public var conversations: [ConversationRow] = []
    /// Index into `conversations` of the highlighted row.
    public var selected = 0
    /// The conversation shown in the message pane.
    public var open: Address?
    public var messages: [Address: [MessageRow]] = [:]
    /// Conversations whose loaded messages do not reach back to their first: a
    /// conversation's history is loaded a page at a time, the newest first, and older pages
    /// when the view scrolls near the top of what is loaded or a search hit lies beyond it.
    public var partialHistory: Set<Address> = []
    public var focus: Focus = .list
    /// The unsent line of each conversation, with its cursor. One per conversation, so that
    /// text written for one person is never sent to another after switching.
    public var drafts: [Address: LineEditor] = [:]
    /// The lines sent, for ↑/↓ in any conversation's compose line.
    public var history = ComposeHistory()
    /// Lines scrolled back from the newest message (0: at the bottom).
    public var scroll = 0
    public var showLog = true
    /// Long messages shown whole (`z`); else folded to their first rows (docs/screen.md).
    public var wholeMessages = false
    /// `scroll` set by `Home`: as far back as there is. The frame says where that is
    /// (`Grid.messageScroll`), and the view takes it (`.messagesShown`).
    public static let oldest = Int.max / 8
    /// The sync log's entries, oldest first, at most `logCapacity`.
    public var log: [LogEntry] = []
    /// Entries ever appended: entry `i` of `log` is number `logCount - log.count + i`.
    public var logCount = 0
    public var logFilter = LogFilter.decisions
    /// Rows scrolled back from the newest (0: following the newest line).
    public var logScroll = 0
    /// While scrolled back, the view stays on the entries before this number, so that new
    /// lines do not move it (the title counts them).
    public var logFrozenAt: Int?
    public var status = StatusInfo()
    /// Notification banners raised while backgrounded, newest last.
    public var banners: [BannerRow] = []
    public var showHelp = false
    /// The keys in force (keys.toml may rebind the standard ones); they dispatch and the
    /// help overlay is made from them.
    public var keys = KeyMap.standard
    /// Lines the help is scrolled by (the render clamps it to what there is).
    public var helpScroll = 0
    /// Adding or renaming a contact: its prompt on the compose line.
    public var prompt: ContactPrompt?
    /// A search: its prompt, or its query and hits (`/`, `n`, `N`, Esc ends it).
    public var search: SearchState?
    /// The `new` line of the open conversation: above its first unread message.
    public var newMarker: NewMarker?
    /// Messages written and not yet taken by the network, by conversation, oldest first.
    public var outbox: [Address: [OutgoingMessage]] = [:]
    /// The last hour as a strip above the compose line (`T`); kept whether shown or not.
    public var showTimeline = false
    public var timeline = TimelineStrip()
    /// The inspector (`i`) shows in place of the message pane.
    public var showInspector = false
    /// The engine's last `.inspection`; nil while the inspector is closed.
    public var inspection: EngineInspection?
    public var quitting = false
    /// `--bell`: a message in a conversation you are not reading rings the terminal's bell.
    public var bellEnabled = false
    /// URLs in messages are hyperlinks (OSC 8); `--links off` draws them as plain text.
    public var linksEnabled = true
    /// Whether the terminal has the focus, and the desktop notifications while it has not.
    public var attention = DesktopAttention()

    /// The terminal's title: the app's own words and the unread count, never a message or a
    /// name; no count when the preview is `hidden`.
    public var terminalTitle: String {
        let unread = status.badge
        return unread > 0 && status.preview != .hidden ? "synchat (\(unread) unread)" : "synchat"
    }

    /// A profile keeps unsent lines across a quit; without one, q asks first.
    public var keepsDrafts = false
    /// q was pressed once with an unsent line that would be lost.
    public var quitAsked = false
    /// A one-line notice (e.g. a theme warning), shown until the next key.
    public var notice: String?
    /// The notice came in the middle of things, with no key asking for it (a played
    /// scenario's end): the next letter only answers it. A notice that answers a key (`n` at
    /// the newest hit, `q` with an unsent line) or greets the start leaves the next key its own.
    public var noticeUnbidden = false
    /// A key came since the server said it no longer knows the user (its words stay shown
    /// while that is true; only the first letter after they appear is theirs).
    public var forgottenSeen = false

    /// A notice is on the screen that nobody's key asked for: a letter typed then acts as
    /// no key, so a person who starts typing as it appears breaks nothing.
    public var noticeUp: Bool {
        if notice != nil, noticeUnbidden { return true }
        if case .forgotten = status.link { return !forgottenSeen }
        return false
    }

    public static let logCapacity = 2000

    public init() {}

    public var selectedConversation: ConversationRow? {
        conversations.indices.contains(selected) ? conversations[selected] : nil
    }

    public var openRow: ConversationRow? { conversations.first { $0.address == open } }

    /// The compose line shown: the open conversation's draft (empty when it has none).
    public var compose: LineEditor { open.flatMap { drafts[$0] } ?? LineEditor() }
}

/// A page of history the screen needs from the store: the latest `limit` messages of
/// `conversation` older than `before` (the newest when nil).
public struct HistoryPage: Equatable, Sendable {
    public var conversation: Address
    public var before: Instant?
    public var limit: Int
}

extension ViewState {
    /// Messages loaded per page: a few screens of a tall terminal.
    public static let historyPage = 500
    /// Scrolled within this many rows of the top of what is loaded, the next page is asked for.
    static let historyMargin = 200

    /// The page of history the screen needs and does not have, if any. The first
    /// page of the open conversation covers its unread messages, so that the `new` line
    /// finds its place; older pages come while the view is scrolled near the top of what is
    /// loaded (a row of text is at least one message's worth, so the margin is conservative),
    /// while this conversation's current search hit is older than everything loaded, or
    /// while its first unread message is (unread counts incoming messages only).
    public var historyWanted: HistoryPage? {
        guard let open else { return nil }
        guard let list = messages[open] else {
            let unread = newMarker?.conversation == open ? newMarker?.unread ?? 0 : 0
            return HistoryPage(conversation: open, before: nil, limit: max(Self.historyPage, unread + 50))
        }
        guard partialHistory.contains(open), let first = list.first else { return nil }
        let nearTop = scroll + Self.historyMargin >= list.count
        let markerBeyond = newMarker.map { $0.conversation == open && $0.txId == nil } ?? false
        let hitBeyond = search.flatMap { s -> Bool? in
            guard s.scope == .conversation(open), let hit = s.currentHit else { return nil }
            return hit.blockTime <= first.blockTime && !list.contains { $0.txId == hit.txId }
        } ?? false
        return nearTop || hitBeyond || markerBeyond ? HistoryPage(conversation: open, before: first.blockTime, limit: Self.historyPage) : nil
    }
}

extension ViewModel {
    /// Loads what `historyWanted` asks for until it asks for nothing: `read` returns a page
    /// (oldest first) as the store has it. Each page reaches further back, or is shorter
    /// than asked and so the last, so this ends.
    public static func loadHistory(_ state: inout ViewState, read: (HistoryPage) -> [MessageRow]) {
        while let page = state.historyWanted {
            let rows = read(page)
            _ = reduce(&state, .history(page.conversation, rows, complete: rows.count < page.limit))
        }
    }
}
