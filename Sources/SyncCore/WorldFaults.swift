/// The faults a world has now, by what they break: its ground truth. The simulated network's
/// services hold them (SimulatedWorld's `faults` reads them off); a server sends this value to its
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
        if push.down { out.append(Change.pushDown.words) }
        if push.dropPercent > 0 { out.append(Change.pushDrop(percent: push.dropPercent).words) }
        if push.extraDelay > .zero { out.append(Change.pushDelay(push.extraDelay).words) }
        if let token { out.append(Self.words(of: token)) }
        if realtime.down { out.append(Change.realtimeDown.words) }
        if realtime.stale { out.append(Change.realtimeStale.words) }
        if realtime.flakyPercent > 0 { out.append(Change.realtimeFlaky(percent: realtime.flakyPercent).words) }
        if indexer.down { out.append(Change.indexerDown.words) }
        if networkOff { out.append(Change.networkOff.words) }
        if let latency = indexer.latency { out.append(Change.indexerLatency(latency).words) }
        return out
    }

    /// What breaks push now, in the words of the line that makes it: `push drop 100%` or
    /// `push down`; nil while push delivers.
    public var pushBrokenWords: String? {
        guard pushBroken else { return nil }
        return push.dropPercent >= 100 ? Change.pushDrop(percent: push.dropPercent).words : Change.pushDown.words
    }

    /// What breaks realtime now: `realtime stale` or `realtime down`; nil while it is not broken.
    public var realtimeBrokenWords: String? {
        guard realtimeBroken else { return nil }
        return realtime.stale ? Change.realtimeStale.words : Change.realtimeDown.words
    }

    /// A token the push service no longer takes, as the faults say it: `token expired`.
    public static func words(of token: Token) -> String { "token \(token.rawValue)" }

    /// A share as a scenario line writes it: `30`, `12.5`.
    public static func percent(_ p: Double) -> String { p == p.rounded() ? String(Int(p)) : String(p) }

    /// What a fault acts on: a service of the world, the device's push token, or its network.
    public enum Part: String, CaseIterable, Sendable {
        case push, realtime, indexer, token, network
    }

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
        /// The device has no network at all (plane, tunnel): realtime, the indexer and the
        /// push socket fail together. `networkOn` gives it back.
        case networkOff
        case networkOn

        /// A change's kind, without its share or duration. `kind` and `Kind.zero` are switches
        /// without a default: a case added to `Change` has a kind, and the kind a change, before
        /// anything compiles, so `allCases` is every change there is (the wire's table of names).
        public enum Kind: CaseIterable, Sendable {
            case pushDrop, pushDelay, pushDown, pushUp
            case realtimeDown, realtimeUp, realtimeStale, realtimeFlaky
            case indexerDown, indexerUp, indexerLatency
            case tokenExpire, tokenInvalidate, networkOff, networkOn

            /// The change of this kind, with a zero share or duration.
            public var zero: Change {
                switch self {
                case .pushDrop: return .pushDrop(percent: 0)
                case .pushDelay: return .pushDelay(.zero)
                case .pushDown: return .pushDown
                case .pushUp: return .pushUp
                case .realtimeDown: return .realtimeDown
                case .realtimeUp: return .realtimeUp
                case .realtimeStale: return .realtimeStale
                case .realtimeFlaky: return .realtimeFlaky(percent: 0)
                case .indexerDown: return .indexerDown
                case .indexerUp: return .indexerUp
                case .indexerLatency: return .indexerLatency(.zero)
                case .tokenExpire: return .tokenExpire
                case .tokenInvalidate: return .tokenInvalidate
                case .networkOff: return .networkOff
                case .networkOn: return .networkOn
                }
            }
        }

        /// The change's kind.
        public var kind: Kind {
            switch self {
            case .pushDrop: return .pushDrop
            case .pushDelay: return .pushDelay
            case .pushDown: return .pushDown
            case .pushUp: return .pushUp
            case .realtimeDown: return .realtimeDown
            case .realtimeUp: return .realtimeUp
            case .realtimeStale: return .realtimeStale
            case .realtimeFlaky: return .realtimeFlaky
            case .indexerDown: return .indexerDown
            case .indexerUp: return .indexerUp
            case .indexerLatency: return .indexerLatency
            case .tokenExpire: return .tokenExpire
            case .tokenInvalidate: return .tokenInvalidate
            case .networkOff: return .networkOff
            case .networkOn: return .networkOn
            }
        }

        /// What the change acts on.
        public var part: Part {
            switch self {
            case .pushDrop, .pushDelay, .pushDown, .pushUp: return .push
            case .realtimeDown, .realtimeUp, .realtimeStale, .realtimeFlaky: return .realtime
            case .indexerDown, .indexerUp, .indexerLatency: return .indexer
            case .tokenExpire, .tokenInvalidate: return .token
            case .networkOff, .networkOn: return .network
            }
        }

        /// The change as a scenario line says it (`push drop 12.5%`, `indexer latency 2s`):
        /// the one owner of a fault's words; the scenario parser reads them back.
        public var words: String {
            switch self {
            case .pushDrop(let p): return "push drop \(WorldFaults.percent(p))%"
            case .pushDelay(let d): return "push delay \(d)"
            case .pushDown: return "push down"
            case .pushUp: return "push up"
            case .realtimeDown: return "realtime down"
            case .realtimeUp: return "realtime up"
            case .realtimeStale: return "realtime stale"
            case .realtimeFlaky(let p): return "realtime flaky \(WorldFaults.percent(p))%"
            case .indexerDown: return "indexer down"
            case .indexerUp: return "indexer up"
            case .indexerLatency(let d): return "indexer latency \(d)"
            case .tokenExpire: return "token expire"
            case .tokenInvalidate: return "token invalidate"
            case .networkOff: return "network off"
            case .networkOn: return "network on"
            }
        }
    }
}
