// Fallback polling — docs/spec.md rule 13.
//
// In the foreground, while the realtime subscription is unavailable and the notification
// mode is not `remote-push`, sync `pollDelay` after each sync *completes* — whatever started
// that sync — never overlapping, and stop when the subscription is back. With improvement
// (e) (docs/spec.md#policies), also in `remote-push` while push is `unreliable`: push cannot be relied on
// and realtime is down, so nothing else would bring a message.
//
//     inactive ──conditions hold──▶ waiting(deadline) ──deadline──▶ polling ──sync completed──▶ waiting
//         ▲                              │                                                   │
//         └───────── conditions end ─────┴───────────────────────────────────────────────────┘
//
// Timer: `nextDeadline` while waiting. Whether a sync runs is the gate's fact (rule 8): the
// engine passes it in (`syncRunning`) rather than the poller keeping a copy.

public struct FallbackPoller: Sendable {
    public enum Action: Equatable, Sendable {
        /// Polling began; the first poll is due at `firstPollAt`.
        case started(firstPollAt: Instant, reason: StartReason)
        /// Polling ended.
        case stopped(reason: StopReason)
        /// The next poll is due at `at` (a sync just completed).
        case scheduled(at: Instant)
        /// Run a catch-up now (trigger `poll`).
        case poll
    }

    /// Why polling began: realtime unavailable in `mode` (in `remote-push`: push unreliable),
    /// and its pace.
    public struct StartReason: Equatable, Sendable {
        public enum Pace: Equatable, Sendable {
            /// naive: a fixed timer.
            case every(Interval)
            /// The first poll this long after the running sync completes.
            case afterRunningSync(Interval)
            /// The first poll when due.
            case due
        }
        public var mode: NotificationMode
        public var pace: Pace
        public init(mode: NotificationMode, pace: Pace) {
            self.mode = mode
            self.pace = pace
        }
    }

    /// Why polling ended.
    public enum StopReason: Equatable, Sendable {
        case notInForeground, realtimeBack, pushNoLongerUnreliable, modeRemotePush
    }

    public let settings: SyncSettings
    public let policy: SyncPolicy
    /// (g): how long realtime must have been gone before polling for an unreliable push (as
    /// (e) counts realtime unavailable: `PushVerifier.verifyInterval`).
    public var realtimeGoneFor: Interval = .seconds(60)
    public private(set) var active = false
    public private(set) var waitingUntil: Instant?
    private var lastCompletedAt: Instant?
    /// (e): polling in `remote-push` because push is unreliable.
    private var forUnreliablePush = false

    public init(settings: SyncSettings = .default, policy: SyncPolicy = .seed) {
        self.settings = settings
        self.policy = policy
    }

    public var nextDeadline: Instant? { active ? waitingUntil : nil }

    /// Re-evaluates rule 13's conditions. Called whenever lifecycle, realtime or mode change.
    /// `syncRunning`: a catch-up or light sync runs now (the gate's single flight).
    /// `pushUnreliable`: push is believed `unreliable` ((e) polls in `remote-push` then).
    /// `realtimeGoneSince`: since when realtime has not been live in this foreground: (g) polls
    /// for an unreliable push only once realtime has been gone `realtimeGoneFor` (a flaky socket
    /// back in seconds is not worth a poll; the reconnect's own catch-up follows anyway).
    public mutating func conditionsChanged(lifecycle: Lifecycle, realtimeAvailable: Bool, mode: NotificationMode, syncRunning: Bool,
                                           pushUnreliable: Bool = false, realtimeGoneSince: Instant? = nil, now: Instant) -> [Action] {
        let pushCannotCover = mode != .remotePush || (policy.verifyPushWithoutRealtime && pushUnreliable)
        let shouldPoll = lifecycle == .foreground && !realtimeAvailable && pushCannotCover
        if shouldPoll == active { return [] }
        active = shouldPoll
        if !shouldPoll {
            waitingUntil = nil
            let why: StopReason = lifecycle != .foreground ? .notInForeground : realtimeAvailable ? .realtimeBack
                : forUnreliablePush ? .pushNoLongerUnreliable : .modeRemotePush
            forUnreliablePush = false
            return [.stopped(reason: why)]
        }
        forUnreliablePush = mode == .remotePush
        if let every = policy.fixedPollInterval {
            waitingUntil = now  // naive: a fixed timer from now on, whatever runs
            return [.started(firstPollAt: now, reason: StartReason(mode: mode, pace: .every(every)))]
        }
        if syncRunning {
            return [.started(firstPollAt: now + settings.pollDelay, reason: StartReason(mode: mode, pace: .afterRunningSync(settings.pollDelay)))]
        }
        var due = max(now, lastCompletedAt.map { $0 + settings.pollDelay } ?? now)
        if forUnreliablePush, policy.pacedLooks { due = max(due, (realtimeGoneSince ?? now) + realtimeGoneFor) }
        waitingUntil = due
        return [.started(firstPollAt: due, reason: StartReason(mode: mode, pace: .due))]
    }

    /// Any sync started: no poll while it runs.
    public mutating func syncStarted(now: Instant) {
        if policy.fixedPollInterval == nil { waitingUntil = nil }
    }

    /// Any sync completed: the next poll waits `pollDelay` from now.
    public mutating func syncCompleted(now: Instant) -> [Action] {
        lastCompletedAt = now
        guard active, policy.fixedPollInterval == nil else { return [] }
        waitingUntil = now + settings.pollDelay
        return [.scheduled(at: now + settings.pollDelay)]
    }

    public mutating func deadlineReached(now: Instant, syncRunning: Bool) -> [Action] {
        if let fixed = policy.fixedPollInterval {
            // naive: poll on the timer even while a sync runs (they may overlap).
            guard active, let due = waitingUntil, due <= now else { return [] }
            waitingUntil = now + fixed
            return [.poll]
        }
        guard active, !syncRunning, let due = waitingUntil, due <= now else { return [] }  // spurious wake-up
        waitingUntil = nil
        return [.poll]
    }
}
