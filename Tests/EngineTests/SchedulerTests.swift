import SyncCore
import SyncEngine
import Testing

@Suite("The scheduler (virtual time)")
struct SchedulerTests {
    @Test("runs entries in time order, ties in insertion order, and jumps the clock to each")
    func ordering() {
        let s = Scheduler()
        var seen: [String] = []
        s.schedule(at: Instant(milliseconds: 30), "c") { seen.append("c@\(s.now.milliseconds)") }
        s.schedule(at: Instant(milliseconds: 10), "a") { seen.append("a@\(s.now.milliseconds)") }
        s.schedule(at: Instant(milliseconds: 10), "b") {
            seen.append("b@\(s.now.milliseconds)")
            s.schedule(after: .milliseconds(5), "nested") { seen.append("n@\(s.now.milliseconds)") }
        }
        s.run(until: Instant(milliseconds: 100))
        #expect(seen == ["a@10", "b@10", "n@15", "c@30"])
        #expect(s.now == Instant(milliseconds: 100))
    }

    @Test("a cancelled entry never runs; run(until:) leaves later entries queued")
    func cancelAndHorizon() {
        let s = Scheduler()
        var ran = 0
        let token = s.schedule(at: Instant(milliseconds: 5), "x") { ran += 100 }
        s.schedule(at: Instant(milliseconds: 50), "y") { ran += 1 }
        s.cancel(token)
        s.run(until: Instant(milliseconds: 20))
        #expect(ran == 0)
        #expect(s.nextEventTime == Instant(milliseconds: 50))
        #expect(s.runNext())
        #expect(ran == 1)
        #expect(!s.runNext())
    }

    @Test("an entry scheduled in the past runs at now, not before")
    func neverBackwards() {
        let s = Scheduler(start: Instant(milliseconds: 1000))
        var at: Instant?
        s.schedule(at: Instant(milliseconds: 1), "late") { at = s.now }
        s.runNext()
        #expect(at == Instant(milliseconds: 1000))
    }

    @Test("a timer that re-arms itself at one instant stops the run, naming its entry, instead of hanging (a fuzzer finding)")
    func runawayStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let s = Scheduler(runawayLimit: 1_000)
            func again() { s.schedule(after: .zero, "re-arming timer") { again() } }
            again()
            s.run(until: Instant(milliseconds: 1))
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("more than 1000 entries at 00:00:00.000, the last \"re-arming timer\""))
    }

    @Test("many entries at one instant that end are not a loop")
    func manyAtOneInstant() {
        let s = Scheduler(runawayLimit: 1_000)
        var ran = 0
        for _ in 0..<1_000 { s.schedule(at: Instant(milliseconds: 5), "burst") { ran += 1 } }
        s.run(until: Instant(milliseconds: 10))
        #expect(ran == 1_000)
    }
}
