import SimulatedWorld
import Simulation
import SyncCore

extension RunSummary {
    /// The latency floor (docs/simulate.md): each incoming message as an all-knowing client
    /// would have it — when realtime or push brought it, or, if neither did, fetched at the
    /// first instant after it was indexed that the app may run and the device is online. In the
    /// background the app runs only at the refreshes the OS grants, one each `refreshMinimum`
    /// at most, the first that long after the background began: the all-knowing client asks
    /// for each grant at the instant it next lacks a message (and has every message indexed
    /// by then fetched at once).
    static func latencyFloor(_ world: SimulatedWorld, timeline: AppTimeline) -> LatencyCounts {
        var counts = LatencyCounts()
        var needs: [(indexedAt: Instant, blockTime: Instant)] = []
        world.history.forEachDelivery { m, d in
            guard m.direction == .incoming else { return }
            if let brought = [d.realtimeAt, d.pushedAt].compactMap({ $0 }).min() {
                counts.add((brought - m.blockTime).milliseconds)
            } else {
                needs.append((d.indexedAt ?? m.blockTime, m.blockTime))
            }
        }
        needs.sort { $0.indexedAt < $1.indexedAt }
        var lastGrant: Instant?
        var i = 0
        while i < needs.count {
            guard let run = timeline.firstRun(from: needs[i].indexedAt, lastGrant: lastGrant, refreshMinimum: world.timings.refreshMinimum) else {
                break  // never again: those are lost, and count as lost do (not at all)
            }
            if run.grant { lastGrant = run.at }
            while i < needs.count, needs[i].indexedAt <= run.at {
                counts.add((run.at - needs[i].blockTime).milliseconds)
                i += 1
            }
        }
        return counts
    }
}
