import SyncCore

// What a person or a script can do to the app and its world: one vocabulary for the keys of
// the TUI, the lines of a scenario file and the session that applies both, so that a key and
// its scenario verb read the same in the log.

/// One change from outside the engine: a lifecycle move, a fault of the world, a message,
/// a setting. `AppSession.apply(_:)` carries it out.
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
