import ChatStore
import Foundation

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
            guard let pid = spawn([binary, "crash-child", "--store", store, "--seed", String(seed)]) else {
                report.failures.append("kill \(i + 1): cannot start \(binary)")
                break
            }
            usleep(useconds_t(Int.random(in: lifetime, using: &generator) * 1000))
            kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
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

    /// posix_spawn with output discarded (Foundation's Process is avoided on purpose: it can
    /// miss a child's exit inside the test runner).
    func spawn(_ argv: [String]) -> pid_t? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var cargs = argv.map { strdup($0) } + [nil]
        defer { for a in cargs { free(a) } }
        var pid: pid_t = 0
        return posix_spawn(&pid, argv[0], &actions, nil, &cargs, environ) == 0 ? pid : nil
    }
}
