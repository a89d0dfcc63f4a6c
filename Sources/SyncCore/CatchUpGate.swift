// Catch-up sync gate — SPEC §3 rules 6–8.
//
// Decides whether a trigger starts a catch-up, joins the one running, or is skipped.
//
//     idle ──trigger (allowed)──▶ running(full | light) ──finished──▶ idle
//       │                            │ ▲
//       └─trigger (debounced)─▶ skip │ └── trigger while running: join (rule 8)
//
// The debounce is a comparison with `lastFinishedAt`. Timers: (c)'s trailing catch-up, and
// the retry of a catch-up that failed in the foreground (an indexer error stores nothing
// and moves no cursor, rule 9; without a retry nothing would ask again until the next
// foreground). Retries back off 30 s, 60 s, 2 min, then every 5 min, until one succeeds;
// the backoff starts over whenever a failed catch-up still got some answers (the indexer is
// up and only some replies were bad), so a few broken documents cost 30 s, not 5 min.
// Persisted (rule 5): the time the last catch-up finished.

public struct CatchUpGate: Sendable {
    public struct Persisted: Hashable, Sendable {
        public var lastFinishedAt: Instant?
        public init(lastFinishedAt: Instant? = nil) { self.lastFinishedAt = lastFinishedAt }
    }

    public enum SyncKind: String, Sendable {
        /// Rule 9: handshakes, every conversation in and out, payments.
        case full
        /// Improvement (b): the UTXO set's gap, fetched by id.
        case targeted
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
    public let policy: SyncPolicy
    /// The first of the syncs running (the only one unless the policy lets them overlap).
    public private(set) var running: Running?
    public private(set) var runningCount = 0
    public private(set) var lastFinishedAt: Instant?
    /// Improvement (c): when the trailing catch-up is due.
    public private(set) var trailingDue: Instant?
    /// When the failed catch-up is tried again.
    public private(set) var retryDue: Instant?
    private var failuresInARow = 0
    /// Delays before retrying a failed foreground catch-up (not in the §3 table).
    public var retryBackoff: [Interval] = [.seconds(30), .seconds(60), .minutes(2), .minutes(5)]

    public init(settings: SyncSettings = .default, policy: SyncPolicy = .seed, restoring persisted: Persisted = Persisted()) {
        self.settings = settings
        self.policy = policy
        self.lastFinishedAt = persisted.lastFinishedAt
    }

    public var nextDeadline: Instant? { [trailingDue, retryDue].compactMap { $0 }.min() }

    public var persisted: Persisted { Persisted(lastFinishedAt: lastFinishedAt) }

    /// Rules 6–8 for one trigger. `forced` triggers (entering `unreliable`, a manual sync)
    /// ignore the debounce but still never start a second sync.
    public mutating func triggered(_ trigger: CatchUpTrigger, forced: Bool, pushState: PushState, now: Instant,
                                   foreground: Bool = true) -> Action {
        guard policy.gated else {
            // naive: every trigger starts its own sync, whatever is running.
            runningCount += 1
            if running == nil { running = Running(kind: .full, trigger: trigger.rawValue, startedAt: now) }
            return .start(trigger: trigger, forced: forced)
        }
        if let running {
            return .join(trigger: trigger, running: running)  // rule 8: single flight
        }
        if !forced, pushState == .reliable, let left = debounceRemaining(pushState: pushState, now: now) {
            // (c): remember to catch up when the debounce ends, if still in the foreground.
            if policy.trailingCatchUp, foreground { trailingDue = now + left }
            return .skip(trigger: trigger, lastFinishedAgo: now - lastFinishedAt!, nextAllowedIn: left)  // rule 6
        }
        running = Running(kind: .full, trigger: trigger.rawValue, startedAt: now)  // rules 6–7
        runningCount = 1
        return .start(trigger: trigger, forced: forced)
    }

    /// The running catch-up is of another kind than the full one `triggered` assumed: (b)'s
    /// targeted sync, or a targeted one that fell back to full. Joins name the right one.
    public mutating func runningIs(_ kind: SyncKind) {
        running?.kind = kind
    }

    /// The triggers now due: a retry, (c)'s trailing catch-up. A spurious wake-up returns none.
    public mutating func deadlineReached(now: Instant) -> [CatchUpTrigger] {
        var due: [CatchUpTrigger] = []
        if let at = retryDue, at <= now {
            retryDue = nil
            due.append(.retry)
        }
        if let at = trailingDue, at <= now {
            trailingDue = nil
            due.append(.trailing)
        }
        return due
    }

    /// (c) and retries are for the foreground: the next foreground asks again anyway.
    public mutating func enteredBackground() {
        trailingDue = nil
        retryDue = nil
    }

    /// Rule 14's light sync shares the single flight with catch-ups.
    public mutating func lightSyncRequested(now: Instant) -> LightAction {
        if policy.gated, let running { return .busy(running: running) }
        runningCount += 1
        if running == nil { running = Running(kind: .light, trigger: "background-refresh", startedAt: now) }
        return .start
    }

    /// A running sync ended. Only a complete catch-up (full, or a proven gap) restarts the
    /// debounce: a light sync covers a few conversations, and a failed one covered nothing.
    /// A failed catch-up in the foreground schedules a retry; a complete one cancels it.
    /// `progressed`: some of the failed catch-up's requests were answered.
    public mutating func finished(kind: SyncKind, succeeded: Bool, now: Instant, foreground: Bool = true, progressed: Bool = false) {
        guard runningCount > 0 else {
            preconditionFailure("CatchUpGate.finished while idle")
        }
        runningCount -= 1
        if runningCount == 0 { running = nil }
        guard kind != .light else { return }
        if succeeded {
            lastFinishedAt = now
            trailingDue = nil  // (c): caught up, nothing left to trail
            retryDue = nil
            failuresInARow = 0
        } else if foreground {
            if progressed { failuresInARow = 0 }
            retryDue = now + retryBackoff[min(failuresInARow, retryBackoff.count - 1)]
            failuresInARow += 1
        }
    }

    /// Rule 6's time left before a non-forced trigger may run, or nil when it may run now.
    /// Only meaningful while push is reliable; nil otherwise (rule 7).
    public func debounceRemaining(pushState: PushState, now: Instant) -> Interval? {
        guard pushState == .reliable, let last = lastFinishedAt else { return nil }
        let elapsed = now - last
        return elapsed < settings.catchUpDebounce ? settings.catchUpDebounce - elapsed : nil
    }
}
