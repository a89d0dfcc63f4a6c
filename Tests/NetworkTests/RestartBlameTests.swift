import Foundation
import ServerProtocol
import SyncCore
import SyncEngine
import Testing
import TestSupport
import ServerPair
import ChatServer

/// A server that went away and came back is a known gap for every channel: no push miss is
/// counted for what its absence hid, and the reconnect's catch-up closes the gap. In one
/// process, in virtual time (`WorldPair`): the server crashed (no checkpoint, every socket
/// dropped) and started again on its data folder, round after round, while its simulated
/// contacts write.
@Suite("A restart blames no one")
struct RestartBlameTests {
    static func misses(_ c: WorldPair.Client) -> [TimedEvent] {
        c.session.log.filter { if case .observationMiss = $0.event { true } else { false } }
    }

    @Test("push stays reliable through eight crashes and restarts under traffic: no observation miss is counted, nothing is lost or shown twice, and the bar's link is `reached` whenever realtime is live")
    func eightRestarts() throws {
        let dir = try TemporaryDirectory("restart-blame")
        defer { dir.remove() }
        let pair = try WorldPair(contacts: 3, trafficPerHour: 600, speed: 60, store: try ServerStore(directory: dir.file("server")))
        let ada = try pair.join("ada")
        #expect(pair.run(upTo: 120_000) { ada.session.driver.engine.status.push == .reliable }, "push never became reliable")
        var contradictions: [String] = []
        for round in 1...8 {
            pair.run(milliseconds: 3_000)
            pair.crash()
            // Down for a few seconds of the wall clock (minutes of the world's): the clients'
            // sockets fail, the relay waits out its backoff.
            for _ in 0..<8 {
                pair.run(milliseconds: 500)
                if ada.session.driver.engine.status.realtime == .live, ada.session.app.link != .reached {
                    contradictions.append("round \(round): realtime live, link \(ada.session.app.link)")
                }
            }
            try pair.restart(store: try ServerStore(directory: dir.file("server")))
            for _ in 0..<10 {
                pair.run(milliseconds: 500)
                if ada.session.driver.engine.status.realtime == .live, ada.session.app.link != .reached {
                    contradictions.append("round \(round): realtime live, link \(ada.session.app.link)")
                }
            }
        }
        pair.run(milliseconds: 8_000)
        let misses = Self.misses(ada)
        #expect(misses.isEmpty, "\(misses.count) misses: \(misses.prefix(4).map(\.event.line))")
        #expect(ada.session.driver.engine.status.push == .reliable)
        #expect(contradictions.isEmpty, "\(contradictions.prefix(4))")
        #expect(ada.session.log.contains { if case .pushPath(open: false, _) = $0.event { true } else { false } },
                "the relay's closing reached the engine")
        let (lost, duplicates, incoming) = try PairFaultTests.lostAndDuplicated(pair, ada, settle: 120_000)
        #expect(incoming > 20)
        #expect(lost.isEmpty, "lost \(lost.count) of \(incoming)")
        #expect(duplicates == 0)
        pair.host.store?.close()
    }

    @Test("a message that landed just before the server was killed (its realtime sighting and its push lost with it) is fetched at the reconnect, not minutes later: the push path was closed in the gap, so push is in doubt and the reconnect proves the gap (adaptive's UTXO set) instead of trusting push")
    func gapWithThePushPathClosed() throws {
        let dir = try TemporaryDirectory("restart-gap")
        defer { dir.remove() }
        let pair = try WorldPair(contacts: 1, trafficPerHour: 0, speed: 60, store: try ServerStore(directory: dir.file("server")))
        let ada = try pair.join("ada")
        #expect(pair.run(upTo: 120_000) { ada.session.driver.engine.status.realtime == .live && ada.session.driver.engine.status.token == .active })
        // Push reliable first, from a few messages that came both ways.
        for i in 0..<4 {
            PairFaultTests.fault(pair, "receive alice \"warm \(i)\"", user: "ada")
            pair.run(milliseconds: 300)
        }
        #expect(pair.run(upTo: 60_000) { ada.session.driver.engine.status.push == .reliable }, "push never became reliable")
        // A message lands, and the server dies before the node or the push service tell anyone.
        PairFaultTests.fault(pair, "receive alice \"the last word\"", user: "ada")
        let world = try #require(pair.host.user(named: "ada")).world
        #expect(pair.run(upTo: 60_000) { world.ledger.contains { $0.body == "the last word" && $0.blockTime <= pair.host.virtualNow } })
        let txId = try #require(world.ledger.last { $0.body == "the last word" }?.txId)
        #expect(!ada.session.storage.hasMessage(txId: txId), "realtime brought it before the crash: the test shows nothing")
        pair.crash()
        pair.run(milliseconds: 20)
        try pair.restart(store: try ServerStore(directory: dir.file("server")))
        // Back within seconds of the wall clock: x60 makes 2 minutes of the world's clock 2 s.
        let ok = pair.run(upTo: 1_500) { ada.session.storage.hasMessage(txId: txId) }
        #expect(ok,
                "not fetched within 90 s of the world's clock after the restart: \(ada.session.log.suffix(6).map(\.line))")
        pair.host.store?.close()
    }

    @Test("a token the server confirmed is on disk before the client is told: killed a moment after a join (no checkpoint), the server comes back with the token active, and tells a relay that opens again")
    func tokenSurvivesAKill() throws {
        let dir = try TemporaryDirectory("restart-token")
        defer { dir.remove() }
        let pair = try WorldPair(contacts: 1, trafficPerHour: 0, speed: 60, store: try ServerStore(directory: dir.file("server")))
        let ada = try pair.join("ada")
        #expect(pair.run(upTo: 10_000) { ada.session.driver.engine.status.token == .active })
        pair.crash()
        try pair.restart(store: try ServerStore(directory: dir.file("server")))
        #expect(try #require(pair.host.user(named: "ada")).world.push.tokenStatus == .active)
        pair.host.store?.close()
    }

    @Test("a tx whose push was due while the push path was closed is no evidence: one that landed within the grace before it closed, or while closed; one whose grace ended before, or that landed after it opened, is")
    func pushPathGap() {
        var reliability = PushReliability(settings: .default, policy: .adaptive)
        let t0 = Instant(milliseconds: 1_000_000)
        _ = reliability.conditionsChanged(PushConditions(mode: .remotePush, permissionGranted: true, tokenStatus: .active), now: t0)
        let alice = Address("kaspa:alice")
        _ = reliability.pushPathChanged(open: false, now: t0 + .seconds(100))
        _ = reliability.pushPathChanged(open: true, now: t0 + .seconds(200))
        #expect(reliability.pushEligible(from: alice, landedAt: t0 + .seconds(30)), "its grace ended at 90 s, before the gap")
        #expect(!reliability.pushEligible(from: alice, landedAt: t0 + .seconds(50)), "its push was due at 110 s, in the gap")
        #expect(!reliability.pushEligible(from: alice, landedAt: t0 + .seconds(150)), "landed in the gap")
        #expect(reliability.pushEligible(from: alice, landedAt: t0 + .seconds(201)), "landed after the gap")
        #expect(reliability.pushPathWasClosed(since: t0 + .seconds(150)) && !reliability.pushPathWasClosed(since: t0 + .seconds(201)))
    }

    @Test("sightings waiting for a push when the path closes are let go, not counted as misses when their grace runs out")
    func sightingsLetGo() {
        var reliability = PushReliability(settings: .default, policy: .adaptive)
        let t0 = Instant(milliseconds: 1_000_000)
        _ = reliability.conditionsChanged(PushConditions(mode: .remotePush, permissionGranted: true, tokenStatus: .active), now: t0)
        reliability.appResumed()
        let alice = Address("kaspa:alice")
        _ = reliability.realtimeTxSeen(txId: "a", from: alice, landedAt: t0 + .seconds(10), now: t0 + .seconds(11))
        #expect(reliability.pushPathChanged(open: false, now: t0 + .seconds(20)) == [.sightingsLetGo(txIds: ["a"])])
        #expect(reliability.deadlineReached(now: t0 + .seconds(200)).isEmpty)
        #expect(reliability.consecutiveMisses == 0)
    }
}

/// Fault keys on a server step as in the embedded world: each from the state the server
/// confirmed, keys pressed meanwhile wait in order.
@Suite("Fault keys on a server")
struct ServerFaultKeyTests {
    @Test("p p pressed before the server answers gives drop, then delay (not drop twice); p p p gives drop → delay → ok; the bar and the world agree at each end")
    func pushKeyStepsFromConfirmed() throws {
        let pair = try WorldPair(contacts: 1, trafficPerHour: 0, speed: 60)
        let ada = try pair.join("ada")
        pair.run(milliseconds: 2_000)
        let world = try #require(pair.host.user(named: "ada")).world
        ada.session.toggle(.push)
        ada.session.toggle(.push)
        pair.run(milliseconds: 2_000)
        #expect(world.faults.push.dropPercent == 0 && world.faults.push.extraDelay == .seconds(90), "\(world.faults.words)")
        #expect(ada.session.faults == world.faults)
        ada.session.toggle(.push)
        pair.run(milliseconds: 2_000)
        #expect(world.faults == .none, "\(world.faults.words)")
        for _ in 0..<3 { ada.session.toggle(.push) }
        pair.run(milliseconds: 2_000)
        #expect(world.faults == .none && ada.session.faults == .none, "p p p: \(world.faults.words), the bar \(ada.session.faults.words)")
        ada.session.toggle(.realtime)
        ada.session.toggle(.indexer)
        ada.session.toggle(.realtime)
        pair.run(milliseconds: 2_000)
        #expect(world.faults.words == ["indexer down"], "r x r: \(world.faults.words)")
    }
}
