import AppActions
import SimWorld
import SyncCore

extension SimulatedWorld {
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
