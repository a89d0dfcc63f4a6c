// Catch-up sync gate — SPEC §3 rules 6–8.
//
// Decides whether a trigger starts a catch-up, joins the one running, or is skipped.
//
//     idle ──trigger (allowed)──▶ running(full | light) ──finished──▶ idle
//       │                            │ ▲
//       └─trigger (debounced)─▶ skip │ └── trigger while running: join (rule 8)
//
// No timers of its own: the debounce is a comparison with `lastFinishedAt`.
// Persisted (rule 5): the time the last catch-up finished.

public struct CatchUpGate: Sendable {
    public struct Persisted: Hashable, Sendable {
        public var lastFinishedAt: Instant?
        public init(lastFinishedAt: Instant? = nil) { self.lastFinishedAt = lastFinishedAt }
    }

    public enum SyncKind: String, Sendable {
        /// Rule 9: handshakes, every conversation in and out, payments.
        case full
        /// Rule 14: contextual messages of the most recent conversations, on a time budget.
        case light
    }

    public struct Running: Hashable, Sendable {
        public var kind: SyncKind
        public var trigger: String
        public var startedAt: Instant
    }

    public enum Action: Equatable, Sendable {
        /// Start a full catch-up now.
        case start(trigger: CatchUpTrigger, forced: Bool)
        /// A sync is already running: this trigger rides on it (rule 8).
        case join(trigger: CatchUpTrigger, running: Running)
        /// Rule 6: push is reliable and the last catch-up is too recent.
        case skip(trigger: CatchUpTrigger, lastFinishedAgo: Interval, nextAllowedIn: Interval)
    }

    public enum LightAction: Equatable, Sendable {
        /// Start a light sync now.
        case start
        /// A sync is already running; the refresh has nothing to add.
        case busy(running: Running)
    }

    public let settings: SyncSettings
    public private(set) var running: Running?
    public private(set) var lastFinishedAt: Instant?

    public init(settings: SyncSettings = .default, restoring persisted: Persisted = Persisted()) {
        self.settings = settings
        self.lastFinishedAt = persisted.lastFinishedAt
    }

    public var persisted: Persisted { Persisted(lastFinishedAt: lastFinishedAt) }

    /// Rules 6–8 for one trigger. `forced` triggers (entering `unreliable`, a manual sync)
    /// ignore the debounce but still never start a second sync.
    public mutating func triggered(_ trigger: CatchUpTrigger, forced: Bool, pushState: PushState, now: Instant) -> Action {
        if let running {
            return .join(trigger: trigger, running: running)  // rule 8: single flight
        }
        if !forced, pushState == .reliable, let left = debounceRemaining(pushState: pushState, now: now) {
            return .skip(trigger: trigger, lastFinishedAgo: now - lastFinishedAt!, nextAllowedIn: left)  // rule 6
        }
        running = Running(kind: .full, trigger: trigger.rawValue, startedAt: now)  // rules 6–7
        return .start(trigger: trigger, forced: forced)
    }

    /// Rule 14's light sync shares the single flight with catch-ups.
    public mutating func lightSyncRequested(now: Instant) -> LightAction {
        if let running { return .busy(running: running) }
        running = Running(kind: .light, trigger: "background-refresh", startedAt: now)
        return .start
    }

    /// The running sync ended. Only a complete full catch-up restarts the debounce: a light
    /// sync covers a few conversations, and a failed one covered nothing for sure.
    public mutating func finished(succeeded: Bool, now: Instant) {
        guard let ended = running else {
            preconditionFailure("CatchUpGate.finished while idle")
        }
        running = nil
        if succeeded, ended.kind == .full { lastFinishedAt = now }
    }

    /// Rule 6's time left before a non-forced trigger may run, or nil when it may run now.
    /// Only meaningful while push is reliable; nil otherwise (rule 7).
    public func debounceRemaining(pushState: PushState, now: Instant) -> Interval? {
        guard pushState == .reliable, let last = lastFinishedAt else { return nil }
        let elapsed = now - last
        return elapsed < settings.catchUpDebounce ? settings.catchUpDebounce - elapsed : nil
    }
}
