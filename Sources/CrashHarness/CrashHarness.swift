import ChatStore
import Foundation
import Spawn

/// Kills a writer with SIGKILL at random moments and checks the store after each kill:
/// `PRAGMA integrity_check` is ok, every message stored before is still there, no txId is
/// stored twice, and no cursor is ahead of the messages it covers.
public struct CrashHarness {
    public struct Report: Sendable {
        public var kills = 0
        public var messages = 0
        public var failures: [String] = []
        public var seconds = 0.0
    }

    public var binary: String
    public var store: String
    /// Each child lives this long (uniformly, milliseconds) before the kill.
    public var lifetime: ClosedRange<Int> = 150...700
    public var seed: UInt64 = 1

    public init(binary: String, store: String) {
        self.binary = binary
        self.store = store
    }

    public func run(kills: Int, progress: ((Int, Int) -> Void)? = nil) -> Report {
        var report = Report()
        var generator = SystemRandomNumberGenerator()
        var known: Set<String> = []
        let started = Date()
        for i in 0..<kills {
            guard let pid = try? ChildProcess.start([binary, "crash-child", "--store", store, "--seed", String(seed)]) else {
                report.failures.append("kill \(i + 1): cannot start \(binary)")
                break
            }
            usleep(useconds_t(Int.random(in: lifetime, using: &generator) * 1000))
            kill(pid, SIGKILL)
            ChildProcess.wait(pid)
            report.kills += 1
            do {
                let s = try SQLiteChatStorage.open(path: store)
                let snap = try s.snapshot()
                if snap.integrity != "ok" { report.failures.append("kill \(i + 1): integrity_check: \(snap.integrity)") }
                if snap.duplicateTxIds != 0 { report.failures.append("kill \(i + 1): \(snap.duplicateTxIds) duplicate txIds") }
                let lost = known.subtracting(snap.txIds)
                if !lost.isEmpty { report.failures.append("kill \(i + 1): \(lost.count) stored messages gone") }
                for c in snap.cursorsAhead { report.failures.append("kill \(i + 1): cursor ahead: \(c)") }
                known = snap.txIds
                report.messages = snap.txIds.count
            } catch {
                report.failures.append("kill \(i + 1): cannot reopen: \(error)")
            }
            progress?(i + 1, report.messages)
        }
        report.seconds = Date().timeIntervalSince(started)
        return report
    }
}
