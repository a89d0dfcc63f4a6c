// Lifecycle and realtime connection — SPEC §3 rules 10–11.
//
// Foreground after a background always forces a reconnect: the OS killed the socket
// silently and `isConnected` may still read true (rule 10). The first launch just connects.
// Recovery then has two paths into the catch-up gate (rule 11): the reconnect completing
// (`subscription-restart`, with the deferred `app-active` joining it) or, if it has not
// completed `recoveryFallback` after becoming active, the fallback (`app-active`).
//
//   realtime:  offline ──connect──▶ connecting ──connected──▶ live
//                 ▲                     │                       │ background: untrusted
//                 └── failed / dropped ─┘                       ▼
//                     (retry with backoff in foreground)      stale ──foreground──▶ connecting (forced)
//
// A socket can also go stale in the foreground, silently. While live in the foreground the
// client pings the node every `keepaliveInterval`; no answer within `keepaliveTimeout` and
// the subscription is called stale and reconnected (forced), which funnels into the gate as
// `rpc-restored` like any other restored connection.
//
// Timers: the recovery fallback, the next reconnect attempt, the next keepalive ping and
// the deadline of the ping in flight.

public enum RealtimeState: String, Sendable, CaseIterable {
    case offline, connecting, live, stale
}

public struct ConnectionLifecycle: Sendable {
    public enum Action: Equatable, Sendable {
        /// Open the realtime connection and subscribe (the client's realtime state is now
        /// `connecting`). `forced`: tear down the existing socket first, whatever
        /// `isConnected` says.
        case connect(forced: Bool, reason: String)
        /// Ask the gate for a catch-up, one trigger after the other (they join, rule 8).
        case requestCatchUp(triggers: [CatchUpTrigger], reason: String)
        /// The client's view of the realtime channel changed.
        case realtimeChanged(RealtimeState, reason: String)
        /// Ping the node on the current connection; answer with `keepaliveAnswered(ping:now:)`.
        case ping(Int)
    }

    private enum Recovery: Sendable, Equatable {
        case none
        case awaitingReconnect(fallbackAt: Instant)
        case fallbackFired
    }

    public let settings: SyncSettings
    public let policy: SyncPolicy
    /// Delays between reconnect attempts while the foreground realtime channel is down.
    public var reconnectBackoff: [Interval] = [.seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(30)]

    public private(set) var lifecycle: Lifecycle = .launched
    /// When the app went to the background; nil while it is not there.
    public private(set) var backgroundSince: Instant?
    public private(set) var realtime: RealtimeState = .offline
    /// The transport's own flag as the client reads it. Stays true after the OS silently
    /// killed the socket in the background — which is why rule 10 never trusts it.
    public private(set) var isConnected = false
    private var recovery: Recovery = .none
    private var retryAt: Instant?
    private var failedAttempts = 0
    private var connectInFlight = false
    private var pingAt: Instant?
    private var pingInFlight: (id: Int, deadline: Instant)?
    private var pingCount = 0

    public init(settings: SyncSettings = .default, policy: SyncPolicy = .seed) {
        self.settings = settings
        self.policy = policy
    }

    /// Whether the subscription counts as unavailable for fallback polling (rule 13): it is
    /// offline, or reconnecting after a failure. Until a foreground recovery has completed or
    /// its fallback has fired, it is not: rule 11's two paths own that catch-up.
    public var subscriptionUnavailable: Bool {
        if case .awaitingReconnect = recovery { return false }
        switch realtime {
        case .offline: return true
        case .connecting: return failedAttempts > 0
        case .live, .stale: return false
        }
    }

    public var nextDeadline: Instant? {
        var deadlines: [Instant] = []
        if case .awaitingReconnect(let at) = recovery { deadlines.append(at) }
        if let retryAt { deadlines.append(retryAt) }
        if let pingAt { deadlines.append(pingAt) }
        if let pingInFlight { deadlines.append(pingInFlight.deadline) }
        return deadlines.min()
    }

    /// The app became active (rules 10–11).
    public mutating func becameActive(now: Instant) -> [Action] {
        guard lifecycle != .foreground else { return [] }  // already active: nothing to recover
        let firstLaunch = lifecycle == .launched
        lifecycle = .foreground
        backgroundSince = nil
        guard policy.deferAppActive else {
            // naive: sync on app-active now, and again when the subscription restarts.
            recovery = .none
            retryAt = nil
            failedAttempts = 0
            connectInFlight = true
            realtime = .connecting
            return [.connect(forced: !firstLaunch, reason: firstLaunch ? "cold start" : "after background"),
                    .requestCatchUp(triggers: [.appActive], reason: "app active")]
        }
        recovery = .awaitingReconnect(fallbackAt: now + settings.recoveryFallback)
        retryAt = nil
        failedAttempts = 0
        connectInFlight = true
        let reason = firstLaunch
            ? "cold start"
            : "after background: isConnected=\(isConnected) is not trusted"
        realtime = .connecting
        return [.connect(forced: !firstLaunch, reason: reason)]
    }

    /// The app went to the background. The OS will kill the socket without telling us.
    public mutating func enteredBackground(now: Instant) -> [Action] {
        guard lifecycle == .foreground else { return [] }
        lifecycle = .background
        backgroundSince = now
        recovery = .none
        retryAt = nil
        stopKeepalive()  // the app is suspended: nothing runs until the foreground
        if realtime == .live {
            realtime = .stale
            return [.realtimeChanged(.stale, reason: "backgrounded: the OS may kill the socket silently")]
        }
        return []
    }

    /// The connection is up and the subscription established.
    public mutating func connected(now: Instant) -> [Action] {
        connectInFlight = false
        isConnected = true
        failedAttempts = 0
        retryAt = nil
        guard lifecycle == .foreground else {
            // Completed after the app went to the background: the socket is as good as dead.
            realtime = .stale
            return [.realtimeChanged(.stale, reason: "connected while backgrounded")]
        }
        realtime = .live
        stopKeepalive()
        pingAt = now + settings.keepaliveInterval
        var actions: [Action] = [.realtimeChanged(.live, reason: "subscribed")]
        guard policy.deferAppActive else {
            return actions + [.requestCatchUp(triggers: [.subscriptionRestart], reason: "subscription restarted")]
        }
        switch recovery {
        case .awaitingReconnect:
            actions.append(.requestCatchUp(triggers: [.subscriptionRestart, .appActive], reason: "reconnect completed"))
        case .fallbackFired:
            actions.append(.requestCatchUp(triggers: [.subscriptionRestart], reason: "reconnect completed after the fallback"))
        case .none:
            actions.append(.requestCatchUp(triggers: [.rpcRestored], reason: "realtime connection restored"))
        }
        recovery = .none
        return actions
    }

    /// A connect attempt failed.
    public mutating func connectFailed(now: Instant, error: String) -> [Action] {
        connectInFlight = false
        return lost(now: now, reason: "connect failed: \(error)")
    }

    /// An established connection reported an error and closed.
    public mutating func disconnected(now: Instant, error: String) -> [Action] {
        guard isConnected || realtime == .live else { return [] }  // late report of a socket we already replaced
        return lost(now: now, reason: "disconnected: \(error)")
    }

    /// The node answered ping `id`. A late answer to an older ping changes nothing.
    public mutating func keepaliveAnswered(ping id: Int, now: Instant) -> [Action] {
        guard let inFlight = pingInFlight, inFlight.id == id, realtime == .live else { return [] }
        pingInFlight = nil
        pingAt = now + settings.keepaliveInterval
        return []
    }

    public mutating func deadlineReached(now: Instant) -> [Action] {
        var actions: [Action] = []
        if let inFlight = pingInFlight, inFlight.deadline <= now {
            // The socket says nothing and answers nothing: stale. Reconnect, never trust it.
            stopKeepalive()
            isConnected = false
            realtime = .connecting
            connectInFlight = true
            retryAt = nil
            actions.append(.realtimeChanged(.stale, reason: "no keepalive answer within \(settings.keepaliveTimeout): the socket died silently"))
            actions.append(.connect(forced: true, reason: "keepalive failed"))
        } else if let at = pingAt, at <= now {
            pingAt = nil
            if realtime == .live, lifecycle == .foreground {
                pingCount += 1
                pingInFlight = (pingCount, now + settings.keepaliveTimeout)
                actions.append(.ping(pingCount))
            }
        }
        if case .awaitingReconnect(let at) = recovery, at <= now {
            recovery = .fallbackFired
            actions.append(.requestCatchUp(triggers: [.appActive], reason: "reconnect not completed \(settings.recoveryFallback) after app-active"))
        }
        if let at = retryAt, at <= now, lifecycle == .foreground, !connectInFlight {
            retryAt = nil
            connectInFlight = true
            realtime = .connecting
            actions.append(.connect(forced: false, reason: "reconnect attempt \(failedAttempts)"))
        }
        return actions  // empty on a spurious wake-up
    }

    private mutating func stopKeepalive() {
        pingAt = nil
        pingInFlight = nil
    }

    private mutating func lost(now: Instant, reason: String) -> [Action] {
        stopKeepalive()
        isConnected = false
        realtime = .offline
        guard lifecycle == .foreground else { return [.realtimeChanged(.offline, reason: reason)] }
        let delay = reconnectBackoff[min(failedAttempts, reconnectBackoff.count - 1)]
        failedAttempts += 1
        retryAt = now + delay
        return [.realtimeChanged(.offline, reason: reason + "; retry in \(delay)")]
    }
}
