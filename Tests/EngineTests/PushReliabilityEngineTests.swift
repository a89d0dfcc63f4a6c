import SimWorld
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
        let registrations = run.log.filter { if case .tokenRegistration(let s) = $0.event { return s.hasPrefix("re-register") } else { return false } }
        #expect(registrations.map(\.at) == unreliable)
        #expect(registrations[0].event.line.contains("re-register: push unreliable"))
        #expect(registrations[1].event.line.contains("re-register skipped"))
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
        let back = run.incoming(from: "bob")[1]
        let hit = run.times { if case .observationHit(let id, _, _) = $0 { return id == back.txId } else { return false } }
        #expect(hit.count == 1)
        #expect(run.pushTransitions.last?.to == .reliable)
        #expect(run.pushTransitions.last?.at == hit[0])
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
        let hits = run.times { if case .observationHit(let id, _, _) = $0 { return id == tx.txId } else { return false } }
        let misses = run.times { if case .observationMiss(let id, _, _, _) = $0 { return id == tx.txId } else { return false } }
        #expect(hits.count == (hit ? 1 : 0))
        #expect(misses.count == (hit ? 0 : 1))
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
        let observed = run.log.compactMap { e -> String? in
            switch e.event {
            case .observationHit(let id, _, _), .observationMiss(let id, _, _, _): return id
            default: return nil
            }
        }
        let bobs = Set(run.incoming(from: "bob").map(\.txId))
        let own = Set(run.world.ledger.filter { $0.direction == .outgoing }.map(\.txId))
        #expect(bobs.count == 3 && own.count == 3)
        #expect(observed.allSatisfy { !bobs.contains($0) && !own.contains($0) })
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
        let banner = run.times { if case .banner = $0 { return true } else { return false } }
        #expect(banner.count == 1 && banner[0] > t(1, 10) && banner[0] < t(5))  // the extension raised it
        let hit = run.times { if case .observationHit(let id, _, _) = $0 { return id == tx.txId } else { return false } }
        #expect(hit == [t(5)])
        #expect(run.pushTransitions.last?.to == .reliable)
        #expect(!run.log.contains { if case .observationMiss = $0.event { return true } else { return false } })
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
        let after = run.log.dropFirst(before)
        #expect(run.driver.reliability.state == .reliable)
        #expect(run.driver.reliability.consecutiveMisses == 1)
        #expect(run.driver.gate.lastFinishedAt == lastCatchUp)
        #expect(after.first?.event == .launched(messages: 2, pushState: .reliable, mode: .remotePush))
        #expect(!after.contains { if case .pushState = $0.event { return true } else { return false } })
        // A relaunch is a cold start: connect, not a forced reconnect (rule 10), and the
        // foreground catch-up is debounced by the restored last catch-up time (rule 6).
        #expect(after.contains { $0.event == .realtime(.connecting, reason: "cold start") })
        #expect(after.contains { $0.event == .lifecycle(.foreground, detail: "relaunch: a cold start of a saved profile") })
        #expect(run.log.prefix(before).contains { $0.event == .lifecycle(.foreground, detail: "first launch") })
        #expect(after.contains { if case .catchUpSkipped = $0.event { return true } else { return false } })
        run.checkInvariants()
    }
}
