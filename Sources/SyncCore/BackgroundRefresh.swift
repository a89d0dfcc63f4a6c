// Background refresh — docs/spec.md rule 14.
//
// When the app goes to the background it asks the OS for a refresh every
// `backgroundRefreshInterval` (mode `background-fetch`, or `remote-push` while push is not
// reliable, as a safety net). A granted refresh runs a light sync — contextual messages of
// the most recent conversations — until its budget or the OS's expiry, unless reliable push
// already covers it. Realtime never covers the background: the OS kills the socket there
// without a word (rule 10), so it is not an input here.
//
//     idle ──background, needed──▶ requested ──granted──▶ running ──budget / expiry / done──▶ requested
//       ▲                              │                     │
//       └──────── foreground ──────────┴─────────────────────┘
//
// Any change of push state or mode while backgrounded re-decides the request: push that
// breaks in the background (token expired, mode changed) asks for the safety net at once;
// push that becomes reliable, or mode `off`, withdraws it.
//
// Timer: the budget deadline of a running light sync.

public struct BackgroundRefresh: Sendable {
    public enum Action: Equatable, Sendable {
        /// Ask the OS for a refresh no earlier than `earliest`.
        case request(earliest: Instant, reason: String)
        /// Withdraw any request (foreground, or no longer needed).
        case cancelRequest(reason: String)
        /// Run a light sync of at most `conversations` conversations until `budgetEndsAt`.
        case runLightSync(conversations: Int, budgetEndsAt: Instant)
        /// naive: run a full sync until the OS expires the task.
        case runFullSync
        /// The grant is not used: something else covers it.
        case skip(reason: String)
        /// Stop the running light sync now.
        case stopLightSync(reason: String)
    }

    /// Where the refresh machinery is: idle in the foreground; in the background with a
    /// refresh asked of the OS or not; or running a granted refresh's light sync.
    private enum Phase: Sendable, Equatable {
        case foreground
        case background(requested: Bool)
        case lightSync(budgetEndsAt: Instant)
    }

    public let settings: SyncSettings
    public let policy: SyncPolicy
    private var phase: Phase = .foreground

    /// A refresh is asked of the OS.
    public var requested: Bool { phase == .background(requested: true) }

    /// When the running light sync's budget ends.
    public var budgetEndsAt: Instant? {
        if case .lightSync(let end) = phase { return end }
        return nil
    }

    private var inBackground: Bool { phase != .foreground }

    public init(settings: SyncSettings = .default, policy: SyncPolicy = .seed) {
        self.settings = settings
        self.policy = policy
    }

    /// naive asks every 60 s (the OS grants no more than every 15 min anyway).
    var interval: Interval { policy.naiveBackgroundRefresh ? .seconds(60) : settings.backgroundRefreshInterval }

    func needed(mode: NotificationMode, pushState: PushState) -> Bool {
        policy.naiveBackgroundRefresh ? mode != .off : Self.needed(mode: mode, pushState: pushState)
    }

    public var nextDeadline: Instant? { budgetEndsAt }

    /// Rule 14's condition for asking at all.
    public static func needed(mode: NotificationMode, pushState: PushState) -> Bool {
        switch mode {
        case .backgroundFetch: return true
        case .remotePush: return pushState != .reliable
        case .off: return false
        }
    }

    public mutating func enteredBackground(mode: NotificationMode, pushState: PushState, now: Instant) -> [Action] {
        guard needed(mode: mode, pushState: pushState) else {
            phase = .background(requested: false)
            return []
        }
        phase = .background(requested: true)
        return [.request(earliest: now + interval, reason: why(mode: mode, pushState: pushState))]
    }

    /// Rule 14: push state or mode changed. In the background this re-decides the request:
    /// asked for when it became needed, withdrawn when it no longer is. A running light sync
    /// finishes; the request after it follows the new conditions.
    public mutating func conditionsChanged(mode: NotificationMode, pushState: PushState, now: Instant) -> [Action] {
        guard case .background(let requested) = phase else { return [] }
        let need = needed(mode: mode, pushState: pushState)
        if need, !requested {
            phase = .background(requested: true)
            return [.request(earliest: now + interval, reason: why(mode: mode, pushState: pushState))]
        }
        if !need, requested {
            phase = .background(requested: false)
            let reason = mode == .off ? "notification mode is off" : "reliable push covers the background"
            return [.cancelRequest(reason: reason)]
        }
        return []
    }

    private func why(mode: NotificationMode, pushState: PushState) -> String {
        if policy.naiveBackgroundRefresh { return "every \(interval)" }
        return mode == .backgroundFetch ? "mode background-fetch" : "safety net: push \(pushState.rawValue)"
    }

    public mutating func enteredForeground(now: Instant) -> [Action] {
        let was = phase
        phase = .foreground
        switch was {
        case .lightSync: return [.stopLightSync(reason: "app came to the foreground")]
        case .background(requested: true): return [.cancelRequest(reason: "app in foreground")]
        case .background(requested: false), .foreground: return []
        }
    }

    /// The OS granted a refresh.
    public mutating func refreshGranted(mode: NotificationMode, pushState: PushState, now: Instant) -> [Action] {
        if case .background = phase { phase = .background(requested: false) }
        if policy.naiveBackgroundRefresh {
            guard mode != .off else { return [.skip(reason: "notification mode is off")] }
            return [.runFullSync]  // the engine tracks the sync; the OS expires the task
        }
        if mode == .remotePush && pushState == .reliable {
            return [.skip(reason: "reliable push covers it")] + rerequest(mode: mode, pushState: pushState, now: now)
        }
        if mode == .off {
            return [.skip(reason: "notification mode is off")]
        }
        let end = now + settings.lightSyncBudget
        if inBackground { phase = .lightSync(budgetEndsAt: end) }
        return [.runLightSync(conversations: settings.lightSyncConversations, budgetEndsAt: end)]
    }

    /// The OS expires the refresh task (30 s after the grant).
    public mutating func refreshExpired(now: Instant) -> [Action] {
        guard budgetEndsAt != nil || policy.naiveBackgroundRefresh else { return [] }  // the sync ended first
        if case .lightSync = phase { phase = .background(requested: false) }
        return [.stopLightSync(reason: "expired by the OS")]
    }

    /// The light sync ended (complete, stopped or failed); ask for the next refresh.
    public mutating func lightSyncEnded(mode: NotificationMode, pushState: PushState, now: Instant) -> [Action] {
        if case .lightSync = phase { phase = .background(requested: false) }
        return rerequest(mode: mode, pushState: pushState, now: now)
    }

    /// The grant could not run because another sync holds the single flight.
    public mutating func grantUnused(mode: NotificationMode, pushState: PushState, now: Instant) -> [Action] {
        if case .lightSync = phase { phase = .background(requested: false) }
        return rerequest(mode: mode, pushState: pushState, now: now)
    }

    public mutating func deadlineReached(now: Instant) -> [Action] {
        guard case .lightSync(let end) = phase, end <= now else { return [] }  // spurious wake-up
        phase = .background(requested: false)
        return [.stopLightSync(reason: "budget of \(settings.lightSyncBudget) used up")]
    }

    private mutating func rerequest(mode: NotificationMode, pushState: PushState, now: Instant) -> [Action] {
        guard inBackground, needed(mode: mode, pushState: pushState) else { return [] }
        phase = .background(requested: true)
        return [.request(earliest: now + interval, reason: "next refresh")]
    }
}
