// Lifecycle and realtime connection — docs/spec.md rules 10–11.
//
// Foreground after a background always forces a reconnect: the OS killed the socket
// silently and `isConnected` may still read true (rule 10). The first launch just connects.
// Recovery then has two paths into the catch-up gate (rule 11): the reconnect completing
// (`subscription-restart`, with the deferred `app-active` joining it) or, if it has not
// completed `recoveryFallback` after becoming active, the fallback (`app-active`).
//
// A socket can also go stale in the foreground, silently. While live in the foreground the
// client pings the node every `keepaliveInterval`; no answer within `keepaliveTimeout` and
// the subscription is called stale and reconnected (forced), which funnels into the gate as
// `rpc-restored` like any other restored connection.
//
// The app and its realtime link are one state (`State`), each case with what it needs: a
// recovery and a reconnect's backoff exist only in a foreground without realtime, a ping
// only on a live link; in the background nothing is armed. In the foreground:
//
//   launched ──active──▶ connecting ─────connected─────▶ live ──ping due──▶ pinging
//                          │  ▲  ▲                        │ ▲                 │ │
//                   failed │  │  │                        │ └────answered─────┘ │
//                          ▼  │  └── unanswered: stale ───┼── forced reconnect ─┤
//                     offline─┘ retry (backoff)           │                     │
//                          ▲                              │                     │
//                          └───────────── dropped ────────┴────── dropped ──────┘
//
// Entering the background, `connecting` becomes `backgroundConnecting`, `offline` becomes
// `backgroundOffline`, `live` and `pinging` become `backgroundStale` (untrusted, rule 10):
//
//   backgroundConnecting ──connected──▶ backgroundStale ──dropped──▶ backgroundOffline
//            │                                                               ▲
//            └───────────────────────────── failed ──────────────────────────┘
//
// From each, becoming active is `connecting` again, forced (rule 10).
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
        case connect(forced: Bool, reason: ConnectReason)
        /// Ask the gate for a catch-up, one trigger after the other (they join, rule 8).
        case requestCatchUp(triggers: [CatchUpTrigger], reason: CatchUpReason)
        /// The client's view of the realtime channel changed.
        case realtimeChanged(RealtimeState, reason: RealtimeReason)
        /// Ping the node on the current connection; answer with `keepaliveAnswered(ping:now:)`.
        case ping(Int)
    }

    /// Why a connect is asked for.
    public enum ConnectReason: Equatable, Sendable {
        case coldStart
        /// Back from the background; `isConnected`: what the socket claims, not trusted (nil:
        /// naive, which does not ask).
        case afterBackground(isConnected: Bool?)
        case keepaliveFailed
        case reconnectAttempt(Int)
    }

    /// Why a catch-up is asked for.
    public enum CatchUpReason: Equatable, Sendable {
        case appActive, subscriptionRestarted, reconnectCompleted, reconnectCompletedAfterFallback, connectionRestored
        /// The reconnect did not complete this long after app-active (rule 11's fallback).
        case reconnectNotCompleted(within: Interval)
    }

    /// Why the client's view of realtime changed.
    public enum RealtimeReason: Equatable, Sendable {
        /// How a connection was lost, in the port's words.
        public enum Loss: Equatable, Sendable {
            case connectFailed(String)
            case disconnected(String)
        }
        case backgrounded, connectedWhileBackgrounded, subscribed
        case keepaliveUnanswered(within: Interval)
        /// Lost; retried after `retryIn` (nil: not while suspended).
        case lost(Loss, retryIn: Interval?)
    }

    /// The app and its realtime link as one value (swift-nio-http2's stream state): each case
    /// a combination that can happen, carrying what it needs and nothing else.
    enum State: Equatable, Sendable {
        /// Launched, not active yet: nothing asked of the network.
        case launched
        /// In the foreground, a connect attempt in flight, realtime out as `outage` says.
        /// `isConnected`: what the transport still claims of the socket the attempt replaces
        /// (true after a background, where the OS killed it silently: rule 10).
        case connecting(Outage, isConnected: Bool)
        /// In the foreground, no connection: the next attempt is due at `retryAt` (backoff).
        case offline(Outage, retryAt: Instant)
        /// In the foreground, subscribed since `since`; the next keepalive ping is due at `pingAt`.
        case live(since: Instant, pingAt: Instant)
        /// In the foreground, subscribed since `since`; ping `ping` waits for its answer until
        /// `deadline`.
        case pinging(since: Instant, ping: Int, deadline: Instant)
        /// In the background since `since`, the attempt asked for in the foreground still in
        /// flight; `failures` and `isConnected` as it left the foreground. No recovery (rule 11
        /// is a foreground's) and no retry while suspended.
        case backgroundConnecting(since: Instant, failures: Int, isConnected: Bool)
        /// In the background since `since`, no connection, no retry while suspended; `failures`
        /// attempts failed since the last success.
        case backgroundOffline(since: Instant, failures: Int)
        /// In the background since `since`, with a subscription that was live when the app left
        /// the foreground, or completed since: not trusted (rule 10), though its socket claims
        /// to be connected.
        case backgroundStale(since: Instant)
    }

    /// A foreground without realtime: since when, and what its end asks of the gate (rule 11).
    struct Outage: Equatable, Sendable {
        /// Since when realtime has not been live in this foreground.
        var since: Instant
        /// What the reconnect completing asks of the gate.
        var recovery: Recovery
        /// Connect attempts failed since the last success.
        var failures = 0
    }

    /// Rule 11's recovery of app-active, while realtime is out in the foreground.
    enum Recovery: Equatable, Sendable {
        /// Nothing deferred: realtime was lost in the foreground (its return is `rpc-restored`),
        /// or the policy does not defer app-active (naive).
        case none
        /// App-active waits for the reconnect to join it, until the fallback at `fallbackAt`.
        case awaitingReconnect(fallbackAt: Instant)
        /// The fallback asked app-active's catch-up; the reconnect asks `subscription-restart` alone.
        case fallbackFired

        /// When rule 11's fallback fires, while it is armed.
        var fallbackAt: Instant? {
            if case .awaitingReconnect(let at) = self { return at }
            return nil
        }
    }

    public let settings: SyncSettings
    public let policy: SyncPolicy
    /// Delays between reconnect attempts while the foreground realtime channel is down.
    public var reconnectBackoff: [Interval] = [.seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(30)]

    /// Where the app and its realtime link are (tests read it; the engine reads the views below).
    private(set) var state: State = .launched
    /// When realtime last stopped being live, in any lifecycle: the start of a reconnect's gap
    /// (nil until it was live once). Recorded by every way out of `live` and `pinging`.
    public private(set) var lastLiveEndedAt: Instant?
    private var pingCount = 0

    public init(settings: SyncSettings = .default, policy: SyncPolicy = .seed) {
        self.settings = settings
        self.policy = policy
    }

    public var lifecycle: Lifecycle {
        switch state {
        case .launched: return .launched
        case .connecting, .offline, .live, .pinging: return .foreground
        case .backgroundConnecting, .backgroundOffline, .backgroundStale: return .background
        }
    }

    /// When the app went to the background; nil while it is not there.
    public var backgroundSince: Instant? {
        switch state {
        case .backgroundConnecting(let since, _, _), .backgroundOffline(let since, _), .backgroundStale(let since): return since
        case .launched, .connecting, .offline, .live, .pinging: return nil
        }
    }

    public var realtime: RealtimeState {
        switch state {
        case .launched, .offline, .backgroundOffline: return .offline
        case .connecting, .backgroundConnecting: return .connecting
        case .live, .pinging: return .live
        case .backgroundStale: return .stale
        }
    }

    /// The transport's own flag as the client reads it. Stays true after the OS silently
    /// killed the socket in the background — which is why rule 10 never trusts it.
    public var isConnected: Bool {
        switch state {
        case .launched, .offline, .backgroundOffline: return false
        case .connecting(_, let claimed), .backgroundConnecting(_, _, let claimed): return claimed
        case .live, .pinging, .backgroundStale: return true
        }
    }

    /// When the current subscription went live; nil while it is not.
    public var liveSince: Instant? {
        switch state {
        case .live(let since, _), .pinging(let since, _, _): return since
        case .launched, .connecting, .offline, .backgroundConnecting, .backgroundOffline, .backgroundStale: return nil
        }
    }

    /// Since when realtime has not been live in this foreground (what (e)'s looks count from);
    /// nil while it is live, and outside the foreground.
    public var notLiveSince: Instant? {
        switch state {
        case .connecting(let outage, _), .offline(let outage, _): return outage.since
        case .launched, .live, .pinging, .backgroundConnecting, .backgroundOffline, .backgroundStale: return nil
        }
    }

    /// Whether the subscription counts as unavailable for fallback polling (rule 13): it is
    /// offline, or reconnecting after a failure. Until a foreground recovery has completed or
    /// its fallback has fired, it is not: rule 11's two paths own that catch-up.
    public var subscriptionUnavailable: Bool {
        switch state {
        case .launched, .backgroundOffline: return true
        case .connecting(let outage, _): return outage.recovery.fallbackAt == nil && outage.failures > 0
        case .offline(let outage, _): return outage.recovery.fallbackAt == nil
        case .backgroundConnecting(_, let failures, _): return failures > 0
        case .live, .pinging, .backgroundStale: return false
        }
    }

    /// The machine's timers as an inspector shows them; each nil when not armed.
    public struct Timers: Equatable, Sendable {
        /// Rule 11's fallback, while a foreground recovery waits for its reconnect.
        public var recoveryFallbackAt: Instant?
        /// The next reconnect attempt (backoff), while offline in the foreground.
        public var reconnectAt: Instant?
        /// Attempts failed since the last success.
        public var reconnectFailures = 0
        /// The next keepalive ping, while live.
        public var keepalivePingAt: Instant?
        /// The deadline of the ping in flight.
        public var keepaliveAnswerBy: Instant?

        public init() {}
    }

    public var timers: Timers {
        var t = Timers()
        switch state {
        case .connecting(let outage, _):
            t.recoveryFallbackAt = outage.recovery.fallbackAt
            t.reconnectFailures = outage.failures
        case .offline(let outage, let retryAt):
            t.recoveryFallbackAt = outage.recovery.fallbackAt
            t.reconnectAt = retryAt
            t.reconnectFailures = outage.failures
        case .live(_, let pingAt): t.keepalivePingAt = pingAt
        case .pinging(_, _, let deadline): t.keepaliveAnswerBy = deadline
        case .backgroundConnecting(_, let failures, _), .backgroundOffline(_, let failures): t.reconnectFailures = failures
        case .launched, .backgroundStale: break
        }
        return t
    }

    public var nextDeadline: Instant? {
        switch state {
        case .connecting(let outage, _): return outage.recovery.fallbackAt
        case .offline(let outage, let retryAt): return min(retryAt, outage.recovery.fallbackAt ?? retryAt)
        case .live(_, let pingAt): return pingAt
        case .pinging(_, _, let deadline): return deadline
        case .launched, .backgroundConnecting, .backgroundOffline, .backgroundStale: return nil
        }
    }

    /// The app became active (rules 10–11).
    public mutating func becameActive(now: Instant) -> [Action] {
        guard lifecycle != .foreground else { return [] }  // already active: nothing to recover
        let firstLaunch = state == .launched
        let claimed = isConnected
        guard policy.deferAppActive else {
            // naive: sync on app-active now, and again when the subscription restarts.
            state = .connecting(Outage(since: now, recovery: .none), isConnected: claimed)
            return [.connect(forced: !firstLaunch, reason: firstLaunch ? .coldStart : .afterBackground(isConnected: nil)),
                    .requestCatchUp(triggers: [.appActive], reason: .appActive)]
        }
        state = .connecting(Outage(since: now, recovery: .awaitingReconnect(fallbackAt: now + settings.recoveryFallback)), isConnected: claimed)
        return [.connect(forced: !firstLaunch, reason: firstLaunch ? .coldStart : .afterBackground(isConnected: claimed))]
    }

    /// The app went to the background. The OS will kill the socket without telling us; the
    /// recovery, the retries and the keepalive stop with the foreground.
    public mutating func enteredBackground(now: Instant) -> [Action] {
        switch state {
        case .live, .pinging:
            // The app is suspended: no keepalive; and the socket can no longer be trusted.
            lastLiveEndedAt = now
            state = .backgroundStale(since: now)
            return [.realtimeChanged(.stale, reason: .backgrounded)]
        case .offline(let outage, _):
            state = .backgroundOffline(since: now, failures: outage.failures)
        case .connecting(let outage, let claimed):
            state = .backgroundConnecting(since: now, failures: outage.failures, isConnected: claimed)
        case .launched, .backgroundConnecting, .backgroundOffline, .backgroundStale:
            break
        }
        return []
    }

    /// The connection is up and the subscription established.
    public mutating func connected(now: Instant) -> [Action] {
        let recovery: Recovery
        switch state {
        case .launched:
            preconditionFailure("connected while launched: no connect was asked for")
        case .backgroundConnecting(let since, _, _), .backgroundOffline(let since, _), .backgroundStale(let since):
            // Completed after the app went to the background: the socket is as good as dead.
            state = .backgroundStale(since: since)
            return [.realtimeChanged(.stale, reason: .connectedWhileBackgrounded)]
        case .connecting(let outage, _), .offline(let outage, _):
            recovery = outage.recovery
        case .live, .pinging:
            recovery = .none  // subscribed again on a live link: nothing was deferred
        }
        state = .live(since: now, pingAt: now + settings.keepaliveInterval)
        let live: Action = .realtimeChanged(.live, reason: .subscribed)
        guard policy.deferAppActive else {
            return [live, .requestCatchUp(triggers: [.subscriptionRestart], reason: .subscriptionRestarted)]
        }
        switch recovery {
        case .awaitingReconnect:
            return [live, .requestCatchUp(triggers: [.subscriptionRestart, .appActive], reason: .reconnectCompleted)]
        case .fallbackFired:
            return [live, .requestCatchUp(triggers: [.subscriptionRestart], reason: .reconnectCompletedAfterFallback)]
        case .none:
            return [live, .requestCatchUp(triggers: [.rpcRestored], reason: .connectionRestored)]
        }
    }

    /// A connect attempt failed.
    public mutating func connectFailed(now: Instant, error: String) -> [Action] {
        lost(now: now, .connectFailed(error))
    }

    /// An established connection reported an error and closed.
    public mutating func disconnected(now: Instant, error: String) -> [Action] {
        guard isConnected else { return [] }  // late report of a socket we already replaced
        return lost(now: now, .disconnected(error))
    }

    /// The node answered ping `id`. A late answer to an older ping changes nothing.
    public mutating func keepaliveAnswered(ping id: Int, now: Instant) -> [Action] {
        guard case .pinging(let since, id, _) = state else { return [] }
        state = .live(since: since, pingAt: now + settings.keepaliveInterval)
        return []
    }

    public mutating func deadlineReached(now: Instant) -> [Action] {
        switch state {
        case .pinging(_, _, let deadline) where deadline <= now:
            // The socket says nothing and answers nothing: stale. Reconnect, never trust it.
            lastLiveEndedAt = now
            state = .connecting(Outage(since: now, recovery: .none), isConnected: false)
            return [.realtimeChanged(.stale, reason: .keepaliveUnanswered(within: settings.keepaliveTimeout)),
                    .connect(forced: true, reason: .keepaliveFailed)]
        case .live(let since, let pingAt) where pingAt <= now:
            pingCount += 1
            state = .pinging(since: since, ping: pingCount, deadline: now + settings.keepaliveTimeout)
            return [.ping(pingCount)]
        case .connecting(var outage, let claimed):
            guard let fallback = fallbackIfDue(&outage, now: now) else { return [] }
            state = .connecting(outage, isConnected: claimed)
            return [fallback]
        case .offline(var outage, let retryAt):
            let actions = fallbackIfDue(&outage, now: now).map { [$0] } ?? []
            guard retryAt <= now else {
                state = .offline(outage, retryAt: retryAt)
                return actions
            }
            state = .connecting(outage, isConnected: false)
            return actions + [.connect(forced: false, reason: .reconnectAttempt(outage.failures))]
        case .launched, .live, .pinging, .backgroundConnecting, .backgroundOffline, .backgroundStale:
            return []  // a spurious wake-up
        }
    }

    /// Rule 11's fallback, if it is due: app-active's catch-up, the reconnect not waited for.
    private func fallbackIfDue(_ outage: inout Outage, now: Instant) -> Action? {
        guard let at = outage.recovery.fallbackAt, at <= now else { return nil }
        outage.recovery = .fallbackFired
        return .requestCatchUp(triggers: [.appActive], reason: .reconnectNotCompleted(within: settings.recoveryFallback))
    }

    private mutating func lost(now: Instant, _ loss: RealtimeReason.Loss) -> [Action] {
        var outage: Outage
        switch state {
        case .launched:
            preconditionFailure("connection lost while launched: no connect was asked for")
        case .backgroundConnecting(let since, let failures, _), .backgroundOffline(let since, let failures):
            state = .backgroundOffline(since: since, failures: failures)
            return [.realtimeChanged(.offline, reason: .lost(loss, retryIn: nil))]
        case .backgroundStale(let since):
            state = .backgroundOffline(since: since, failures: 0)
            return [.realtimeChanged(.offline, reason: .lost(loss, retryIn: nil))]
        case .connecting(let o, _), .offline(let o, _):
            outage = o
        case .live, .pinging:
            lastLiveEndedAt = now
            outage = Outage(since: now, recovery: .none)
        }
        let delay = reconnectBackoff[min(outage.failures, reconnectBackoff.count - 1)]
        outage.failures += 1
        state = .offline(outage, retryAt: now + delay)
        return [.realtimeChanged(.offline, reason: .lost(loss, retryIn: delay))]
    }
}
