import Simulation
import SyncCore
import SyncEngine
import Testing

/// TestSupport's `expectEvent` must fail when the event is absent, and say what happened instead.
@Suite("Event-log expectations (TestSupport)")
struct EventExpectationTests {
    func sample() throws -> ScenarioRun {
        try simulate("duration 10m\nat 2m background\nat 3m foreground\n", until: .minutes(5))
    }

    @Test("an event that is there passes and is returned")
    func found() throws {
        let run = try sample()
        let event = expectEvent(run, at: t(3), containing: "lifecycle foreground")
        #expect(event?.at == t(3))
        expectNoEvent(run, at: t(1), within: .seconds(30), containing: "lifecycle")
    }

    @Test("an absent event fails, with the log around the expected time in the message")
    func absent() throws {
        let run = try sample()
        withKnownIssue {
            expectEvent(run, at: t(3), containing: "catch-up started (manual)")
        } matching: { issue in
            let text = issue.comments.map(\.rawValue).joined()
            return text.contains("no such event at 00:03:00.000") && text.contains("the log from 00:02:30.000 to 00:03:30.000:")
                && text.contains("00:03:00.000 lifecycle foreground") && !text.contains("00:01:")
        }
        withKnownIssue {  // there, but not at that time
            expectEvent(run, at: t(4), matching: { $0 == .world("foreground") })
        }
    }

    @Test("the exact decisions pass; one extra, one missing or two swapped fail, with the difference and the actual lines")
    func exactDecisions() throws {
        let run = try sample()
        let lines = [
            "00:03:00.000 world: foreground",
            "00:03:00.000 lifecycle foreground: after 1m in background",
        ]
        let both = about(.world, .lifecycle)
        expectDecisions(run, from: t(3), through: t(3), matching: both, lines)
        withKnownIssue {
            expectDecisions(run, from: t(3), through: t(3), matching: both, Array(lines.prefix(1)))
        } matching: { issue in
            let text = issue.comments.map(\.rawValue).joined()
            return text.contains("the decisions from 00:03:00.000 through 00:03:00.000 differ")
                && text.contains("+   [1]: \"00:03:00.000 lifecycle foreground: after 1m in background\"")
                && text.contains("actual:\n[\n    \"00:03:00.000 world: foreground\",")
        }
        withKnownIssue {
            expectDecisions(run, from: t(3), through: t(3), matching: both, lines + ["00:03:00.000 catch-up started (manual)"])
        }
        withKnownIssue {
            expectDecisions(run, from: t(3), through: t(3), matching: both, lines.reversed())
        }
        // The sans-IO form: events without a time, their lines.
        expectDecisions([.world("foreground"), .status(EngineStatus())], ["world: foreground"])  // a view's event is no decision
        withKnownIssue {
            expectDecisions([.world("foreground"), .world("background")], ["world: foreground"])
        }
    }

    @Test("an event that should not be there fails, listing it")
    func unexpected() throws {
        let run = try sample()
        withKnownIssue {
            expectNoEvent(run, containing: "lifecycle foreground")
        } matching: { issue in
            issue.comments.map(\.rawValue).joined().contains("2 unexpected events in the log")
        }
    }
}
