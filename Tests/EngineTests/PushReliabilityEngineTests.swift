import SimulatedWorld
import Simulation
import SyncCore
import SyncEngine
import Testing

@Suite("Push reliability on the simulated world (rules 1–5, 12)")
struct PushReliabilityEngineTests {
    @Test("rules 2–3: push becomes reliable on the first matched push while foregrounded")
    func unknownToReliable() throws {
        let run = try simulate("duration 10m\nat 1m receive alice \"hi\"")
        let states = run.pushTransitions.map(\.to)
        #expect(states == [.disabled, .unknown, .reliable])  // no token yet → token active → first hit
        let reliableAt = run.pushTransitions.last!.at
        let tx = run.incoming(from: "alice")[0]
        #expect(reliableAt > tx.blockTime && reliableAt < tx.blockTime + .seconds(10))
        #expect(run.times { if case .observationHit(let id, _, _) = $0 { return id == tx.txId } else { return false } } == [reliableAt])
        run.checkInvariants()
    }

    @Test("rule 4: three missed pushes make it unreliable at the third grace, with a forced catch-up and a re-register; a second fall within 600 s does not re-register")
    func dropEverything() throws {
        let run = try simulate("""
            duration 20m
            at 1m receive alice "hit"
            at 2m push drop 100%
            at 3m receive alice "one"
            at 3m10s receive bob "two"
            at 3m20s receive carol "three"
            at 5m push drop 0%
            at 6m receive bob "hit again"
            at 7m push drop 100%
            at 7m receive alice "four"
            at 7m10s receive bob "five"
            at 7m20s receive carol "six"
            """)
        let unreliable = run.pushTransitions.filter { $0.to == .unreliable }.map(\.at)
        #expect(unreliable.count == 2)
        let third = run.incoming(from: "carol")[0]
        // The third realtime sighting is ~1 s after its block; its grace is 60 s after that.
        #expect(unreliable[0] > third.blockTime + .seconds(60) && unreliable[0] < third.blockTime + .seconds(62))
        #expect(run.catchUpStarts(trigger: .pushUnreliable) == unreliable)  // at once, both times
        // Each fall: three misses, unreliable at the third grace, a forced catch-up and a
        // re-register at once; the second fall is within 600 s of the first re-register: skipped.
        expectDecisions(run, from: t(2), matching: { pushTopics.contains($0.topic) || $0.topic == .observation || $0.isCatchUpStarted() }, [
            "00:04:01.267 observation miss 0d4663be (realtime): no push within grace, misses 1/3",
            "00:04:10.829 observation miss 806475d5 (realtime): no push within grace, misses 2/3",
            "00:04:21.122 observation miss c34a003c (realtime): no push within grace, misses 3/3",
            "00:04:21.122 push reliable → unreliable: 3 consecutive push-eligible txs without push within 1m (3 seen on realtime)",
            "00:04:21.122 catch-up started (push-unreliable): full sync of 9 objects, forced",
            "00:04:21.122 push token registration: re-register: push unreliable",
            "00:06:04.216 observation hit bc259a23 (realtime): push 3s after realtime",
            "00:06:04.216 push unreliable → reliable: push for bc259a23 arrived 3s after its realtime tx",
            "00:08:01.405 observation miss 5852eeef (realtime): no push within grace, misses 1/3",
            "00:08:11.133 observation miss ebd838dd (realtime): no push within grace, misses 2/3",
            "00:08:21.409 observation miss f4823d64 (realtime): no push within grace, misses 3/3",
            "00:08:21.409 push reliable → unreliable: 3 consecutive push-eligible txs without push within 1m (3 seen on realtime)",
            "00:08:21.409 catch-up started (push-unreliable): full sync of 9 objects, forced",
            "00:08:21.409 push token registration: re-register skipped: last one 4m ago, next allowed in 5m59s",
        ])
        #expect(run.world.push.registrations == 2)  // launch, then one re-register
        run.checkInvariants()
        run.checkNothingLost()
    }

    @Test("rule 3: one hit after unreliable makes it reliable at once and resets the miss count")
    func recoveryOnFirstHit() throws {
        let run = try simulate("""
            duration 12m
            at 1m push drop 100%
            at 2m receive alice "a"
            at 2m10s receive bob "b"
            at 2m20s receive carol "c"
            at 2m30s receive alice "d"
            at 5m push drop 0%
            at 6m receive bob "back"
            """, until: .minutes(8))
        // One hit after unreliable: reliable at that instant.
        expectDecisions(run, from: t(5), matching: { pushTopics.contains($0.topic) || $0.topic == .observation || $0.isCatchUpStarted() }, [
            "00:06:04.216 observation hit bc259a23 (realtime): push 3s after realtime",
            "00:06:04.216 push unreliable → reliable: push for bc259a23 arrived 3s after its realtime tx",
        ])
        #expect(run.driver.reliability.consecutiveMisses == 0)
        run.checkInvariants()
    }

    @Test("rule 2: a push 20 s before its realtime tx is a hit, 40 s before is not", arguments: [(Int64(21), true), (Int64(41), false)])
    func leadTolerance(realtimeDelay: Int64, hit: Bool) throws {
        var timings = WorldTimings()
        timings.realtimeDelay = (.seconds(realtimeDelay), .seconds(realtimeDelay))
        timings.pushLatency = (.seconds(1), .seconds(1))
        let run = try simulate("duration 5m\nat 1m receive alice \"early push\"", timings: timings)
        let tx = run.incoming(from: "alice")[0]
        #expect(run.storage.message(txId: tx.txId)?.via == .push)  // the push came first
        expectDecisions(run, from: t(1), matching: { if case .pushState(.unknown, _, _) = $0 { true } else { $0.topic == .observation } }, hit ? [
            "00:01:21.000 observation hit 437a813d (realtime): push 20s before realtime",
            "00:01:21.000 push unknown → reliable: push for 437a813d arrived 20s before its realtime tx",
        ] : [
            "00:02:41.000 observation miss 437a813d (realtime): no push within grace, misses 1/3",
        ])
        #expect(run.driver.reliability.state == (hit ? .reliable : .unknown))
        run.checkInvariants()
    }

    @Test("rule 2: muted contacts and the user's own messages never count")
    func ineligibleNeverCount() throws {
        let run = try simulate("""
            duration 10m
            at 1m receive alice "hit"
            at 2m mute bob
            at 2m10s receive bob "m1"
            at 2m20s receive bob "m2"
            at 2m30s receive bob "m3"
            at 3m send carol "o1"
            at 3m send alice "o2"
            at 3m send alice "o3"
            """, until: .minutes(5)) { run in
            run.world.traffic.perHour = 0
        }
        let bobs = Set(run.incoming(from: "bob").map(\.txId))
        let own = Set(run.world.ledger.filter { $0.direction == .outgoing }.map(\.txId))
        #expect(bobs.count == 3 && own.count == 3)
        // Alice's first message and the three replies to the user's sends are hits; none of
        // bob's muted messages and none of the user's own is observed.
        expectDecisions(run, matching: about(.observation), [
            "00:01:03.793 observation hit 437a813d (realtime): push 2.6s after realtime",
            "00:03:33.518 observation hit f4823d64 (realtime): push 3.2s after realtime",
            "00:03:33.613 observation hit 25499d42 (realtime): push 1.9s after realtime",
            "00:03:38.130 observation hit ab4344a3 (realtime): push 3.6s after realtime",
        ])
        #expect(run.world.push.sent == run.world.ledger.filter { $0.direction == .incoming && !bobs.contains($0.txId) }.count)
        // Own messages were notified on the realtime channel (and deduplicated against `sent`).
        #expect(own.allSatisfy { run.storage.message(txId: $0)?.via == .sent })
        #expect(run.driver.reliability.state == .reliable)
        #expect(run.driver.reliability.consecutiveMisses == 0)
        run.checkInvariants()
    }

    @Test("rule 1: disabled in modes other than remote-push and while the token is not active; unknown again when it is")
    func disabledConditions() throws {
        let run = try simulate("""
            duration 12m
            at 1m receive alice "hit"
            at 2m mode off
            at 3m mode remote-push
            at 4m mode background-fetch
            at 5m mode remote-push
            at 6m token expire
            at 7m background
            at 8m foreground
            """)
        let states = run.pushTransitions.map(\.to)
        #expect(states == [.disabled, .unknown, .reliable, .disabled, .unknown, .disabled, .unknown, .disabled, .unknown])
        let last = run.pushTransitions.suffix(2)
        #expect(last.first!.at == t(6))                          // token expired → disabled
        #expect(last.last!.at > t(8) && last.last!.at < t(8, 5))  // re-registered on foreground → active → unknown
        run.checkInvariants()
    }

    @Test("rule 12: pushes stored by the extension while backgrounded are processed on foreground and count as hits")
    func pendingPushesAreHits() throws {
        let run = try simulate("""
            duration 10m
            at 0m push delay 30s
            at 1m receive alice "late push"
            at 1m10s background
            at 5m foreground
            """)
        let tx = run.incoming(from: "alice")[0]
        let stored = try #require(run.storage.message(txId: tx.txId))
        #expect(stored.via == .realtime)  // realtime saw it first, before the background
        // The extension raised the banner in the background; the hit is at the foreground.
        expectDecisions(run, from: t(1), matching: { pushTopics.contains($0.topic) || $0.topic == .observation || $0.topic == .banner }, [
            "00:01:33.793 banner [Alice] late push (badge 1)",
            "00:05:00.000 observation hit 437a813d (realtime): push 32.6s after realtime",
            "00:05:00.000 push unknown → reliable: push for 437a813d arrived 32.6s after its realtime tx",
        ])
        run.checkInvariants()
    }

    @Test("rule 5: the learned reliability state survives an engine restart on the same storage")
    func survivesRestart() throws {
        let storage = InMemoryChatStorage()
        let run = try simulate("""
            duration 30m
            at 1m receive alice "hit"
            at 2m push drop 100%
            at 3m receive bob "miss"
            at 5m push drop 0%
            """, until: .minutes(10), storage: storage)
        #expect(run.driver.reliability.state == .reliable)
        #expect(run.driver.reliability.consecutiveMisses == 1)
        let lastCatchUp = run.driver.gate.lastFinishedAt
        #expect(lastCatchUp != nil)
        let before = run.log.count

        run.restartApp()
        run.advance(to: t(12))
        let after = Array(run.log.dropFirst(before))
        #expect(run.driver.reliability.state == .reliable)
        #expect(run.driver.reliability.consecutiveMisses == 1)
        #expect(run.driver.gate.lastFinishedAt == lastCatchUp)
        #expect(run.log.prefix(before).contains { $0.event == .lifecycle(.foreground, detail: "first launch") })
        // The relaunch, whole: launched with push reliable and no push state change; a cold
        // start, connecting, not a forced reconnect (rule 10); the foreground catch-up
        // debounced by the restored last catch-up time (rule 6).
        expectDecisions(after, [
            "00:10:00.000 launched: 2 stored messages, push reliable, mode remote-push",
            "00:10:00.000 push token registration: launch: refreshing the active token",
            "00:10:00.000 lifecycle foreground: relaunch: a cold start of a saved profile",
            "00:10:00.000 realtime connecting: cold start",
            "00:10:00.409 realtime live: subscribed",
            "00:10:00.409 catch-up skipped (subscription-restart): push reliable, last catch-up 9m56s ago, next allowed in 3.3s",
            "00:10:00.409 catch-up skipped (app-active): push reliable, last catch-up 9m56s ago, next allowed in 3.3s",
        ])
        run.checkInvariants()
    }
}
