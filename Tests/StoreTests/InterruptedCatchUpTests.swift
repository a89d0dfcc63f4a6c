import Foundation
import Testing
import ChatStore
import Simulation
import SyncCore
import SyncEngine
import TestSupport

/// A catch-up that the app quits in the middle of is owed at the next launch
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
        // Owed at the relaunch, run again as a forced full one with no skip, and completed: the
        // debt is paid, a launch after it owes nothing.
        expectDecisions(log, matching: about(.catchUp), [
            "00:05:00.050 catch-up owed: a full catch-up (forced) did not complete before the app quit; the next trigger runs it, not debounced",
            "00:05:00.400 catch-up started (subscription-restart): full sync of 9 objects, forced",
            "00:05:00.400 catch-up joined (app-active): rides on the running full subscription-restart sync",
            "00:05:03.700 catch-up finished (subscription-restart): full, 0 new, 9 requests, 3.3s",
        ])
    }

    @Test("quit after the catch-up completed: nothing is owed, and the relaunch's trigger is debounced (rule 6)")
    func quitAfterCatchUp() throws {
        let (log, _, _) = try quitAndRelaunch(quitAt: .zero + .minutes(5) + .seconds(10))
        expectDecisions(log, matching: about(.catchUp), [
            "00:05:10.589 catch-up skipped (subscription-restart): push reliable, last catch-up 10.2s ago, next allowed in 9m49s",
            "00:05:10.589 catch-up skipped (app-active): push reliable, last catch-up 10.2s ago, next allowed in 9m49s",
        ])
    }
}
