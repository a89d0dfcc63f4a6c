import ChatStore
import Foundation
import SimulatedWorldInProfile
import Simulation
import Spawn
import SyncCore

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

    /// `binary`: a program that runs `childMain` when given `crash-child --store S --seed N`
    /// (`synchat-bench`, so that the product's command line has no hidden writer in it).
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
            let written = writeMark()
            guard let pid = try? ChildProcess.start([binary, "crash-child", "--store", store, "--seed", String(seed)]) else {
                report.failures.append("kill \(i + 1): cannot start \(binary)")
                break
            }
            // The lifetime counts from the child's fifth write, not from its start: under load
            // a child can take most of a second to start and to get past opening its store, and
            // kills before it writes messages test nothing.
            waitForWrites(Self.writesBeforeTheClock, since: written, pid: pid)
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

    /// The store's files as they are now (size and modification time of the database and its
    /// write-ahead log): a child's write changes it.
    private func writeMark() -> [String] {
        [store, store + "-wal"].map { path in
            var st = stat()
            guard stat(path, &st) == 0 else { return "\(path): none" }
            return "\(st.st_size) \(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)"
        }
    }

    /// The child's writes (changes of the store's files, each a commit or more) before its
    /// lifetime starts counting.
    static let writesBeforeTheClock = 5

    /// Waits until the store's files have changed `count` times from `since` (the child
    /// wrote), the child ends, or 20 s pass.
    private func waitForWrites(_ count: Int, since: [String], pid: pid_t) {
        let deadline = Date().addingTimeInterval(20)
        var last = since, seen = 0
        while seen < count, Date() < deadline, kill(pid, 0) == 0 {
            let now = writeMark()
            if now != last { seen += 1; last = now } else { usleep(2_000) }
        }
    }
}

extension CrashHarness {
    /// The child: the engine and its world under heavy traffic, writing to a profile store as
    /// fast as it can, until it is killed. Each start resumes the profile, as a relaunched
    /// app does. `arguments`: `--store PATH [--seed N]`.
    public static func childMain(_ arguments: [String]) -> Never {
        var store: String?
        var seed: UInt64 = 1
        var i = 0
        while i + 1 < arguments.count {
            switch arguments[i] {
            case "--store": store = arguments[i + 1]
            case "--seed": seed = UInt64(arguments[i + 1]) ?? 1
            default: break
            }
            i += 2
        }
        guard let store, let db = try? SQLiteChatStorage.open(path: store) else {
            FileHandle.standardError.write(Data("crash-child: --store PATH is needed, and must open\n".utf8))
            exit(2)
        }
        var script = Scenario(source: "crash-child")
        script.seed = seed
        script.duration = .hours(100_000)
        script.contacts = 12
        script.trafficPerHour = 3_600
        script.settle = .zero
        // Every channel at work: background and foreground, pushes lost and late, syncs.
        script.steps = (0..<400).flatMap { i -> [Scenario.Step] in
            let t = Instant.zero + .minutes(Int64(i) * 6)
            return [
                .init(at: t, directive: .fault(.pushDrop(percent: Double(i % 3) * 40)), line: 0),
                .init(at: t + .minutes(2), directive: .background, line: 0),
                .init(at: t + .minutes(4), directive: .foreground, line: 0),
                .init(at: t + .minutes(5), directive: .sync, line: 0),
            ]
        }
        let run = ScenarioRun(scenario: script, seed: seed, storage: db, persistence: db)
        while true {
            run.advance(to: run.scheduler.now + .seconds(30))
            run.checkpoint()
        }
    }
}
