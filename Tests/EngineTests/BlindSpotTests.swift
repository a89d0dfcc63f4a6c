import Foundation
import SimulatedWorld
import Simulation
import SyncCore
import SyncEngine
import Testing

/// In the foreground with realtime down, a push service that silently dies is found out by
/// adaptive's (e); seed keeps its blind spot, measured. Judged on the world's ground truth
/// (its ledger, what push delivered).
@Suite("Adaptive (e): no blind spot in the foreground")
struct BlindSpotTests {
    static let world = """
        seed 11
        duration 3h
        contacts 6
        traffic 30/h
        mode remote-push
        at 0m foreground
        at 5m realtime down
        at 10m push drop 100%
        at 2h40m realtime up
        """

    @Test("(e): push found unreliable within 15 min of breaking, p95 ≤ 300 s, nothing lost; seed's blind spot stays")
    func findsSilentPush() throws {
        let (run, adaptive) = try measure(Self.world, .adaptive)
        #expect(adaptive.messagesLost == 0 && adaptive.duplicates == 0)
        let broke = Instant.zero + .minutes(10)
        let unreliable = try #require(run.session.becameUnreliable.first { $0 >= broke })
        #expect(unreliable - broke <= .minutes(15))
        #expect(try #require(adaptive.latencyP95) <= 300)
        // Ground truth: every message push dropped and realtime could not bring reached the
        // store by a fetch, within a few minutes of landing.
        var fetched = 0
        run.world.history.forEachMessage { m, realtime, pushed in
            guard m.direction == .incoming, m.blockTime > broke + .minutes(20), !realtime, !pushed,
                  let stored = run.storage.message(txId: m.txId) else { return }
            fetched += 1
            #expect(stored.via == .fetch)
            #expect(stored.receivedAt - m.blockTime <= .seconds(130), "\(m.txId) waited \(stored.receivedAt - m.blockTime)")
        }
        #expect(fetched > 30)
        // At the instant of the fall: rule 4's catch-up rides on the push check's sync of what
        // the tips showed moved (rule 8), and the token is re-registered. Polling takes over
        // (rule 13 extended to remote-push) once push is losing, not only late: at the first
        // message 5 min without its push ((g)), and the push checks stop.
        let decided: (SyncEvent) -> Bool = { $0.topic != .message && $0.topic != .observation }
        expectDecisions(run, from: unreliable, through: unreliable, matching: decided, [
            "00:15:47.690 push reliable → unreliable: 3 consecutive push-eligible txs without push within 1m (3 fetched)",
            "00:15:47.690 catch-up joined (push-unreliable): rides on the running targeted push-check sync",
            "00:15:47.690 push token registration: re-register: push unreliable",
        ])
        // The looks go on until push is losing, not only late: then polling takes over.
        expectDecisions(run, from: unreliable + .seconds(1), through: unreliable + .seconds(130), matching: { if case .polling(let s) = $0 { s.hasPrefix("started") } else { $0.topic == .pushWatch || $0.topic == .pushCheck } }, [
            "00:16:47.414 push check: realtime cannot verify push; asking the indexer's tips for the 15 objects",
            "00:16:47.640 push check: tip 53.7s old: 1 of 15 objects has messages no channel brought (contextual/kaspa:qd8d7555628b5c1c3/in): fetching those; push has the grace to match them",
            "00:16:47.640 push check: the tips showed what push had not brought: next look in 1m (at 00:17:47.414)",
            "00:17:47.414 push check: realtime cannot verify push; asking the indexer's tips for the 15 objects",
            "00:17:47.706 push check: tip 1m53s old: push and realtime brought everything indexed, no sync",
            "00:17:47.706 push check: nothing new: next look in 1m (at 00:18:47.414)",
            "00:17:52.430 push watch: lost c508d0c9: no push within 5m of it landing at 00:12:52.430",
            "00:17:52.430 polling: started (realtime unavailable, mode remote-push, push unreliable), first poll now",
            "00:17:52.430 push check: stopped: push is unreliable: polling takes over",
        ])

        for blind in [SyncPolicy.seed, SyncPolicy.adaptive.without("e")] {
            let (_, s) = try measure(Self.world, blind)
            #expect(s.messagesLost == 0)
            #expect(try #require(s.latencyP95) > 3600, "\(blind.name): p95 \(s.latencyP95 ?? 0)")
            #expect(try #require(s.timeToUnreliable) > 2 * 3600)
        }
    }

    @Test("(e): with push healthy the checks find push brought everything: no sync, no false unreliable, one tip a minute")
    func healthyPushCostsATipAMinute() throws {
        let healthy = Self.world.replacingOccurrences(of: "at 10m push drop 100%\n", with: "")
        let (run, s) = try measure(healthy, SyncPolicy.adaptive.without("g"))  // (e) alone: (g) paces it
        #expect(s.messagesLost == 0)
        #expect(!run.session.becameUnreliable.contains { $0 < .zero + .minutes(160) })
        let checks = run.log.filter { if case .pushCheckAsked = $0.event { true } else { false } }
        // 2h35m with realtime down, a check a minute from its first minute on.
        #expect((150...156).contains(checks.count), "\(checks.count) checks")
        // Push was first for every message it carried (a check may fetch one a moment before
        // its push; the push then matches it within the grace, a hit, not a miss).
        #expect(!run.log.contains { if case .observationMiss = $0.event { true } else { false } })
        // Checks stop once realtime is live again.
        #expect(!checks.contains { $0.at > .zero + .minutes(161) })
    }
}
