// Improvement (e), "verify push when realtime cannot" (docs/spec.md#policies).
//
// Rule 2's evidence needs the realtime channel: with realtime down in the foreground, a push
// service that drops everything is never caught, push stays believed `reliable`, and rule 13
// does not poll in `remote-push`. Nothing reaches the user. So while the app is in the
// foreground, realtime has not been live for `verifyInterval` (offline, stale found by the
// keepalive, or connecting that long) and push is not `unreliable`, the engine asks the
// indexer's tip every `verifyInterval` (one small request). What the tip reveals is fetched
// by the objects that moved; a message push did not bring within the grace is a miss
// (rule 3 through (a)), so a dead push falls to `unreliable`, and polling (rule 13, extended
// to `remote-push` while push is unreliable) takes over. Live realtime again ends it all.
//
//     idle ──foreground, realtime not live, push not unreliable──▶ waiting(due) ──due──▶ check ──▶ waiting(due + interval)
//       ▲                                                             │
//       └──────────────── realtime live, background, push unreliable ─┘
//
// Timer: `nextDeadline` while waiting. Pure: the engine passes the conditions in.

public struct PushVerifier: Sendable {
    public enum Action: Equatable, Sendable {
        /// Verifying began (realtime has not been live for `verifyInterval`).
        case started(reason: String)
        /// Verifying ended.
        case stopped(reason: String)
        /// Ask the indexer's tip now.
        case check
    }

    public let policy: SyncPolicy
    /// How long realtime is not live before the first check, and the time between checks.
    public var verifyInterval: Interval = .seconds(60)
    /// Checks are running (the conditions have held for `verifyInterval`).
    public private(set) var active = false
    /// The next check (or, before the first, when the conditions will have held long enough).
    public private(set) var dueAt: Instant?
    private var notLiveSince: Instant?
    private var pushState: PushState = .unknown

    public init(policy: SyncPolicy = .seed) {
        self.policy = policy
    }

    public var nextDeadline: Instant? { dueAt }

    /// Re-evaluates the conditions; called whenever lifecycle, realtime or push state change.
    /// `notLiveSince`: since when realtime has not been live in this foreground (nil: live).
    /// `polling`: rule 13 polls now (another mode than `remote-push`, or push unreliable):
    /// the polls already fetch what push would have brought.
    public mutating func conditionsChanged(foreground: Bool, notLiveSince since: Instant?, pushState: PushState, polling: Bool,
                                           now: Instant) -> [Action] {
        self.pushState = pushState
        guard policy.verifyPushWithoutRealtime, foreground, let since, pushState != .unreliable, !polling else {
            notLiveSince = nil
            dueAt = nil
            guard active else { return [] }
            active = false
            let why = !foreground ? "app not in foreground" : since == nil ? "realtime is live again"
                : pushState == .unreliable ? "push is unreliable: polling takes over" : "polling covers it"
            return [.stopped(reason: why)]
        }
        if dueAt == nil || notLiveSince != since {
            notLiveSince = since
            if !active { dueAt = max(now, since + verifyInterval) }
        }
        return []
    }

    /// The deadline passed: check now, and again `verifyInterval` later (the first check
    /// starts the checks). A spurious wake-up returns nothing.
    public mutating func deadlineReached(now: Instant) -> [Action] {
        guard let due = dueAt, due <= now, let since = notLiveSince else { return [] }
        dueAt = now + verifyInterval
        guard !active else { return [.check] }
        active = true
        return [.started(reason: "realtime not live since \(since), push \(pushState.rawValue): nothing else would notice a silent push; "
                             + "the indexer's tip every \(verifyInterval)"), .check]
    }
}
