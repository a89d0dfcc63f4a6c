import Foundation
import Simulation
import SyncCore
import SyncEngine
import Testing

/// The inspector reads one typed value the engine sends while someone looks —
/// never its internals — and looking changes nothing the engine decides.
@Suite("The engine's inspection")
struct InspectionEngineTests {
    typealias H = SansIOEngineTests.Harness

    static func inspections(_ events: [SyncEvent]) -> [EngineInspection] {
        events.compactMap { if case .inspection(let i) = $0 { i } else { nil } }
    }

    @Test("no inspection is sent until asked; .inspect(true) sends one at once, .inspect(false) stops them")
    func onlyWhileAsked() throws {
        let h = H()
        h.launchedAndLive()
        #expect(Self.inspections(h.events()).isEmpty)
        h.send(.inspect(true))
        let first = try #require(Self.inspections(h.events()).last)
        #expect(first.push.state == .unknown)
        #expect(first.cursors.map(\.object) == [.handshakes(.incoming), .handshakes(.outgoing),
                                                .contextual(SansIOEngineTests.alice.address, .incoming),
                                                .contextual(SansIOEngineTests.alice.address, .outgoing), .payments])
        h.send(.inspect(false))
        h.send(.realtimeTx(connection: 1, SansIOEngineTests.tx("z", at: h.now)), at: h.now + .seconds(1))
        #expect(Self.inspections(h.events()).isEmpty)
    }

    @Test("rule 2 in the inspector: a realtime sighting waits for its push with its grace's end; the push clears it")
    func pendingObservation() throws {
        let h = H()
        h.launchedAndLive()
        h.send(.inspect(true))
        let t0 = h.now + .seconds(10)
        h.send(.realtimeTx(connection: 1, SansIOEngineTests.tx("tx-7c12", at: t0)), at: t0 + .seconds(1))
        let waiting = try #require(Self.inspections(h.events()).last)
        #expect(waiting.push.pending == [.init(txId: "tx-7c12", seenAt: t0 + .seconds(1), graceEndsAt: t0 + .seconds(61), via: .realtime)])
        h.send(.pushDelivered(SansIOEngineTests.push("tx-7c12", blockTime: t0)), at: t0 + .seconds(2))
        let matched = try #require(Self.inspections(h.events()).last)
        #expect(matched.push.pending.isEmpty)
        #expect(matched.push.state == .reliable)
        // The debounce now runs (rule 6): the inspection says until when.
        #expect(matched.gate.debounceEndsAt == (try #require(matched.gate.lastCatchUpAt)) + .seconds(600))
    }

    @Test("rule 8 in the inspector: the running catch-up, its requests out and the trigger that joined it")
    func runningAndJoined() throws {
        let h = H()
        h.send(.launched)
        h.send(.tokenStatus(.active))
        h.send(.inspect(true))
        h.send(.becameActive)
        h.send(.connectionOpened(1))
        h.send(.connected(1), at: h.now + .milliseconds(400))
        let due: Instant = try #require(h.engine.nextDeadline)  // unwrapped: a deadline must be set
        h.send(.deadline, at: due)  // the catch-up asks the indexer
        let running = try #require(Self.inspections(h.events()).last?.gate.running.first)
        #expect(running.kind == .full && running.trigger == .subscriptionRestart)
        #expect(running.outstanding == 5)
        #expect(running.joined == [.appActive])
        h.answerAllEmpty()
        #expect(Self.inspections(h.events()).last?.gate.running == [])
    }

    @Test("rule 14 in the inspector: a failed catch-up is owed, with its retry's instant")
    func owedRetry() throws {
        let h = H()
        h.launchedAndLive(answering: false)
        h.send(.inspect(true))
        for id in h.requests.keys.sorted() { h.send(.indexerReplied(id: id, .failure(TransportError("indexer down")))) }
        h.requests.removeAll()
        let i = try #require(Self.inspections(h.events()).last)
        #expect(i.gate.owed?.kind == .full)
        #expect(i.gate.retryAt == h.engine.gate.retryDue)
        #expect(i.gate.retryAt != nil)
    }

    @Test("looking changes nothing: a scenario's decisions are the same, line for line, with the inspector open all along")
    func lookingChangesNothing() throws {
        let scenario = try ScenarioParser.parse("""
            seed 5
            duration 40m
            contacts 3
            traffic 60/h
            at 0m foreground
            at 5m background
            at 9m foreground
            at 12m push drop 100%
            at 25m realtime down
            at 28m realtime up
            at 30m indexer down
            at 33m indexer up
            """, file: "inspect")
        func decisions(inspecting: Bool) -> [String] {
            let run = ScenarioRun(scenario: scenario, policy: .adaptive)
            if inspecting { run.session.driver.handle(.inspect(true)) }
            var inspections = 0
            run.session.driver.subscribe { if case .inspection = $0.event { inspections += 1 } }
            run.run()
            if inspecting { #expect(inspections > 100) }
            return run.session.log.filter(\.event.isDecision).map { "\($0.at.milliseconds) " + $0.event.line }
        }
        let plain = decisions(inspecting: false)
        #expect(plain.count > 50)
        #expect(decisions(inspecting: true) == plain)
    }
}
