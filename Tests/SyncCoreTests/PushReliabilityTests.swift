import Testing
@testable import SyncCore

@Suite("Push reliability (rules 1–5)")
struct PushReliabilityTests {
    @Test("rules 2–3: the first push matching a realtime tx makes unknown reliable")
    func firstHitMakesReliable() {
        var m = machine(.unknown)
        #expect(m.realtimeTxSeen(txId: "a", from: alice, landedAt: at(10), now: at(10)).isEmpty)
        let actions = m.pushReceived(txId: "a", arrivedAt: at(12), now: at(12))
        #expect(actions.first == .observedHit(txId: "a", pushOffset: .seconds(2), via: .realtime))
        #expect(actions.stateChanges == [.reliable])
        #expect(m.state == .reliable)
    }

    @Test("rule 2: a push 60 s after its realtime tx is a hit, a grace that runs out is a miss")
    func graceBoundary() {
        var m = machine(.unknown)
        _ = m.realtimeTxSeen(txId: "a", from: alice, landedAt: at(0), now: at(0))
        #expect(m.nextDeadline == at(60))
        #expect(m.deadlineReached(now: at(59)).isEmpty)  // spurious wake-up: nothing
        #expect(m.pushReceived(txId: "a", arrivedAt: at(60), now: at(60)).stateChanges == [.reliable])

        _ = m.realtimeTxSeen(txId: "b", from: alice, landedAt: at(100), now: at(100))
        #expect(m.deadlineReached(now: at(160)) == [.observedMiss(txId: "b", consecutiveMisses: 1, via: .realtime)])
        #expect(m.pushReceived(txId: "b", arrivedAt: at(161), now: at(161)).isEmpty)  // too late: already a miss
    }

    @Test("rule 2: a push 20 s before its realtime tx is a hit, 40 s before is not")
    func leadTolerance() {
        var m = machine(.unknown)
        _ = m.pushReceived(txId: "early", arrivedAt: at(80), now: at(80))
        #expect(m.realtimeTxSeen(txId: "early", from: alice, landedAt: at(100), now: at(100)).stateChanges == [.reliable])

        var n = machine(.unknown)
        _ = n.pushReceived(txId: "tooEarly", arrivedAt: at(60), now: at(60))
        #expect(n.realtimeTxSeen(txId: "tooEarly", from: alice, landedAt: at(100), now: at(100)).isEmpty)
        #expect(n.deadlineReached(now: at(160)) == [.observedMiss(txId: "tooEarly", consecutiveMisses: 1, via: .realtime)])
        #expect(n.state == .unknown)
    }

    @Test("rules 3–4: three misses make it unreliable at the third grace, force a catch-up and re-register")
    func threeMissesMakeUnreliable() {
        var m = machine(.reliable)
        for (i, id) in ["a", "b", "c"].enumerated() {
            _ = m.realtimeTxSeen(txId: id, from: alice, landedAt: at(Int64(i) * 10), now: at(Int64(i) * 10))
        }
        #expect(m.deadlineReached(now: at(60)) == [.observedMiss(txId: "a", consecutiveMisses: 1, via: .realtime)])
        #expect(m.deadlineReached(now: at(70)) == [.observedMiss(txId: "b", consecutiveMisses: 2, via: .realtime)])
        #expect(m.state == .reliable)
        let third = m.deadlineReached(now: at(80))
        #expect(third.count == 4)
        #expect(third[0] == .observedMiss(txId: "c", consecutiveMisses: 3, via: .realtime))
        #expect(third.stateChanges == [.unreliable])
        #expect(third[2] == .startForcedCatchUp)
        #expect(third[3] == .reregisterToken)
        #expect(m.lastReregisterAt == at(80))
    }

    @Test("rule 4: a second fall into unreliable within 600 s does not re-register again")
    func reregisterCooldown() {
        var m = machine(.reliable)
        func threeMisses(from t: Int64) -> [PushReliability.Action] {
            var all: [PushReliability.Action] = []
            for i in 0..<3 { _ = m.realtimeTxSeen(txId: "t\(t)-\(i)", from: alice, landedAt: at(t + Int64(i)), now: at(t + Int64(i))) }
            all += m.deadlineReached(now: at(t + 62))
            return all
        }
        #expect(threeMisses(from: 0).contains(.reregisterToken))
        _ = m.realtimeTxSeen(txId: "hit", from: alice, landedAt: at(100), now: at(100))
        #expect(m.pushReceived(txId: "hit", arrivedAt: at(101), now: at(101)).stateChanges == [.reliable])
        let second = threeMisses(from: 200)  // re-registered at 62, now 262: 200 s ago
        #expect(second.stateChanges == [.unreliable])
        #expect(second.contains(.startForcedCatchUp))
        #expect(!second.contains(.reregisterToken))
        #expect(second.last == .reregisterSkipped(lastAgo: .seconds(200), nextAllowedIn: .seconds(400)))
        #expect(m.lastReregisterAt == at(62))

        _ = m.realtimeTxSeen(txId: "hit2", from: alice, landedAt: at(700), now: at(700))
        _ = m.pushReceived(txId: "hit2", arrivedAt: at(701), now: at(701))
        #expect(threeMisses(from: 800).contains(.reregisterToken))  // 800 s later: allowed again
    }

    @Test("rule 3: one hit after unreliable makes it reliable at once, and a hit resets the miss count")
    func hitRecovers() {
        var m = machine(.unreliable, misses: 5)
        _ = m.realtimeTxSeen(txId: "a", from: alice, landedAt: at(0), now: at(0))
        #expect(m.pushReceived(txId: "a", arrivedAt: at(1), now: at(1)).stateChanges == [.reliable])
        #expect(m.consecutiveMisses == 0)

        _ = m.realtimeTxSeen(txId: "b", from: alice, landedAt: at(10), now: at(10))
        _ = m.realtimeTxSeen(txId: "c", from: alice, landedAt: at(11), now: at(11))
        _ = m.deadlineReached(now: at(71))
        #expect(m.consecutiveMisses == 2)
        _ = m.realtimeTxSeen(txId: "d", from: alice, landedAt: at(80), now: at(80))
        _ = m.pushReceived(txId: "d", arrivedAt: at(81), now: at(81))
        #expect(m.consecutiveMisses == 0)
        _ = m.realtimeTxSeen(txId: "e", from: alice, landedAt: at(90), now: at(90))
        _ = m.deadlineReached(now: at(150))
        #expect(m.consecutiveMisses == 1)
        #expect(m.state == .reliable)  // the two misses before the hit do not count toward three
    }

    @Test("rule 2: a muted contact's txs never count")
    func ineligibleNeverCounts() {
        var m = machine(.reliable)
        m.contactMuteChanged(alice, muted: true, now: .zero)
        for i in 0..<5 { _ = m.realtimeTxSeen(txId: "muted\(i)", from: alice, landedAt: at(Int64(i)), now: at(Int64(i))) }
        #expect(m.pendingObservations == 0)
        #expect(m.nextDeadline == nil)
        #expect(m.deadlineReached(now: at(1000)).isEmpty)
        #expect(m.state == .reliable)
    }

    @Test("rule 1: disabled outside remote-push, without permission or without an active token; unknown again after")
    func disabledConditions() {
        for blocked in [
            PushConditions(mode: .backgroundFetch, permissionGranted: true, tokenStatus: .active),
            PushConditions(mode: .off, permissionGranted: true, tokenStatus: .active),
            PushConditions(mode: .remotePush, permissionGranted: false, tokenStatus: .active),
            PushConditions(mode: .remotePush, permissionGranted: true, tokenStatus: .expired),
            PushConditions(mode: .remotePush, permissionGranted: true, tokenStatus: .registered),
        ] {
            var m = machine(.reliable)
            #expect(m.conditionsChanged(blocked, now: at(1)).stateChanges == [.disabled])
            _ = m.realtimeTxSeen(txId: "x", from: alice, landedAt: at(2), now: at(2))
            #expect(m.pendingObservations == 0)  // no evidence while disabled
            #expect(m.conditionsChanged(operational, now: at(3)).stateChanges == [.unknown])
        }
    }

    @Test("rule 5: the learned state restores from what was persisted")
    func persistedRoundTrip() {
        var m = machine(.unknown)
        _ = m.realtimeTxSeen(txId: "a", from: alice, landedAt: at(0), now: at(0))
        _ = m.pushReceived(txId: "a", arrivedAt: at(1), now: at(1))
        _ = m.realtimeTxSeen(txId: "b", from: alice, landedAt: at(5), now: at(5))
        _ = m.deadlineReached(now: at(65))
        let restored = PushReliability(restoring: m.persisted)
        #expect(restored.state == .reliable)
        #expect(restored.consecutiveMisses == 1)
        #expect(m.persisted == PushReliability.Persisted(state: .reliable, consecutiveMisses: 1, lastReregisterAt: nil))
    }

    @Test("rule 12: a push processed late counts with the time it really arrived")
    func latePendingPushUsesArrivalTime() {
        var m = machine(.unknown)
        _ = m.realtimeTxSeen(txId: "a", from: alice, landedAt: at(0), now: at(0))
        // Arrived at 40 s while the app was suspended; processed on foreground at 600 s.
        #expect(m.pushReceived(txId: "a", arrivedAt: at(40), now: at(600)).stateChanges == [.reliable])
        _ = m.realtimeTxSeen(txId: "b", from: alice, landedAt: at(700), now: at(700))
        // Arrived at 800 s: after the grace, so a miss even though the timer had not fired yet.
        #expect(m.pushReceived(txId: "b", arrivedAt: at(800), now: at(900)) == [.observedMiss(txId: "b", consecutiveMisses: 1, via: .realtime)])
    }

    @Test("a realtime redelivery of the same tx is observed once")
    func redeliveryObservedOnce() {
        var m = machine(.reliable)
        _ = m.realtimeTxSeen(txId: "a", from: alice, landedAt: at(0), now: at(0))
        _ = m.realtimeTxSeen(txId: "a", from: alice, landedAt: at(1), now: at(1))
        #expect(m.pendingObservations == 1)
        _ = m.deadlineReached(now: at(61))
        _ = m.realtimeTxSeen(txId: "a", from: alice, landedAt: at(70), now: at(70))
        #expect(m.pendingObservations == 0)
        #expect(m.consecutiveMisses == 1)
    }

    @Test("rule 2: a tx is evidence only if push was operational and its sender not muted when it landed, whenever it is seen")
    func eligibleWhenLanded() {
        var m = machine(.reliable, policy: .adaptive)
        let expired = PushConditions(mode: .remotePush, permissionGranted: true, tokenStatus: .expired)
        _ = m.conditionsChanged(expired, now: at(100))
        _ = m.conditionsChanged(operational, now: at(200))
        #expect(m.state == .unknown)
        // Landed while the token was expired, found afterwards: no evidence, however late.
        #expect(m.fetchedTx(txId: "whileExpired", from: alice, blockTime: at(150), now: at(300)).isEmpty)
        #expect(m.realtimeTxSeen(txId: "lateSighting", from: alice, landedAt: at(199), now: at(201)).isEmpty)
        #expect(m.pendingObservations == 0)
        // Landed while operational, before the token broke: still evidence when fetched later.
        #expect(m.fetchedTx(txId: "before", from: alice, blockTime: at(50), now: at(300)) == [.observedMiss(txId: "before", consecutiveMisses: 1, via: .fetch)])
        // Muted at 400, unmuted at 500: what landed in between is no evidence.
        m.contactMuteChanged(alice, muted: true, now: at(400))
        m.contactMuteChanged(alice, muted: false, now: at(500))
        #expect(m.fetchedTx(txId: "whileMuted", from: alice, blockTime: at(450), now: at(600)).isEmpty)
        #expect(m.fetchedTx(txId: "afterUnmute", from: alice, blockTime: at(510), now: at(600)).count == 1)
        #expect(m.pushEligible(from: alice, landedAt: at(350)))
        #expect(!m.pushEligible(from: alice, landedAt: at(420)))
        #expect(!m.pushEligible(from: alice, landedAt: at(-10)))  // before anything was known
    }

    @Test("rule 3: the fall into unreliable says where its misses were seen")
    func unreliableReasonNamesChannels() {
        var m = machine(.reliable, policy: .adaptive)
        _ = m.realtimeTxSeen(txId: "a", from: alice, landedAt: at(0), now: at(1))
        _ = m.deadlineReached(now: at(61))
        _ = m.fetchedTx(txId: "b", from: alice, blockTime: at(2), now: at(100))
        let third = m.fetchedTx(txId: "c", from: alice, blockTime: at(3), now: at(100))
        guard case .stateChanged(_, .unreliable, let reason) = third[1] else { Issue.record("no fall: \(third)"); return }
        #expect(reason == .misses(3, within: .minutes(1), fetched: 2, seenOnRealtime: 1))
    }

    @Test("rule 12: while the app is suspended no grace runs out; on resume, a push that arrived in time is a hit however late it is processed")
    func gracesWaitWhileSuspended() {
        var m = machine(.reliable)
        _ = m.realtimeTxSeen(txId: "a", from: alice, landedAt: at(0), now: at(1))
        _ = m.realtimeTxSeen(txId: "b", from: alice, landedAt: at(2), now: at(3))
        m.appSuspended()
        #expect(m.nextDeadline == nil)
        #expect(m.deadlineReached(now: at(500)).isEmpty)
        // Back at 600 s: the extension's push for a arrived at 30 s; b's never came.
        m.appResumed()
        #expect(m.pushReceived(txId: "a", arrivedAt: at(30), now: at(600)).first == .observedHit(txId: "a", pushOffset: .seconds(29), via: .realtime))
        #expect(m.nextDeadline == at(63))
        #expect(m.deadlineReached(now: at(600)) == [.observedMiss(txId: "b", consecutiveMisses: 1, via: .realtime)])
        #expect(PushReliability().suspended)  // until the first foreground
    }

    @Test("policies: the policy switches live in the machine: naive does not react to unreliable; seed takes no fetch evidence, adaptive does")
    func policySwitches() {
        var naive = machine(.reliable, policy: .naive)
        for (i, id) in ["a", "b", "c"].enumerated() { _ = naive.realtimeTxSeen(txId: id, from: alice, landedAt: at(Int64(i)), now: at(Int64(i))) }
        let fall = naive.deadlineReached(now: at(70))
        #expect(fall.stateChanges == [.unreliable])
        #expect(!fall.contains(.startForcedCatchUp) && !fall.contains(.reregisterToken))
        #expect(naive.lastReregisterAt == nil)
        var seed = machine(.reliable, policy: .seed)
        #expect(seed.fetchedTx(txId: "x", from: alice, blockTime: at(0), now: at(300)).isEmpty)
        var adaptive = machine(.reliable, policy: .adaptive)
        #expect(adaptive.fetchedTx(txId: "x", from: alice, blockTime: at(0), now: at(300)) == [.observedMiss(txId: "x", consecutiveMisses: 1, via: .fetch)])
    }
}
