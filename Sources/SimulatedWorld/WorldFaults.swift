import SyncCore

extension SimulatedWorld {
    /// The faults the world has now, read off its services: its ground truth, for a session's
    /// bar and timeline and for a server's clients.
    public var faults: WorldFaults {
        WorldFaults(push: WorldFaults.Push(down: push.down, dropPercent: push.dropPercent, extraDelay: push.extraDelay),
                    realtime: WorldFaults.Realtime(down: node.down, stale: node.connection?.stale == true, flakyPercent: node.flakyPercent),
                    indexer: WorldFaults.Indexer(down: indexer.down, latency: indexer.latency),
                    token: push.tokenStatus == .expired ? .expired : push.tokenStatus == .invalid ? .invalid : nil,
                    networkOff: networkOff)
    }

    /// Changes the network's faults: the one place a fault acts, for a session (a scenario line,
    /// a fault key) and for `synchat server` (`POST /admin/fault`) alike.
    public func apply(_ change: WorldFaults.Change) {
        switch change {
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
        }
        faultsMayHaveChanged()
    }

    /// Tells `onFaultsChanged` when the faults differ from the last it was told: after a change
    /// given from outside, and when one ends by itself (a token registered again, a stale
    /// connection replaced).
    func faultsMayHaveChanged() {
        let now = faults
        guard now != toldFaults else { return }
        toldFaults = now
        onFaultsChanged?(now)
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
