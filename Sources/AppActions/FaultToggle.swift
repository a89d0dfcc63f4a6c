import SyncCore

/// A fault key of the app (`p`, `r`, `x`, `A`): a toggle, resolved against the faults the
/// world has now — its truth, whoever gave them: a key, a scenario line, `synchat fault`, the
/// server's operator. The view keeps no toggle of its own (issue 29 #5): `r` after a
/// scenario's `realtime down` brings realtime up, where the view's own copy said it was up
/// and sent `realtime down` again.
public enum FaultToggle: Equatable, Sendable, CaseIterable {
    /// `p`: ok → drop everything → delay 90 s → ok.
    case push
    /// `r`: down / up.
    case realtime
    /// `x`: down / up.
    case indexer
    /// `A`: the device's network off / on.
    case network

    /// The directives that move the world one step from `active` (its faults in their
    /// directives' words, as `activeFaults` says them).
    public func directives(active: [String]) -> [Directive] {
        func has(_ d: Directive) -> Bool { active.contains(d.summary) }
        func hasPrefix(_ p: String) -> Bool { active.contains { $0.hasPrefix(p) } }
        switch self {
        case .push:
            if has(.pushDrop(percent: 100)) { return [.pushDrop(percent: 0), .pushDelay(.seconds(90))] }
            if hasPrefix("push ") { return [.pushUp] }
            return [.pushDrop(percent: 100)]
        case .realtime:
            return has(.realtimeDown) || hasPrefix("realtime flaky") ? [.realtimeUp] : [.realtimeDown]
        case .indexer:
            return has(.indexerDown) ? [.indexerUp] : [.indexerDown]
        case .network:
            return has(.networkOff) ? [.networkOn] : [.networkOff]
        }
    }
}
