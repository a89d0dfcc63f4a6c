import Testing
@testable import SyncCore

@Suite("Catch-up gate (rules 6–8)")
struct CatchUpGateTests {
    func gate(lastFinishedAt: Instant?) -> CatchUpGate {
        CatchUpGate(restoring: .init(lastFinishedAt: lastFinishedAt))
    }

    @Test("rule 6: while reliable, a trigger 5 min after the last catch-up is skipped with the time left")
    func debouncedWhileReliable() {
        var g = gate(lastFinishedAt: at(0))
        let action = g.triggered(.appActive, forced: false, pushState: .reliable, now: at(300), running: nil)
        #expect(action == .skip(trigger: .appActive, lastFinishedAgo: .seconds(300), nextAllowedIn: .seconds(300)))
    }

    @Test("rule 6: while reliable, a trigger 11 min after the last catch-up runs")
    func runsAfterDebounce() {
        var g = gate(lastFinishedAt: at(0))
        #expect(g.triggered(.appActive, forced: false, pushState: .reliable, now: at(660), running: nil) == .start(trigger: .appActive, forced: false, kind: .full))
        #expect(gate(lastFinishedAt: at(0)).debounceRemaining(pushState: .reliable, now: at(600)) == nil)
    }

    @Test("rule 6: forced triggers ignore the debounce")
    func forcedIgnoresDebounce() {
        var g = gate(lastFinishedAt: at(0))
        #expect(g.triggered(.pushUnreliable, forced: true, pushState: .reliable, now: at(10), running: nil) == .start(trigger: .pushUnreliable, forced: true, kind: .full))
    }

    @Test("rule 7: when push is not reliable every trigger runs", arguments: [PushState.unknown, .unreliable, .disabled])
    func everyTriggerRunsWhenNotReliable(state: PushState) {
        var g = gate(lastFinishedAt: at(0))
        #expect(g.triggered(.subscriptionRestart, forced: false, pushState: state, now: at(1), running: nil) == .start(trigger: .subscriptionRestart, forced: false, kind: .full))
        g.finished(kind: .full, succeeded: true, now: at(2))
        #expect(g.triggered(.appActive, forced: false, pushState: state, now: at(3), running: nil) == .start(trigger: .appActive, forced: false, kind: .full))
    }

    @Test("rule 8: a trigger during a running catch-up joins it; a background refresh finds it busy")
    func singleFlight() {
        var g = gate(lastFinishedAt: nil)
        #expect(g.triggered(.subscriptionRestart, forced: false, pushState: .unknown, now: at(0), running: nil) == .start(trigger: .subscriptionRestart, forced: false, kind: .full))
        let running = CatchUpGate.Running(kind: .full, trigger: .subscriptionRestart, startedAt: at(0))
        #expect(g.triggered(.appActive, forced: false, pushState: .unknown, now: at(0), running: running) == .join(trigger: .appActive, running: running))
        #expect(g.triggered(.pushUnreliable, forced: true, pushState: .unreliable, now: at(1), running: running) == .join(trigger: .pushUnreliable, running: running))
        #expect(g.lightSyncRequested(now: at(1), running: running) == .busy(running: running))
        g.finished(kind: .full, succeeded: true, now: at(2))
        #expect(g.lastFinishedAt == at(2))
        #expect(g.triggered(.appActive, forced: false, pushState: .unknown, now: at(3), running: nil) == .start(trigger: .appActive, forced: false, kind: .full))
    }

    @Test("SyncRuns: the one owner of what runs — ids, kinds, joins, what is still out; the oldest is the one running")
    func syncRuns() {
        var runs = SyncRuns()
        #expect(runs.isEmpty && runs.first == nil)
        let a = runs.start(kind: .targeted, trigger: .appActive, forced: false, now: at(0))
        let b = runs.start(kind: .light, trigger: .backgroundRefresh, forced: false, now: at(1))
        #expect(runs.first?.id == a && runs.first?.running == CatchUpGate.Running(kind: .targeted, trigger: .appActive, startedAt: at(0)))
        runs.join(a, trigger: .subscriptionRestart)
        runs.asked(a)
        runs.asked(a)
        runs.writing(a)
        runs.becameFull(a)
        runs.answered(a, failed: true)
        runs.answered(a)
        runs.stored(a, 3)
        #expect(!runs.isDone(a))
        runs.answered(a)
        #expect(runs.isDone(a))
        let done = runs.finish(a)
        #expect(done?.kind == .full && done?.joined == [.subscriptionRestart] && done?.requests == 2 && done?.failed == 1 && done?.stored == 3)
        #expect(runs.first?.id == b && runs.finish(a) == nil)
        _ = runs.finish(b)
        #expect(runs.isEmpty)
    }

    @Test("naive: no debounce and no single flight — every trigger starts its own sync")
    func naiveGate() {
        var g = CatchUpGate(policy: .naive, restoring: .init(lastFinishedAt: at(0)))
        #expect(g.triggered(.appActive, forced: false, pushState: .reliable, now: at(10), running: nil) == .start(trigger: .appActive, forced: false, kind: .full))
        #expect(g.triggered(.subscriptionRestart, forced: false, pushState: .reliable, now: at(11), running: nil) == .start(trigger: .subscriptionRestart, forced: false, kind: .full))
        let running = CatchUpGate.Running(kind: .full, trigger: .appActive, startedAt: at(10))
        #expect(g.triggered(.manual, forced: true, pushState: .reliable, now: at(12), running: running) == .start(trigger: .manual, forced: true, kind: .full))
        #expect(g.lightSyncRequested(now: at(12), running: running) == .start)
    }

    @Test("(c): a trigger skipped in the foreground leaves one trailing catch-up for when the debounce ends")
    func trailing() {
        var g = CatchUpGate(policy: .adaptive, restoring: .init(lastFinishedAt: at(0)))
        _ = g.triggered(.appActive, forced: false, pushState: .reliable, now: at(300), running: nil)
        #expect(g.nextDeadline == at(600))
        #expect(g.deadlineReached(now: at(599)) == [])
        #expect(g.deadlineReached(now: at(600)) == [.trailing])
        #expect(g.nextDeadline == nil)
        _ = g.triggered(.appActive, forced: false, pushState: .reliable, now: at(300), running: nil, foreground: false)
        #expect(g.nextDeadline == nil)  // only in the foreground
        var seed = CatchUpGate(policy: .seed, restoring: .init(lastFinishedAt: at(0)))
        _ = seed.triggered(.appActive, forced: false, pushState: .reliable, now: at(300), running: nil)
        #expect(seed.nextDeadline == nil)  // seed has no trailing catch-up
    }

    @Test("a failed or light sync does not restart the debounce")
    func onlyCompleteFullSyncsCount() {
        var g = gate(lastFinishedAt: at(0))
        _ = g.triggered(.manual, forced: true, pushState: .reliable, now: at(700), running: nil)
        g.finished(kind: .full, succeeded: false, now: at(701))
        #expect(g.lastFinishedAt == at(0))
        #expect(g.lightSyncRequested(now: at(800), running: nil) == .start)
        g.finished(kind: .light, succeeded: true, now: at(801))
        #expect(g.lastFinishedAt == at(0))
    }

    @Test("a catch-up that fails in the foreground is retried after 30 s, 60 s, 2 min, then every 5 min, until one succeeds")
    func failedCatchUpRetries() {
        var g = CatchUpGate()
        var now = at(0)
        for delay in [30.0, 60, 120, 300, 300] {
            #expect(g.triggered(.appActive, forced: false, pushState: .unknown, now: now, running: nil) == .start(trigger: .appActive, forced: false, kind: .full))
            g.finished(kind: .full, succeeded: false, now: now)
            #expect(g.nextDeadline == now + .fractionalSeconds(delay))
            #expect(g.deadlineReached(now: now + .fractionalSeconds(delay - 1)) == [])
            now = now + .fractionalSeconds(delay)
            #expect(g.deadlineReached(now: now) == [.retry])
        }
        _ = g.triggered(.retry, forced: false, pushState: .unknown, now: now, running: nil)
        g.finished(kind: .full, succeeded: true, now: now)
        #expect(g.nextDeadline == nil)
        _ = g.triggered(.appActive, forced: false, pushState: .unknown, now: now + .minutes(20), running: nil)
        g.finished(kind: .full, succeeded: false, now: now + .minutes(20))
        #expect(g.nextDeadline == now + .minutes(20) + .seconds(30))  // the backoff starts over
    }

    @Test("no retry for a failure in the background or of a light sync; backgrounding drops a pending retry")
    func noRetryInBackground() {
        var g = CatchUpGate()
        _ = g.triggered(.appActive, forced: false, pushState: .unknown, now: at(0), running: nil)
        g.finished(kind: .full, succeeded: false, now: at(1), foreground: false)
        #expect(g.nextDeadline == nil)
        _ = g.lightSyncRequested(now: at(2), running: nil)
        g.finished(kind: .light, succeeded: false, now: at(3))
        #expect(g.nextDeadline == nil)
        _ = g.triggered(.appActive, forced: false, pushState: .unknown, now: at(4), running: nil)
        g.finished(kind: .full, succeeded: false, now: at(5))
        #expect(g.nextDeadline == at(35))
        g.enteredBackground()
        #expect(g.nextDeadline == nil)
    }

    @Test("a failed catch-up that still got some answers retries after 30 s: the backoff grows only while nothing answers")
    func partialFailureRetriesSoon() {
        var g = CatchUpGate()
        _ = g.triggered(.appActive, forced: false, pushState: .unknown, now: at(0), running: nil)
        g.finished(kind: .full, succeeded: false, now: at(0))
        _ = g.triggered(.retry, forced: false, pushState: .unknown, now: at(30), running: nil)
        g.finished(kind: .full, succeeded: false, now: at(30))
        #expect(g.nextDeadline == at(90))  // nothing answered twice: 60 s
        _ = g.triggered(.retry, forced: false, pushState: .unknown, now: at(90), running: nil)
        g.finished(kind: .full, succeeded: false, now: at(90), progressed: true)
        #expect(g.nextDeadline == at(120))  // some answers: back to 30 s
    }

    @Test("rule 14: a failed forced catch-up is owed: its retry is forced and not debounced, until a complete full one runs")
    func failedForcedCatchUpIsOwed() {
        var g = gate(lastFinishedAt: at(0))
        #expect(g.triggered(.manual, forced: true, pushState: .reliable, now: at(100), running: nil) == .start(trigger: .manual, forced: true, kind: .full))
        g.finished(kind: .full, succeeded: false, now: at(101), forced: true)
        #expect(g.owed == .init(kind: .full, forced: true))
        #expect(g.deadlineReached(now: at(131)) == [.retry])
        // Push is reliable and the last complete catch-up is 131 s old: a debounce would skip it.
        #expect(g.triggered(.retry, forced: false, pushState: .reliable, now: at(131), running: nil) == .start(trigger: .retry, forced: true, kind: .full))
        g.finished(kind: .full, succeeded: false, now: at(132), forced: true)
        #expect(g.nextDeadline == at(192))
        #expect(g.triggered(.retry, forced: false, pushState: .reliable, now: at(192), running: nil) == .start(trigger: .retry, forced: true, kind: .full))
        g.finished(kind: .full, succeeded: true, now: at(193), forced: true)
        #expect(g.owed == nil)
        #expect(g.nextDeadline == nil)
        // Paid: the debounce is back.
        #expect(g.triggered(.appActive, forced: false, pushState: .reliable, now: at(300), running: nil)
                == .skip(trigger: .appActive, lastFinishedAgo: .seconds(107), nextAllowedIn: .seconds(493)))
    }

    @Test("rule 14: a targeted sync does not pay for an owed full one; the debt outlives a background and is paid by the next foreground")
    func owedAcrossKindsAndBackground() {
        var g = gate(lastFinishedAt: at(0))
        _ = g.triggered(.appActive, forced: false, pushState: .unknown, now: at(10), running: nil)
        g.finished(kind: .full, succeeded: false, now: at(11))
        #expect(g.owed == .init(kind: .full, forced: false))
        _ = g.triggered(.trailing, forced: false, pushState: .reliable, now: at(20), running: nil)
        g.finished(kind: .targeted, succeeded: true, now: at(21))
        #expect(g.owed == .init(kind: .full, forced: false))
        #expect(g.nextDeadline == at(41))
        g.enteredBackground()
        #expect(g.nextDeadline == nil)
        #expect(g.owed != nil)
        // The next foreground 2 min later: reliable and debounced, but the debt makes it run.
        #expect(g.triggered(.appActive, forced: false, pushState: .reliable, now: at(140), running: nil) == .start(trigger: .appActive, forced: false, kind: .full))
        g.finished(kind: .full, succeeded: true, now: at(141))
        #expect(g.owed == nil)
        #expect(CatchUpGate(restoring: .init(lastFinishedAt: at(0), owed: .init(kind: .full, forced: true))).persisted(running: []).owed?.forced == true)
    }

    @Test("(b) lives in the gate: a targeted sync only while reliable, foreground, live and a full sync within 6 h; never forced or while a full one is owed")
    func provenGapKind() {
        var g = CatchUpGate(policy: .adaptive)
        func kind(forced: Bool = false, push: PushState = .reliable, fg: Bool = true, live: Bool = true, at t: Int64) -> CatchUpGate.SyncKind {
            g.kindToStart(forced: forced, pushState: push, foreground: fg, realtimeLive: live, now: at(t))
        }
        #expect(kind(at: 0) == .full)  // no full sync yet
        _ = g.triggered(.appActive, forced: false, pushState: .unknown, now: at(0), running: nil)
        g.finished(kind: .full, succeeded: true, now: at(1))
        #expect(g.lastFullSyncAt == at(1))
        #expect(kind(at: 100) == .targeted)
        #expect(kind(forced: true, at: 100) == .full)
        #expect(kind(push: .unknown, at: 100) == .full)
        #expect(kind(fg: false, at: 100) == .full)
        #expect(kind(live: false, at: 100) == .full)
        #expect(kind(at: 6 * 3600 + 1) == .full)  // the last full sync is too old
        #expect(CatchUpGate(policy: .seed).kindToStart(forced: false, pushState: .reliable, foreground: true, realtimeLive: true, now: at(100)) == .full)
    }

    @Test("(g) in the gate: rule 4's forced catch-up, realtime live since the last proof, is a proof from the UTXO set; its retry after a failure (a message not indexed yet) proves again, of the same kind (rule 14), not a full sync; not once realtime stopped, nor under seed")
    func retriedProofStaysTargeted() {
        func failedProof(_ policy: SyncPolicy) -> CatchUpGate {
            var g = CatchUpGate(policy: policy)
            _ = g.triggered(.appActive, forced: false, pushState: .unknown, now: at(0), running: nil)
            g.finished(kind: .full, succeeded: true, now: at(1))
            let start = g.triggered(.pushUnreliable, forced: true, pushState: .unreliable, now: at(600), running: nil,
                                    realtimeLive: true, realtimeSinceProof: true)
            if case .start(_, _, let kind) = start { g.finished(kind: kind, succeeded: false, now: at(601), forced: true, progressed: true) }
            #expect(g.deadlineReached(now: at(631)) == [.retry])
            return g
        }
        var g = failedProof(.adaptive)
        #expect(g.owed == CatchUpGate.Owed(kind: .targeted, forced: true))
        #expect(g.triggered(.retry, forced: false, pushState: .reliable, now: at(631), running: nil, realtimeLive: true, realtimeSinceProof: true)
                == .start(trigger: .retry, forced: true, kind: .targeted))
        var stopped = failedProof(.adaptive)
        #expect(stopped.triggered(.retry, forced: false, pushState: .reliable, now: at(631), running: nil, realtimeLive: false, realtimeSinceProof: false)
                == .start(trigger: .retry, forced: true, kind: .full))
        var seed = failedProof(.seed)
        #expect(seed.triggered(.retry, forced: false, pushState: .reliable, now: at(631), running: nil, realtimeLive: true, realtimeSinceProof: true)
                == .start(trigger: .retry, forced: true, kind: .full))
    }

    @Test("(d) lives in the gate too: tips that name what moved start a targeted sync, never forced, while a full one is owed, without a full sync within 6 h, or under a policy without (d)")
    func tipsProvedKind() {
        var g = CatchUpGate(policy: .adaptive)
        func kind(forced: Bool = false, tips: Bool = true, at t: Int64, _ gate: CatchUpGate? = nil) -> CatchUpGate.SyncKind {
            (gate ?? g).kindToStart(forced: forced, pushState: .disabled, foreground: true, realtimeLive: false, tipsProved: tips, now: at(t))
        }
        #expect(kind(at: 0) == .full)  // no full sync yet
        _ = g.triggered(.appActive, forced: false, pushState: .disabled, now: at(0), running: nil)
        g.finished(kind: .full, succeeded: true, now: at(1))
        #expect(kind(at: 100) == .targeted)
        #expect(kind(tips: false, at: 100) == .full)
        #expect(kind(forced: true, at: 100) == .full)
        #expect(kind(at: 6 * 3600 + 1) == .full)
        _ = g.triggered(.poll, forced: false, pushState: .disabled, now: at(200), running: nil)
        g.finished(kind: .full, succeeded: false, now: at(201))
        #expect(g.owed?.kind == .full)
        #expect(kind(at: 300) == .full)  // only a full one pays a full debt
        var seed = CatchUpGate(policy: .seed)
        _ = seed.triggered(.appActive, forced: false, pushState: .disabled, now: at(0), running: nil)
        seed.finished(kind: .full, succeeded: true, now: at(1))
        #expect(kind(at: 100, seed) == .full)
        // (e) proves with tips too (BlindSpotTests): without both, tips never make a targeted sync.
        var withoutD = CatchUpGate(policy: SyncPolicy.adaptive.without("d").without("e"))
        _ = withoutD.triggered(.appActive, forced: false, pushState: .disabled, now: at(0), running: nil)
        withoutD.finished(kind: .full, succeeded: true, now: at(1))
        #expect(kind(at: 100, withoutD) == .full)
    }

    @Test("a quit owes every catch-up running, not only the first: a naive full sync that overlaps a light one started before it is owed, forced if it was")
    func owedWithOverlap() {
        let g = CatchUpGate(policy: .naive)
        let light = CatchUpGate.Running(kind: .light, trigger: .backgroundRefresh, startedAt: at(0))
        let full = CatchUpGate.Running(kind: .full, trigger: .manual, startedAt: at(1), forced: true)
        let targeted = CatchUpGate.Running(kind: .targeted, trigger: .appActive, startedAt: at(2))
        #expect(g.owedIfInterrupted(running: []) == nil)
        #expect(g.owedIfInterrupted(running: [light]) == nil, "a light sync is not owed")
        #expect(g.owedIfInterrupted(running: [light, full]) == CatchUpGate.Owed(kind: .full, forced: true))
        #expect(g.owedIfInterrupted(running: [targeted]) == CatchUpGate.Owed(kind: .targeted, forced: false))
        #expect(g.owedIfInterrupted(running: [targeted, full]) == CatchUpGate.Owed(kind: .full, forced: true))
    }
}
