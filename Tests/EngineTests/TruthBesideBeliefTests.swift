import ClientRuntime
import Simulation
import SyncCore
import SyncEngine
import Testing

/// Truth beside belief is decided once, by the session's `BeliefLag`, fed by the world's faults
/// as the world tells them and by the engine's own events; a screen is told the result
/// (`WorldTruth`) and keeps no copy of its own. Here with the real world and engine.
@Suite("Truth beside belief: the session decides, the screen is told")
struct TruthBesideBeliefTests {
    /// A run whose push is reliable by `t(20)`, every truth it told a screen kept in order.
    static func reliableRun() throws -> (ScenarioRun, Box) {
        let run = ScenarioRun(scenario: try scenario("duration 3h\ncontacts 3\ntraffic 60/h"), policy: .adaptive)
        let told = Box()
        run.session.onTruthChanged = { told.all.append(($0, run.scheduler.now)) }
        run.advance(to: t(20))
        #expect(run.driver.reliability.state == .reliable)
        return (run, told)
    }

    final class Box {
        var all: [(truth: WorldTruth, at: Instant)] = []
        var last: WorldTruth { all.last!.truth }
    }

    @Test("push dropped while the engine counts on it: told at once, from the instant it broke; told gone the moment the engine finds push unreliable")
    func pushOutage() throws {
        let (run, told) = try Self.reliableRun()
        #expect(told.all.count == 1 && told.last == WorldTruth(), "one truth told at subscription: nothing broken")
        let broke = run.scheduler.now
        run.apply(.fault(.pushDrop(percent: 100)))
        #expect(told.last.faults.words == ["push drop 100%"])
        #expect(told.last.broken == [.push: "push drop 100%"])
        #expect(told.last.unnoticed == [.push: broke])
        var found: Instant?
        run.session.subscribe { e in if case .pushState(_, .unreliable, _) = e.event, found == nil { found = e.at } }
        run.advance(to: t(80))
        let noticed = try #require(found, "the engine never found push unreliable")
        // The truth told last says the engine believes it now; it was told at that very instant.
        #expect(told.last.unnoticed.isEmpty && told.last.broken == [.push: "push drop 100%"])
        let agreed = try #require(told.all.first { $0.at >= broke && $0.truth.unnoticed.isEmpty && !$0.truth.broken.isEmpty })
        #expect(agreed.at == noticed)
        #expect(run.session.beliefLag.records[.push]?.lags == [noticed - broke], "the measure and the screen are one BeliefLag")
    }

    @Test("push not counted on (mode off) is no news: a dropping push service is broken, not unnoticed; back in remote-push, the engine counts on it and is wrong")
    func disabledPushIsNoNews() throws {
        let (run, told) = try Self.reliableRun()
        run.apply(.mode(.off))
        run.advance(to: run.scheduler.now + .seconds(1))
        #expect(run.driver.reliability.state == .disabled)
        run.apply(.fault(.pushDrop(percent: 100)))
        #expect(told.last.broken[.push] != nil && told.last.unnoticed[.push] == nil)
        let back = run.scheduler.now + .seconds(5)
        run.advance(to: back)
        run.apply(.mode(.remotePush))
        run.advance(to: back + .seconds(10))
        #expect(told.last.unnoticed[.push] != nil, "remote-push again: the engine counts on push, and is wrong")
    }

    @Test("a stale socket, an expired token and the device offline: each unnoticed until the engine's own events say so")
    func otherChannels() throws {
        let (run, told) = try Self.reliableRun()
        let broke = run.scheduler.now
        run.apply(.fault(.realtimeStale))
        #expect(told.last.unnoticed == [.realtime: broke], "stale sockets say nothing: the keepalive has to find it")
        run.advance(to: broke + .minutes(2))
        #expect(told.last.unnoticed[.realtime] == nil, "the keepalive found it: \(told.last)")
        run.apply(.fault(.tokenExpire))
        let expired = run.scheduler.now
        #expect(told.last.unnoticed[.token] == expired)
        run.advance(to: expired + .seconds(1))
        #expect(told.last.unnoticed[.token] == nil, "the engine heard the token's status")
        run.apply(.fault(.networkOff))
        let off = run.scheduler.now
        #expect(told.last.unnoticed[.network] != nil || told.last.broken[.network] == "network off")
        run.advance(to: off + .minutes(2))
        #expect(told.last.unnoticed[.network] == nil && told.last.broken[.network] == "network off")
    }

    @Test("nothing is computed for a screen while none listens, and one that starts listening is told the truth at once")
    func toldOnSubscription() throws {
        let run = ScenarioRun(scenario: try scenario("duration 1h\ncontacts 2"), policy: .adaptive)
        run.advance(to: t(1))
        run.apply(.fault(.indexerDown))
        var told: [WorldTruth] = []
        run.session.onTruthChanged = { told.append($0) }
        #expect(told.count == 1 && told[0].faults.indexer.down && told[0].unnoticed.isEmpty, "the indexer is no channel belief lag measures")
    }
}
