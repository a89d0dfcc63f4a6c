import Testing
@testable import SyncCore

@Suite("Fallback polling (rule 13)")
struct FallbackPollerTests {
    @Test("rule 13: polls in the foreground when realtime is unavailable and the mode is not remote-push")
    func startsUnderConditions() {
        var p = FallbackPoller()
        #expect(p.conditionsChanged(lifecycle: .foreground, realtimeAvailable: false, mode: .remotePush, syncRunning: false, now: at(0)).isEmpty)
        #expect(p.conditionsChanged(lifecycle: .background, realtimeAvailable: false, mode: .off, syncRunning: false, now: at(0)).isEmpty)
        #expect(p.conditionsChanged(lifecycle: .foreground, realtimeAvailable: true, mode: .off, syncRunning: false, now: at(0)).isEmpty)
        let started = p.conditionsChanged(lifecycle: .foreground, realtimeAvailable: false, mode: .off, syncRunning: false, now: at(0))
        #expect(started.count == 1)
        #expect(p.deadlineReached(now: at(0), syncRunning: false) == [.poll])
    }

    @Test("rule 13: the next poll is 60 s after the sync completed, never while one runs")
    func waitsAfterCompletion() {
        var p = FallbackPoller()
        _ = p.conditionsChanged(lifecycle: .foreground, realtimeAvailable: false, mode: .backgroundFetch, syncRunning: false, now: at(0))
        #expect(p.deadlineReached(now: at(0), syncRunning: false) == [.poll])
        p.syncStarted(now: at(0))
        #expect(p.nextDeadline == nil)
        #expect(p.deadlineReached(now: at(100), syncRunning: true).isEmpty)  // still running: no overlap
        #expect(p.syncCompleted(now: at(30)) == [.scheduled(at: at(90))])
        #expect(p.deadlineReached(now: at(89), syncRunning: false).isEmpty)
        #expect(p.deadlineReached(now: at(90), syncRunning: false) == [.poll])
    }

    @Test("rule 13: polling stops when the subscription is back")
    func stopsWhenRealtimeBack() {
        var p = FallbackPoller()
        _ = p.conditionsChanged(lifecycle: .foreground, realtimeAvailable: false, mode: .off, syncRunning: false, now: at(0))
        #expect(p.conditionsChanged(lifecycle: .foreground, realtimeAvailable: true, mode: .off, syncRunning: false, now: at(5)) == [.stopped(reason: .realtimeBack)])
        #expect(p.nextDeadline == nil)
        #expect(p.deadlineReached(now: at(100), syncRunning: false).isEmpty)
    }

    @Test("rule 13: starting right after a sync waits out the 60 s")
    func firstPollRespectsLastSync() {
        var p = FallbackPoller()
        p.syncStarted(now: at(0))
        _ = p.syncCompleted(now: at(10))
        _ = p.conditionsChanged(lifecycle: .foreground, realtimeAvailable: false, mode: .off, syncRunning: false, now: at(20))
        #expect(p.nextDeadline == at(70))
    }
}
