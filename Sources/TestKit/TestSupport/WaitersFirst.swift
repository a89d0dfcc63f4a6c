import Foundation

#if os(Linux)
import Glibc
#endif

/// The tests that wait on the wall clock go first for the CPU.
///
/// A `swift test` run holds two kinds of work. The pure tests are CPU-bound: they run on
/// Swift's cooperative pool, a thread per core. The suites that drive real processes (tmux
/// and the built binary, a server, the crash harness) run each test on a thread of its own
/// (`OwnThread`) and mostly wait, and how long they wait is how fast their children (the
/// `synchat` in a tmux pane) draw. On a machine of few cores, at equal priority, the pure
/// tests take most of the CPU those children need, and the process suites, the run's longest
/// chain, go several times slower than alone (docs/testing.md, "Suites that drive real
/// processes").
///
/// So the cooperative pool's threads are made nicer (`poolNice`, 10: the kernel then gives a
/// thread of nice 0 about nine times their share). The pure tests take the CPU the waiting
/// suites leave, and the children those suites start — spawned from their own threads, which are
/// never made nicer — are not slowed by them. Raising a thread's nice needs no
/// privilege; nothing ever lowers it.
///
/// Linux only: a thread's nice is its own there (`setpriority` with a thread id), and
/// libdispatch names its worker threads after their root queue — the cooperative pool's end
/// in `default-qos` — while the waiting threads are `synchat-wait` (`WaitThreads`). Where the
/// names are not found nothing changes: the run is as before, only slower.
public enum WaitersFirst {
    /// The nice given to the cooperative pool's threads.
    public static let poolNice: Int32 = 10

    /// Makes every cooperative-pool thread of this process nicer, once per thread: called as
    /// each process suite's test starts, so that a thread the pool made since is found too.
    public static func lowerThePool() {
        #if os(Linux)
        guard ProcessInfo.processInfo.environment["SYNCHAT_TESTS_EVEN"] == nil else { return }
        // The maker of the waiting threads first, whoever calls this first (a pure test may):
        // made by a pool thread already lowered, it and every waiting thread would inherit
        // nice 10.
        _ = WaitThreads.shared
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return }
        for task in tasks {
            guard let tid = id_t(task),
                  let name = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
            else { continue }
            guard isPoolThread(name.trimmingCharacters(in: .whitespacesAndNewlines)) else { continue }
            errno = 0
            let now = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), tid)
            if errno == 0, now < poolNice {
                _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), tid, poolNice)
            }
        }
        #endif
    }

    /// A worker of the cooperative pool (or of dispatch's concurrent default queue), by the
    /// name libdispatch gives it: never an `overcommit` thread, the main thread or NIO's.
    static func isPoolThread(_ name: String) -> Bool {
        name.hasSuffix("default-qos")
    }
}
