import Testing
@testable import SyncCore

/// Improvement (e) (docs/spec.md#policies): while realtime is not live in the foreground and push is not
/// unreliable, the indexer's tip every 60 s — (e) alone, as adaptive without (g)'s pace has it.
@Suite("Adaptive (e): verify push when realtime cannot")
struct PushVerifierTests {
    func verifier() -> PushVerifier { PushVerifier(policy: SyncPolicy.adaptive.without("g")) }

    @Test("(e): the first check is 60 s after realtime stopped being live, then every 60 s; started once")
    func checksEveryMinute() {
        var v = verifier()
        #expect(v.conditionsChanged(foreground: true, notLiveSince: at(10), pushState: .reliable, polling: false, now: at(10)).isEmpty)
        #expect(v.nextDeadline == at(70))
        #expect(v.deadlineReached(now: at(69)).isEmpty)  // spurious
        let first = v.deadlineReached(now: at(70))
        #expect(first.count == 2 && first.last == .check)
        guard case .started = first.first else { Issue.record("not started: \(first)"); return }
        #expect(v.nextDeadline == at(130))
        #expect(v.deadlineReached(now: at(130)) == [.check])
        // Conditions re-evaluated with nothing changed: the rhythm stays.
        #expect(v.conditionsChanged(foreground: true, notLiveSince: at(10), pushState: .unknown, polling: false, now: at(150)).isEmpty)
        #expect(v.nextDeadline == at(190))
    }

    @Test("(e): a realtime back before 60 s costs nothing; live again, background or unreliable push stops the checks")
    func stops() {
        var v = verifier()
        _ = v.conditionsChanged(foreground: true, notLiveSince: at(0), pushState: .reliable, polling: false, now: at(0))
        #expect(v.conditionsChanged(foreground: true, notLiveSince: nil, pushState: .reliable, polling: false, now: at(30)).isEmpty)
        #expect(v.nextDeadline == nil)
        for (foreground, since, state, polling, why) in [
            (true, nil as Instant?, PushState.reliable, false, PushVerifier.StopReason.realtimeLive),
            (false, at(0), .reliable, false, PushVerifier.StopReason.notInForeground),
            (true, at(0), .unreliable, false, PushVerifier.StopReason.pushUnreliablePollingTakesOver),
            (true, at(0), .disabled, true, PushVerifier.StopReason.pollingCoversIt),
        ] {
            var v = verifier()
            _ = v.conditionsChanged(foreground: true, notLiveSince: at(0), pushState: .reliable, polling: false, now: at(0))
            _ = v.deadlineReached(now: at(60))
            #expect(v.active)
            #expect(v.conditionsChanged(foreground: foreground, notLiveSince: since, pushState: state, polling: polling, now: at(90)) == [.stopped(reason: why)])
            #expect(v.nextDeadline == nil && !v.active)
            #expect(v.deadlineReached(now: at(200)).isEmpty)
        }
    }

    @Test("(e) is adaptive's: seed keeps its blind spot, and so does adaptive without (e)")
    func onlyAdaptive() {
        for policy in [SyncPolicy.seed, .naive, SyncPolicy.adaptive.without("e")] {
            var v = PushVerifier(policy: policy)
            #expect(v.conditionsChanged(foreground: true, notLiveSince: at(0), pushState: .reliable, polling: false, now: at(0)).isEmpty)
            #expect(v.nextDeadline == nil)
            #expect(v.deadlineReached(now: at(600)).isEmpty)
        }
    }

    @Test("rule 13 with (e): polls in remote-push while push is unreliable; seed does not")
    func pollsWhenPushUnreliable() {
        var adaptive = FallbackPoller(policy: SyncPolicy.adaptive.without("g"))
        #expect(adaptive.conditionsChanged(lifecycle: .foreground, realtimeAvailable: false, mode: .remotePush, syncRunning: false,
                                           pushUnreliable: false, now: at(0)).isEmpty)
        let started = adaptive.conditionsChanged(lifecycle: .foreground, realtimeAvailable: false, mode: .remotePush, syncRunning: false,
                                                 pushUnreliable: true, now: at(5))
        #expect(started.count == 1)
        #expect(adaptive.deadlineReached(now: at(5), syncRunning: false) == [.poll])
        #expect(adaptive.conditionsChanged(lifecycle: .foreground, realtimeAvailable: false, mode: .remotePush, syncRunning: false,
                                           pushUnreliable: false, now: at(9)) == [.stopped(reason: .pushNoLongerUnreliable)])
        var seed = FallbackPoller(policy: .seed)
        #expect(seed.conditionsChanged(lifecycle: .foreground, realtimeAvailable: false, mode: .remotePush, syncRunning: false,
                                       pushUnreliable: true, now: at(5)).isEmpty)
    }
}
