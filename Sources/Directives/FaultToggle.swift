import SyncCore

/// A fault key of the app (`p`, `r`, `x`, `A`): a toggle, resolved against the faults the
/// world has now — its truth, whoever gave them: a key, a scenario line, `synchat fault`, the
/// server's operator. The view keeps no toggle of its own: `r` after a scenario's
/// `realtime down` brings realtime up.
public enum FaultToggle: Equatable, Sendable, CaseIterable {
    /// `p`: ok → drop everything → delay 90 s → ok.
    case push
    /// `r`: down / up.
    case realtime
    /// `x`: down / up.
    case indexer
    /// `A`: the device's network off / on.
    case network

    /// The directives that move the world one step from the faults it has now.
    public func directives(from faults: WorldFaults) -> [Directive] {
        switch self {
        case .push:
            if faults.push.dropPercent == 100 { return [.fault(.pushDrop(percent: 0)), .fault(.pushDelay(.seconds(90)))] }
            if faults.push != WorldFaults.Push() { return [.fault(.pushUp)] }
            return [.fault(.pushDrop(percent: 100))]
        case .realtime:
            return faults.realtime.down || faults.realtime.flakyPercent > 0 ? [.fault(.realtimeUp)] : [.fault(.realtimeDown)]
        case .indexer:
            return faults.indexer.down ? [.fault(.indexerUp)] : [.fault(.indexerDown)]
        case .network:
            return faults.networkOff ? [.fault(.networkOn)] : [.fault(.networkOff)]
        }
    }
}
