// Lifecycle and realtime connection — docs/spec.md rules 10–11.
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

    private enum Recovery: Sendable, Equatable {
        case none
        case awaitingReconnect(fallbackAt: Instant)
        case fallbackFired
    }

    /// Where the app is: launched (not yet active), in the foreground, or in the background
    /// since an instant.
    private enum App: Sendable, Equatable {
        case launched
        case foreground
        case background(since: Instant)
    }

    /// The realtime link as the client sees it, each state with what it needs.
    private enum Link: Sendable, Equatable {
        /// No connection. In the foreground the next attempt is due at `retryAt` (backoff);
        /// `failures` attempts failed since the last success.
        case offline(retryAt: Instant?, failures: Int)
        /// A connect attempt is in flight.
        case connecting(failures: Int)
        /// Subscribed, with its keepalive.
        case live(Keepalive)
        /// Not trusted: the app went to the background while live (rule 10).
        case stale
    }

    private enum Keepalive: Sendable, Equatable {
        /// No ping until the foreground (the app is suspended).
        case off
        /// The next ping is due.
        case due(Instant)
        /// A ping waits for its answer until `deadline`.
        case awaiting(ping: Int, deadline: Instant)
    }

    public let settings: SyncSettings
    public let policy: SyncPolicy
    /// Delays between reconnect attempts while the foreground realtime channel is down.
    public var reconnectBackoff: [Interval] = [.seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(30)]

    private var app: App = .launched
    private var link: Link = .offline(retryAt: nil, failures: 0)
    private var recovery: Recovery = .none
    /// The transport's own flag as the client reads it. Stays true after the OS silently
    /// killed the socket in the background — which is why rule 10 never trusts it.
    public private(set) var isConnected = false
    private var pingCount = 0

    public init(settings: SyncSettings = .default, policy: SyncPolicy = .seed) {
        self.settings = settings
        self.policy = policy
    }

    public var lifecycle: Lifecycle {
        switch app {
        case .launched: return .launched
        case .foreground: return .foreground
        case .background: return .background
        }
    }

    /// When the app went to the background; nil while it is not there.
    public var backgroundSince: Instant? {
        if case .background(let since) = app { return since }
        return nil
    }

    public var realtime: RealtimeState {
        switch link {
        case .offline: return .offline
        case .connecting: return .connecting
        case .live: return .live
        case .stale: return .stale
        }
    }

    /// Whether the subscription counts as unavailable for fallback polling (rule 13): it is
    /// offline, or reconnecting after a failure. Until a foreground recovery has completed or
    /// its fallback has fired, it is not: rule 11's two paths own that catch-up.
    public var subscriptionUnavailable: Bool {
        if case .awaitingReconnect = recovery { return false }
        switch link {
        case .offline: return true
        case .connecting(let failures): return failures > 0
        case .live, .stale: return false
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
        if case .awaitingReconnect(let at) = recovery { t.recoveryFallbackAt = at }
        switch link {
        case .offline(let retryAt, let failures): t.reconnectAt = retryAt; t.reconnectFailures = failures
        case .connecting(let failures): t.reconnectFailures = failures
        case .live(.due(let at)): t.keepalivePingAt = at
        case .live(.awaiting(_, let deadline)): t.keepaliveAnswerBy = deadline
        case .live(.off), .stale: break
        }
        return t
    }

    public var nextDeadline: Instant? {
        var deadlines: [Instant] = []
        if case .awaitingReconnect(let at) = recovery { deadlines.append(at) }
        switch link {
        case .offline(let retryAt?, _): deadlines.append(retryAt)
        case .live(.due(let at)): deadlines.append(at)
        case .live(.awaiting(_, let deadline)): deadlines.append(deadline)
        default: break
        }
        return deadlines.min()
    }

    /// The app became active (rules 10–11).
    public mutating func becameActive(now: Instant) -> [Action] {
        guard app != .foreground else { return [] }  // already active: nothing to recover
        let firstLaunch = app == .launched
        app = .foreground
        link = .connecting(failures: 0)
        guard policy.deferAppActive else {
            // naive: sync on app-active now, and again when the subscription restarts.
            recovery = .none
            return [.connect(forced: !firstLaunch, reason: firstLaunch ? .coldStart : .afterBackground(isConnected: nil)),
                    .requestCatchUp(triggers: [.appActive], reason: .appActive)]
        }
        recovery = .awaitingReconnect(fallbackAt: now + settings.recoveryFallback)
        return [.connect(forced: !firstLaunch, reason: firstLaunch ? .coldStart : .afterBackground(isConnected: isConnected))]
    }

    /// The app went to the background. The OS will kill the socket without telling us.
    public mutating func enteredBackground(now: Instant) -> [Action] {
        guard app == .foreground else { return [] }
        app = .background(since: now)
        recovery = .none
        switch link {
        case .live:
            // The app is suspended: no keepalive; and the socket can no longer be trusted.
            link = .stale
            return [.realtimeChanged(.stale, reason: .backgrounded)]
        case .offline(_, let failures):
            link = .offline(retryAt: nil, failures: failures)  // no retries while suspended
        case .connecting, .stale:
            break
        }
        return []
    }

    /// The connection is up and the subscription established.
    public mutating func connected(now: Instant) -> [Action] {
        isConnected = true
        guard app == .foreground else {
            // Completed after the app went to the background: the socket is as good as dead.
            link = .stale
            return [.realtimeChanged(.stale, reason: .connectedWhileBackgrounded)]
        }
        link = .live(.due(now + settings.keepaliveInterval))
        var actions: [Action] = [.realtimeChanged(.live, reason: .subscribed)]
        guard policy.deferAppActive else {
            return actions + [.requestCatchUp(triggers: [.subscriptionRestart], reason: .subscriptionRestarted)]
        }
        switch recovery {
        case .awaitingReconnect:
            actions.append(.requestCatchUp(triggers: [.subscriptionRestart, .appActive], reason: .reconnectCompleted))
        case .fallbackFired:
            actions.append(.requestCatchUp(triggers: [.subscriptionRestart], reason: .reconnectCompletedAfterFallback))
        case .none:
            actions.append(.requestCatchUp(triggers: [.rpcRestored], reason: .connectionRestored))
        }
        recovery = .none
        return actions
    }

    /// A connect attempt failed.
    public mutating func connectFailed(now: Instant, error: String) -> [Action] {
        lost(now: now, .connectFailed(error))
    }

    /// An established connection reported an error and closed.
    public mutating func disconnected(now: Instant, error: String) -> [Action] {
        guard isConnected || realtime == .live else { return [] }  // late report of a socket we already replaced
        return lost(now: now, .disconnected(error))
    }

    /// The node answered ping `id`. A late answer to an older ping changes nothing.
    public mutating func keepaliveAnswered(ping id: Int, now: Instant) -> [Action] {
        guard case .live(.awaiting(id, _)) = link else { return [] }
        link = .live(.due(now + settings.keepaliveInterval))
        return []
    }

    public mutating func deadlineReached(now: Instant) -> [Action] {
        var actions: [Action] = []
        switch link {
        case .live(.awaiting(_, let deadline)) where deadline <= now:
            // The socket says nothing and answers nothing: stale. Reconnect, never trust it.
            isConnected = false
            link = .connecting(failures: 0)
            actions.append(.realtimeChanged(.stale, reason: .keepaliveUnanswered(within: settings.keepaliveTimeout)))
            actions.append(.connect(forced: true, reason: .keepaliveFailed))
        case .live(.due(let at)) where at <= now:
            if app == .foreground {
                pingCount += 1
                link = .live(.awaiting(ping: pingCount, deadline: now + settings.keepaliveTimeout))
                actions.append(.ping(pingCount))
            } else {
                link = .live(.off)
            }
        default:
            break
        }
        if case .awaitingReconnect(let at) = recovery, at <= now {
            recovery = .fallbackFired
            actions.append(.requestCatchUp(triggers: [.appActive], reason: .reconnectNotCompleted(within: settings.recoveryFallback)))
        }
        if case .offline(let at?, let failures) = link, at <= now, app == .foreground {
            link = .connecting(failures: failures)
            actions.append(.connect(forced: false, reason: .reconnectAttempt(failures)))
        }
        return actions  // empty on a spurious wake-up
    }

    private mutating func lost(now: Instant, _ loss: RealtimeReason.Loss) -> [Action] {
        isConnected = false
        let failures: Int
        switch link {
        case .offline(_, let f), .connecting(let f): failures = f
        case .live, .stale: failures = 0
        }
        guard app == .foreground else {
            link = .offline(retryAt: nil, failures: failures)
            return [.realtimeChanged(.offline, reason: .lost(loss, retryIn: nil))]
        }
        let delay = reconnectBackoff[min(failures, reconnectBackoff.count - 1)]
        link = .offline(retryAt: now + delay, failures: failures + 1)
        return [.realtimeChanged(.offline, reason: .lost(loss, retryIn: delay))]
    }
}
