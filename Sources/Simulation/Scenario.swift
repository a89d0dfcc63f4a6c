import SyncCore

/// A parsed scenario file (SPEC §9).
public struct Scenario: Equatable, Sendable {
    public var source: String
    public var seed: UInt64 = 1
    public var duration: Interval = .hours(1)
    public var contacts = 6
    public var trafficPerHour: Double = 12
    public var mode: NotificationMode = .remotePush
    /// After the final foreground, how long the run goes on so that "lost" is well defined.
    public var settle: Interval = .minutes(15)
    public var steps: [Step] = []

    public struct Step: Equatable, Sendable {
        public var at: Instant
        public var directive: Directive
        public var line: Int

        public init(at: Instant, directive: Directive, line: Int) {
            self.at = at
            self.directive = directive
            self.line = line
        }
    }

    public init(source: String) { self.source = source }

    /// The contact handles `contacts N` creates, in order (a new session's).
    public static func defaultHandles(_ n: Int) -> [String] { AppSession.defaultHandles(n) }
}

public enum Directive: Equatable, Sendable {
    case foreground
    case background
    case pushDrop(percent: Double)
    case pushDelay(Interval)
    case pushDown
    case pushUp
    case realtimeDown
    case realtimeUp
    case realtimeStale
    case realtimeFlaky(percent: Double)
    case indexerDown
    case indexerUp
    case indexerLatency(Interval)
    case tokenExpire
    case tokenInvalidate
    case mode(NotificationMode)
    case send(handle: String, text: String)
    case receive(handle: String, text: String)
    case contact(handle: String, displayName: String)
    case mute(handle: String)
    case unmute(handle: String)
    case sync
    case quit

    /// How the directive reads in the event log (text is made safe by the log line).
    public var summary: String {
        switch self {
        case .foreground: return "foreground"
        case .background: return "background"
        case .pushDrop(let p): return "push drop \(format(p))%"
        case .pushDelay(let d): return "push delay \(d)"
        case .pushDown: return "push down"
        case .pushUp: return "push up"
        case .realtimeDown: return "realtime down"
        case .realtimeUp: return "realtime up"
        case .realtimeStale: return "realtime stale"
        case .realtimeFlaky(let p): return "realtime flaky \(format(p))%"
        case .indexerDown: return "indexer down"
        case .indexerUp: return "indexer up"
        case .indexerLatency(let d): return "indexer latency \(d)"
        case .tokenExpire: return "token expire"
        case .tokenInvalidate: return "token invalidate"
        case .mode(let m): return "mode \(m.rawValue)"
        case .send(let h, let t): return "send \(h) \"\(t)\""
        case .receive(let h, let t): return "receive \(h) \"\(t)\""
        case .contact(let h, let d): return "contact \(h) \"\(d)\""
        case .mute(let h): return "mute \(h)"
        case .unmute(let h): return "unmute \(h)"
        case .sync: return "sync"
        case .quit: return "quit"
        }
    }
}

private func format(_ p: Double) -> String {
    p == p.rounded() ? String(Int(p)) : String(p)
}
