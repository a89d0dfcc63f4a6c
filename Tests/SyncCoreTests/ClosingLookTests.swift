import Testing
@testable import SyncCore

/// Improvement (h) (docs/spec.md#policies): the closing look of a foreground realtime outage
/// that push was trusted to cover, as a machine: when it is due, what it counts over, and what
/// drops or delays it.
@Suite("Adaptive (h): the closing look")
struct ClosingLookTests {
    func window(_ a: Int64, _ b: Int64) -> ClosingLook.Window { .init(after: at(a), through: at(b)) }

    @Test("(h): owed at the skipped reconnect, due once push is overdue (120 s), asked once, with the gap's window")
    func dueOnce() {
        var c = ClosingLook()
        c.gapLeftToPush(window(0, 60), now: at(60))
        #expect(c.nextDeadline == at(180))
        #expect(c.deadlineReached(now: at(179), canLook: true) == nil)  // spurious
        #expect(c.deadlineReached(now: at(180), canLook: true) == window(0, 60))
        #expect(c.nextDeadline == nil && c.asking == window(0, 60))
        c.answered()
        #expect(c.asking == nil && c.nextDeadline == nil)
    }

    @Test("(h): a second reconnect before the look moves it and joins the gaps: one look, one request, for a flaky minute")
    func gapsMerge() {
        var c = ClosingLook()
        c.gapLeftToPush(window(0, 60), now: at(60))
        c.gapLeftToPush(window(70, 90), now: at(90))
        #expect(c.nextDeadline == at(210))
        #expect(c.deadlineReached(now: at(210), canLook: true) == window(0, 90))
    }

    @Test("(h): a catch-up that starts once the gap has ended covers it and drops the look; one that started before does not")
    func coveredByCatchUp() {
        var c = ClosingLook()
        c.gapLeftToPush(window(0, 60), now: at(60))
        let early = c.catchUpStarted(at: at(59))
        #expect(!early)
        #expect(c.nextDeadline == at(180))
        let covering = c.catchUpStarted(at: at(100))
        #expect(covering)
        #expect(c.nextDeadline == nil && c.window == nil)
        #expect(c.deadlineReached(now: at(180), canLook: true) == nil)
    }

    @Test("(h): busy (a sync or a tip out) asks again 10 s later; no answer backs off 30 s, 60 s, 2 min, 5 min, 5 min, the gap kept")
    func busyAndFailed() {
        var c = ClosingLook()
        c.gapLeftToPush(window(0, 60), now: at(60))
        #expect(c.deadlineReached(now: at(180), canLook: false) == nil)
        #expect(c.nextDeadline == at(190))
        var t: Int64 = 190
        for wait: Int64 in [30, 60, 120, 300, 300] {
            #expect(c.deadlineReached(now: at(t), canLook: true) == window(0, 60))
            c.failed(now: at(t))
            #expect(c.nextDeadline == at(t + wait))
            t += wait
        }
        #expect(c.deadlineReached(now: at(t), canLook: true) == window(0, 60))
        c.answered()
        c.gapLeftToPush(window(2000, 2060), now: at(2060))
        _ = c.deadlineReached(now: at(2180), canLook: true)
        c.failed(now: at(2180))
        #expect(c.nextDeadline == at(2210))  // an answer reset the backoff
    }

    @Test("(h): suspended in the background, the look waits, its gap kept (one out is asked again); back in the foreground it is due 120 s later")
    func background() {
        var c = ClosingLook()
        c.gapLeftToPush(window(0, 60), now: at(60))
        _ = c.deadlineReached(now: at(180), canLook: true)
        c.enteredBackground()
        #expect(c.nextDeadline == nil && c.asking == nil && c.window == window(0, 60))
        c.enteredForeground(now: at(1000))
        #expect(c.nextDeadline == at(1120))
        var idle = ClosingLook()
        idle.enteredForeground(now: at(1000))
        #expect(idle.nextDeadline == nil)  // nothing owed, nothing due
    }
}
