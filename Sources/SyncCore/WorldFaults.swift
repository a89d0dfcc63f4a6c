/// The faults a world has now, by what they break: its ground truth. The simulated network's
/// services hold them (SimWorld's `faults` reads them off); a server sends this value to its
/// clients; a screen and the belief-lag measure read it by field. The engine never sees it:
/// it has to find a fault out.
public struct WorldFaults: Hashable, Sendable {
    /// The push service: down, dropping a share of pushes, or delaying each.
    public struct Push: Hashable, Sendable {
        public var down = false
        public var dropPercent = 0.0
        public var extraDelay = Interval.zero
        public init(down: Bool = false, dropPercent: Double = 0, extraDelay: Interval = .zero) {
            self.down = down
            self.dropPercent = dropPercent
            self.extraDelay = extraDelay
        }
    }

    /// The node: down (connects fail), its connection gone stale, or dropping now and then.
    public struct Realtime: Hashable, Sendable {
        public var down = false
        public var stale = false
        public var flakyPercent = 0.0
        public init(down: Bool = false, stale: Bool = false, flakyPercent: Double = 0) {
            self.down = down
            self.stale = stale
            self.flakyPercent = flakyPercent
        }
    }

    /// The indexer: down (calls fail), or slow.
    public struct Indexer: Hashable, Sendable {
        public var down = false
        public var latency: Interval?
        public init(down: Bool = false, latency: Interval? = nil) {
            self.down = down
            self.latency = latency
        }
    }

    /// A device token the push service no longer takes.
    public enum Token: String, Hashable, Sendable {
        case expired, invalid
    }

    public var push: Push
    public var realtime: Realtime
    public var indexer: Indexer
    public var token: Token?
    /// The device has no network at all.
    public var networkOff: Bool

    public init(push: Push = Push(), realtime: Realtime = Realtime(), indexer: Indexer = Indexer(), token: Token? = nil, networkOff: Bool = false) {
        self.push = push
        self.realtime = realtime
        self.indexer = indexer
        self.token = token
        self.networkOff = networkOff
    }

    public static let none = WorldFaults()
    public var isEmpty: Bool { self == .none }

    /// Push delivers nothing (`push drop 100%`, `push down`): what the engine's `unreliable` is
    /// the belief of.
    public var pushBroken: Bool { push.down || push.dropPercent >= 100 }
    /// Realtime delivers nothing (`realtime down`, `realtime stale`).
    public var realtimeBroken: Bool { realtime.down || realtime.stale }
    /// Push could not be counted on: any fault of push, the token or the device's network.
    public var pushImpaired: Bool { push != Push() || token != nil || networkOff }

    /// Each fault in the words of the scenario line that makes it (`push drop 100%`,
    /// `token expired`), in one order: push, token, realtime, indexer, network.
    public var words: [String] {
        var out: [String] = []
        if push.down { out.append("push down") }
        if push.dropPercent > 0 { out.append("push drop \(Self.percent(push.dropPercent))%") }
        if push.extraDelay > .zero { out.append("push delay \(push.extraDelay)") }
        if let token { out.append("token \(token.rawValue)") }
        if realtime.down { out.append("realtime down") }
        if realtime.stale { out.append("realtime stale") }
        if realtime.flakyPercent > 0 { out.append("realtime flaky \(Self.percent(realtime.flakyPercent))%") }
        if indexer.down { out.append("indexer down") }
        if networkOff { out.append("network off") }
        if let latency = indexer.latency { out.append("indexer latency \(latency)") }
        return out
    }

    /// A share as a scenario line writes it: `30`, `12.5`.
    public static func percent(_ p: Double) -> String { p == p.rounded() ? String(Int(p)) : String(p) }

    /// One change a scenario line, a key or an operator makes to a world's faults.
    public enum Change: Hashable, Sendable {
        case pushDrop(percent: Double)
        case pushDelay(Interval)
        case pushDown
        /// Push heals: not down, nothing dropped, nothing delayed.
        case pushUp
        case realtimeDown
        /// Realtime heals: not down, not flaky.
        case realtimeUp
        case realtimeStale
        case realtimeFlaky(percent: Double)
        case indexerDown
        case indexerUp
        /// Zero takes the latency away.
        case indexerLatency(Interval)
        case tokenExpire
        case tokenInvalidate
        case networkOff
        case networkOn
    }
}
