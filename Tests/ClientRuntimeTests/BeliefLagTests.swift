import ClientRuntime
import Testing
import TestSupport
import SyncCore
import SyncEngine
@testable import Simulation

/// Belief lag (docs/simulate.md): from the world breaking a channel to the engine saying so.
@Suite("Belief lag")
struct BeliefLagTests {
    func event(_ s: Int64, _ e: SyncEvent) -> TimedEvent { TimedEvent(at: at(s), event: e) }

    @Test("a push outage believed 5 min later lags 300 s; one that ends first is unnoticed; realtime already down counts 0")
    func lags() {
        var b = BeliefLag()
        b.observe(event(0, .realtime(.live, reason: "subscribed")))
        b.faultsChanged(WorldFaults(push: .init(dropPercent: 100)), at: at(100))
        b.observe(event(400, .pushState(from: .reliable, to: .unreliable, reason: "3 misses")))
        #expect(b.records[.push]?.lags == [.seconds(300)])
        b.faultsChanged(.none, at: at(500))
        b.observe(event(600, .pushState(from: .unreliable, to: .reliable, reason: "hit")))
        b.faultsChanged(WorldFaults(push: .init(down: true)), at: at(700))
        b.faultsChanged(.none, at: at(800))
        #expect(b.records[.push]?.unnoticed == 1)
        b.observe(event(900, .realtime(.offline, reason: "disconnected")))
        b.faultsChanged(WorldFaults(realtime: .init(down: true)), at: at(901))
        #expect(b.records[.realtime]?.lags == [.zero])
        b.faultsChanged(WorldFaults(realtime: .init(down: true), token: .expired), at: at(1000))
        #expect(b.final.records[.token]?.unnoticed == 1)  // the run ended before the engine saw it
        b.observe(event(1010, .tokenStatus(.expired)))
        #expect(b.records[.token]?.lags == [.seconds(10)])
    }

    @Test("unreliable with no push fault since push was last reliable is a false alarm; evidence of an old outage is not")
    func falseUnreliable() {
        var b = BeliefLag()
        b.observe(event(0, .pushState(from: .unknown, to: .reliable, reason: "hit")))
        b.faultsChanged(WorldFaults(push: .init(dropPercent: 100)), at: at(100))
        b.faultsChanged(.none, at: at(200))
        b.observe(event(5000, .pushState(from: .reliable, to: .unreliable, reason: "a catch-up found the outage")))
        #expect(b.falseUnreliable == 0)
        b.observe(event(5100, .pushState(from: .unreliable, to: .reliable, reason: "hit")))
        b.faultsChanged(WorldFaults(indexer: .init(down: true)), at: at(5200))
        b.observe(event(5300, .pushState(from: .reliable, to: .unreliable, reason: "misses")))
        #expect(b.falseUnreliable == 1)
    }

    @Test("a push fault shows until its delay and rule 2's grace after it ended: misses of pushes it delayed, judged after a push came back on time, are no false alarm; later ones are (cell 13 on matrix seed 61)")
    func faultShowsAfterItEnds() {
        var b = BeliefLag()
        b.observe(event(0, .pushState(from: .unknown, to: .reliable, reason: "hit")))
        b.faultsChanged(WorldFaults(push: .init(extraDelay: .seconds(90))), at: at(600))
        b.observe(event(700, .pushState(from: .reliable, to: .unreliable, reason: "misses")))
        b.faultsChanged(.none, at: at(9000))
        // A push sent after the fault is on time; three sent before it land 90 s late.
        b.observe(event(9020, .pushState(from: .unreliable, to: .reliable, reason: "hit")))
        b.observe(event(9060, .pushState(from: .reliable, to: .unreliable, reason: "3 misses")))
        #expect(b.falseUnreliable == 0)
        b.observe(event(9066, .pushState(from: .unreliable, to: .reliable, reason: "hit")))
        #expect(b.falseUnreliable == 0)
        // Reliable again 90 s + 60 s after the fault: an unreliable after that has nothing of it behind it.
        b.observe(event(9160, .pushState(from: .unreliable, to: .reliable, reason: "hit")))
        b.observe(event(9200, .pushState(from: .reliable, to: .unreliable, reason: "misses")))
        #expect(b.falseUnreliable == 1)
    }
}
