import AppActions
import SyncCore

extension SimulatedWorld {
    /// The faults the world has now, in the words of their directives (`push drop 100%`,
    /// `indexer down`): its ground truth, for a session's bar and timeline and for a server's
    /// clients (the one place these words are made).
    public var activeFaults: [String] {
        var faults: [String] = []
        if push.down { faults.append("push down") }
        if push.dropPercent > 0 { faults.append(Directive.pushDrop(percent: push.dropPercent).summary) }
        if push.extraDelay > .zero { faults.append(Directive.pushDelay(push.extraDelay).summary) }
        if push.tokenStatus == .expired || push.tokenStatus == .invalid { faults.append("token \(push.tokenStatus.rawValue)") }
        if node.down { faults.append("realtime down") }
        if node.connection?.stale == true { faults.append("realtime stale") }
        if node.flakyPercent > 0 { faults.append(Directive.realtimeFlaky(percent: node.flakyPercent).summary) }
        if indexer.down { faults.append("indexer down") }
        if networkOff { faults.append("network off") }
        if let latency = indexer.latency { faults.append(Directive.indexerLatency(latency).summary) }
        return faults
    }

    /// Applies a directive that changes the network (push, realtime, indexer, token): the one
    /// place these words act, for a session (a scenario line, a fault key) and for
    /// `synchat server` (`POST /admin/fault`) alike. Returns false, changing nothing, for a
    /// directive of the app or the user.
    public func applyFault(_ d: Directive) -> Bool {
        switch d {
        case .pushDrop(let p): push.dropPercent = p
        case .pushDelay(let i): push.extraDelay = i
        case .pushDown: push.down = true
        case .pushUp:
            push.down = false
            push.dropPercent = 0
            push.extraDelay = .zero
        case .realtimeDown: node.down = true
        case .realtimeUp:
            node.down = false
            node.flakyPercent = 0
        case .realtimeStale: node.makeStale()
        case .realtimeFlaky(let p): node.flakyPercent = p
        case .indexerDown: indexer.down = true
        case .indexerUp: indexer.down = false
        case .indexerLatency(let i): indexer.latency = i.milliseconds > 0 ? i : nil
        case .tokenExpire: push.expireToken()
        case .tokenInvalidate: push.invalidateToken()
        case .networkOff: networkOff = true
        case .networkOn: networkOff = false
        default: return false
        }
        return true
    }
}

extension SimulatedWorld {
    /// The contact handles of a new world of `n` simulated contacts, in order.
    public static func defaultHandles(_ n: Int) -> [String] {
        let names = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy",
                     "kim", "leo", "mallory", "nina", "oscar", "peggy", "quinn", "rupert", "sybil", "trent"]
        return (0..<max(0, n)).map { $0 < names.count ? names[$0] : "contact\($0 + 1)" }
    }

    /// A simulated contact's name: its handle, capitalised.
    public static func displayName(for handle: String) -> String {
        handle.prefix(1).uppercased() + handle.dropFirst()
    }
}
