import Directives
import SyncCore
import SyncEngine

/// What the live TUI drives: the app (`ClientApp`, the engine's runner on a clock and its
/// store) and a world it applies directives to. `AppSession` is the embedded world; a client
/// of `synchat server` is another (ServerClient's `NetworkSession`), with the same engine, keys
/// and screen. It offers queries, not its parts: a screen asks it for contacts, unread counts,
/// a page of messages, a search, and hears the app's events; it does not reach into the
/// engine's runner or the store.
public protocol LiveSession: AnyObject {
    /// The app: the one stream of events, the log, the truth of the world beside belief.
    var app: ClientApp { get }
    var storage: ChatStorage { get }
    /// Applies one directive now: a key, or a scenario line.
    func apply(_ d: Directive)
    /// A fault key (`p`, `r`, `x`, `A`): one step from the world's faults now.
    func toggle(_ t: FaultToggle)
    /// Runs everything due up to `target` (and, on a network, what the network brought).
    func advance(to target: Instant)
    /// Saves what a relaunch resumes from.
    func checkpoint()
    /// Readable when the network brought something: the screen's loop waits on it beside
    /// the keyboard. Nil for the embedded world, whose events are all on the clock.
    var wakeDescriptor: Int32? { get }
    /// The clock's speed when it is not the screen's to change (a server's clock); nil when
    /// `+`, `-` and space change it.
    var fixedSpeed: Double? { get }
}

extension LiveSession {
    /// The embedded world's faults change as they are applied: the step is taken at once.
    public func toggle(_ t: FaultToggle) {
        for d in t.directives(from: faults) { apply(d) }
    }

    public var scheduler: Scheduler { app.scheduler }
    /// Every event of the app from now on, in order.
    public func subscribe(_ listener: @escaping (TimedEvent) -> Void) { app.subscribe(listener) }
    /// The contacts (conversations) as the engine knows them.
    public var contacts: [Contact] { app.driver.contacts }
    public func contact(_ address: Address) -> Contact? { app.driver.contact(address) }
    /// Unread messages by conversation, as the engine counts them (the `.unread` events keep a
    /// screen's list from there), and each conversation's last activity (one query).
    public func unreadCounts() -> [Address: Int] { app.driver.engine.unreadCounts }
    public func lastActivity() -> [Address: Instant] { storage.lastActivity() }
    /// A page of a conversation's history, newest last: `limit` messages before `before`.
    public func messages(in conversation: Address, before: Instant?, limit: Int) -> [StoredMessage] {
        storage.messages(in: conversation, before: before, limit: limit)
    }
    /// The store's full-text search: one conversation, or all (nil).
    public func search(_ query: SearchQuery, in conversation: Address?, limit: Int) -> [StoredMessage] {
        (storage as? MessageSearching)?.search(query, in: conversation, limit: limit) ?? []
    }
    /// Asks the engine for its `.inspection` events, or stops.
    public func inspect(_ on: Bool) { app.driver.handle(.inspect(on)) }
    /// Every decision so far (what happened before a screen opened goes to its log).
    public var log: [TimedEvent] { app.log }
    /// Whether `log` grows: a screen takes what came before it, then stops it.
    public var keepsLog: Bool {
        get { app.keepsLog }
        set { app.keepsLog = newValue }
    }
    /// A conversation opened by a directive (a played `open NAME`): a screen shows it.
    public var onOpen: ((Address) -> Void)? {
        get { app.onOpen }
        set { app.onOpen = newValue }
    }
    /// A `quit` directive came.
    public var quitRequested: Bool { app.quitRequested }
    /// The world's faults now, as the world said them.
    public var faults: WorldFaults { app.faults }
    /// Told whenever what a screen shows of the world's truth changes (its faults, whoever
    /// changed them; the kinds the engine has not noticed yet): a screen hears it, it does not poll.
    public var onTruthChanged: ((WorldTruth) -> Void)? {
        get { app.onTruthChanged }
        set { app.onTruthChanged = newValue }
    }
    /// Told, at once and then at each change, whether the world is reached (a server's may not be).
    public var onLinkChanged: ((ServerLink) -> Void)? {
        get { app.onLinkChanged }
        set { app.onLinkChanged = newValue }
    }
}
