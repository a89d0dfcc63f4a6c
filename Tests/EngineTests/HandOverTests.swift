import ClientRuntime
import Directives
import SimulatedWorld
import Simulation
import SyncCore
import SyncEngine
import Testing

@Suite("A played scenario hands over to the live world at its end")
struct HandOverTests {
    @Test("after the script and its settle the live TUI's world goes on: traffic, replies, and a background and foreground that reconnect")
    func liveAfterScript() throws {
        let run = ScenarioRun(scenario: try scenario("duration 5m\nsettle 1m\nat 1m receive alice \"scripted\""), policy: .adaptive)
        run.continuesLive = true
        // The phase is told when it changes (a screen hears it; it does not ask each frame),
        // once each, at the instant it changes.
        var told: [(ScriptPhase, Instant)] = []
        run.onPhase = { told.append(($0, run.scheduler.now)) }
        #expect(run.phase == .playing(from: t(0), duration: .seconds(300)))
        #expect(run.scriptStatus == "script 0s/5m")
        run.advance(to: t(3))
        #expect(run.scriptStatus == "script 3m/5m" && told.isEmpty)
        run.advance(to: t(5, 30))
        #expect(run.scriptStatus == "script settling")
        run.advance(to: t(20))
        #expect(run.live && run.scriptStatus == "script over: live")
        #expect(told.map(\.0) == [.settling, .live])
        #expect(told.map(\.1) == [t(5), t(6)])
        let handOver = try #require(expectEvent(run, at: t(6), containing: "the live world goes on"))
        #expect(handOver.event.line == "world: script test.scenario over; the live world goes on (traffic 24/h, replies, keys)")
        run.apply(.background)
        run.advance(to: t(21))
        run.apply(.foreground)
        let alice = run.contact("alice")
        run.advance(to: t(22))
        run.driver.send(to: alice.address, text: "still there?")
        run.advance(to: t(90))
        // The world did not freeze: the reconnect went live, the reply came, traffic went on.
        expectDecisions(run, from: t(21), through: t(22), matching: about(.realtime, .lifecycle), [
            "00:21:00.000 lifecycle foreground: after 1m in background",
            "00:21:00.000 realtime connecting: forced reconnect, after background: isConnected=true is not trusted",
            "00:21:00.409 realtime live: subscribed",
        ])
        let reply = run.world.ledger.first { $0.direction == .incoming && $0.conversation == alice.address && $0.blockTime > t(22) }
        #expect(reply.map { run.storage.hasMessage(txId: $0.txId) } == true)
        #expect(run.world.ledger.filter { $0.blockTime > t(30) }.count > 5)
        #expect(run.scheduler.now == t(90))
        run.checkInvariants()
    }

    @Test("simulate stops at the end of the settle, so that lost has a meaning")
    func simulateStops() throws {
        let run = ScenarioRun(scenario: try scenario("duration 5m\nsettle 1m\ntraffic 60/h"), policy: .adaptive)
        run.advance(to: t(60))
        #expect(run.finished && !run.live)
        #expect(run.scheduler.now == t(6))
        #expect(run.world.ledger.allSatisfy { $0.blockTime < t(5, 5) })
    }
}

@Suite("The world's faults, as the session tells a view")
struct ActiveFaultsTests {
    @Test("each fault directive shows in the session's active faults in its own words, and leaves when healed")
    func activeFaults() throws {
        let run = ScenarioRun(scenario: try scenario("duration 10m"), policy: .adaptive)
        run.advance(to: t(1))
        #expect(run.session.faults.words.isEmpty)
        for d: Directive in [.fault(.pushDrop(percent: 100)), .fault(.indexerDown), .fault(.indexerLatency(.seconds(2))), .fault(.realtimeFlaky(percent: 20)), .fault(.tokenExpire)] {
            run.apply(d)
        }
        run.advance(to: t(1, 1))
        #expect(run.session.faults.words == ["push drop 100%", "token expired", "realtime flaky 20%", "indexer down", "indexer latency 2s"])
        run.apply(.fault(.pushUp))
        run.apply(.fault(.indexerUp))
        run.apply(.fault(.indexerLatency(.zero)))
        run.apply(.fault(.realtimeUp))
        #expect(run.session.faults.words == ["token expired"])
    }
}
