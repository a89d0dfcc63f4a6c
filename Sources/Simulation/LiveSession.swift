import AppActions
import SyncCore
import SyncEngine

/// What the live TUI drives: the engine's runner on a clock, and a world it applies
/// directives to. `AppSession` is the embedded world; a client of `synchat server` is
/// another (WorldClient's `NetworkSession`), with the same engine, keys and screen.
public protocol LiveSession: AnyObject {
    var scheduler: Scheduler { get }
    var driver: SyncDriver { get }
    var storage: ChatStorage { get }
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
    /// Applies one directive now: a key, or a scenario line.
    func apply(_ d: Directive)
    /// Runs everything due up to `target` (and, on a network, what the network brought).
    func advance(to target: Instant)
    /// Saves what a relaunch resumes from.
    func checkpoint()
    /// The handle of a contact by its address (for the lines a recorder writes).
    func handle(of address: Address) -> String?
    /// Readable when the network brought something: the screen's loop waits on it beside
    /// the keyboard. Nil for the embedded world, whose events are all on the clock.
    var wakeDescriptor: Int32? { get }
    /// The clock's speed when it is not the screen's to change (a server's clock); nil when
    /// `+`, `-` and space change it.
    var fixedSpeed: Double? { get }
}

extension AppSession: LiveSession {
    public var wakeDescriptor: Int32? { nil }
    public var fixedSpeed: Double? { nil }
}
