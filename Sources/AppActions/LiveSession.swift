import SyncCore
import SyncEngine

/// What the live TUI drives: the engine's runner on a clock, and a world it applies
/// directives to. `AppSession` is the embedded world; a client of `synchat server` is
/// another (WorldClient's `NetworkSession`), with the same engine, keys and screen.
/// It offers queries, not its parts (issue 29 #5): a screen asks it for contacts, unread
/// counts, a page of messages, a search, and hears the engine's events; it does not reach
/// into the engine's runner or the store.
public protocol LiveSession: AnyObject {
    var scheduler: Scheduler { get }
    /// Every event of the engine from now on, in order.
    func subscribe(_ listener: @escaping (TimedEvent) -> Void)
    /// The contacts (conversations) as the engine knows them.
    var contacts: [Contact] { get }
    func contact(_ address: Address) -> Contact?
    /// Unread messages by conversation, and each conversation's last activity: one query each.
    func unreadCounts() -> [Address: Int]
    func lastActivity() -> [Address: Instant]
    /// A page of a conversation's history, newest last: `limit` messages before `before`.
    func messages(in conversation: Address, before: Instant?, limit: Int) -> [StoredMessage]
    /// The store's full-text search: one conversation, or all (nil).
    func search(_ query: SearchQuery, in conversation: Address?, limit: Int) -> [StoredMessage]
    /// Asks the engine for its `.inspection` events, or stops.
    func inspect(_ on: Bool)
    /// Every decision so far (what happened before a screen opened goes to its log).
    var log: [TimedEvent] { get }
    /// Whether `log` grows: a screen takes what came before it, then stops it (its log pane
    /// keeps its own last lines, and a session of days would hold every decision).
    var keepsLog: Bool { get set }
    /// A conversation opened by a directive (a played `open NAME`): a screen shows it.
    var onOpen: ((Address) -> Void)? { get set }
    /// A `quit` directive came.
    var quitRequested: Bool { get }
    /// The faults of the world now, in the words of their directives.
    var activeFaults: [String] { get }
    /// Told whenever `activeFaults` changes, whoever changed it (a key, a scenario line, the
    /// world ending one by itself, a server's operator): a screen hears it, it does not poll.
    var onFaultsChanged: (([String]) -> Void)? { get set }
    /// Applies one directive now: a key, or a scenario line.
    func apply(_ d: Directive)
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
    /// Whether `activeFaults` is the world's whole truth, so a screen may set it beside what
    /// the engine believes (the embedded world: yes; a server's client knows only the faults
    /// it was told of, and says nothing rather than pretend).
    var knowsTruth: Bool { get }
}

/// A session that runs the engine's runner over a store: the screen's queries answered from
/// them, in one place for the embedded world and a server's client.
public protocol DriverBackedSession {
    var driver: SyncDriver { get }
    var storage: ChatStorage { get }
}

extension LiveSession where Self: DriverBackedSession {
    public func subscribe(_ listener: @escaping (TimedEvent) -> Void) { driver.subscribe(listener) }
    public var contacts: [Contact] { driver.contacts }
    public func contact(_ address: Address) -> Contact? { driver.contact(address) }
    public func unreadCounts() -> [Address: Int] { storage.unreadCounts() }
    public func lastActivity() -> [Address: Instant] { storage.lastActivity() }
    public func messages(in conversation: Address, before: Instant?, limit: Int) -> [StoredMessage] {
        storage.messages(in: conversation, before: before, limit: limit)
    }
    public func search(_ query: SearchQuery, in conversation: Address?, limit: Int) -> [StoredMessage] {
        (storage as? MessageSearching)?.search(query, in: conversation, limit: limit) ?? []
    }
    public func inspect(_ on: Bool) { driver.handle(.inspect(on)) }
}

