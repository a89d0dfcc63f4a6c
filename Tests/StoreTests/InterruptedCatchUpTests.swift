import Foundation
import Testing
import ChatStore
import Simulation
import SyncCore
import SyncEngine
import TestSupport

/// Issue 27 #1: a catch-up that the app quits in the middle of is owed at the next launch
/// (rule 14), through the real store: the last catch-up's time is the last one that
/// *completed*, and the interrupted one runs again, not debounced.
@Suite("A catch-up interrupted by quitting stays owed")
struct InterruptedCatchUpTests {
    static let scenario = "seed 9\nduration 100h\ncontacts 3\ntraffic 60/h\nsettle 0s\nat 5m sync\n"

    /// Runs to `quitAt` (the manual sync of 5m has started and not answered before 5m+50ms),
    /// quits there, and relaunches the profile. Returns the relaunched run's log and the
    /// time the first run's last catch-up completed.
    func quitAndRelaunch(quitAt: Instant) throws -> (log: [TimedEvent], lastCompleted: Instant?, firstLog: [TimedEvent]) {
        let dir = try TemporaryDirectory("interrupted")
        defer { dir.remove() }
        let path = dir.file("p.sqlite")
        let scenario = try ScenarioParser.parse(Self.scenario, file: "interrupted")
        var lastCompleted: Instant?
        var firstLog: [TimedEvent] = []
        do {
            let s = try SQLiteChatStorage.open(path: path)
            let run = ScenarioRun(scenario: scenario, storage: s, persistence: s)
            run.advance(to: quitAt)
            run.checkpoint()
            #expect(run.driver.reliability.state == .reliable)  // so a trigger now would be debounced
            lastCompleted = run.driver.gate.lastFinishedAt
            firstLog = run.log
        }
        let s = try SQLiteChatStorage.open(path: path)
        let run = ScenarioRun(scenario: scenario, storage: s, persistence: s)
        #expect(run.resumed)
        run.advance(to: quitAt + .minutes(1))
        return (run.log, lastCompleted, firstLog)
    }

    @Test("quit while a manual catch-up runs: the relaunch says it is owed and runs it, forced, with no skip")
    func quitDuringCatchUp() throws {
        let (log, lastCompleted, firstLog) = try quitAndRelaunch(quitAt: .zero + .minutes(5) + .milliseconds(50))
        // The first run: the manual sync started at 5m and had not finished at the quit.
        let started = firstLog.last { if case .catchUpStarted = $0.event { true } else { false } }
        #expect(started?.event == .catchUpStarted(trigger: .manual, kind: .full, forced: true, objects: 9))
        #expect(!firstLog.contains { if case .catchUpFinished = $0.event { $0.at >= .zero + .minutes(5) } else { false } })
        // Saved: the time of the last catch-up that completed, before the interrupted one.
        #expect(try #require(lastCompleted) < .zero + .minutes(5))
        #expect(log.contains { $0.event == .catchUpOwed(kind: .full, forced: true) })
        #expect(!log.contains { if case .catchUpSkipped = $0.event { true } else { false } })
        let rerun = try #require(log.first { if case .catchUpStarted = $0.event { true } else { false } })
        guard case .catchUpStarted(_, .full, true, _) = rerun.event else {
            Issue.record("the owed catch-up did not run again as a forced full one: \(rerun.line)")
            return
        }
        // Completed, the debt is paid: a launch after it owes nothing.
        #expect(log.contains { if case .catchUpFinished(_, .full, _, _, 0, _, nil) = $0.event { true } else { false } })
    }

    @Test("quit after the catch-up completed: nothing is owed, and the relaunch's trigger is debounced (rule 6)")
    func quitAfterCatchUp() throws {
        let (log, _, _) = try quitAndRelaunch(quitAt: .zero + .minutes(5) + .seconds(10))
        #expect(!log.contains { if case .catchUpOwed = $0.event { true } else { false } })
        #expect(log.contains { if case .catchUpSkipped = $0.event { true } else { false } })
    }
}
