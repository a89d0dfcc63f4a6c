import Foundation
import Synchronization
import Testing
import TestSupport
#if os(Linux)
import Glibc
#endif

/// What the process suites' traits promise (docs/testing.md, "Suites that drive real
/// processes"): a test that waits runs on a thread of its own, at the nice the run started
/// with, and the pool the pure tests run on is made nicer. Linux only: read from /proc.
@Suite("TestSupport: the tests that wait run on threads of their own, first for the CPU", .serialized, .timingSensitive)
struct WaitingThreadsTests {
    @Test("a process suite's test runs on a thread named synchat-wait, never the pool's, and never made nicer than the run's main thread")
    func ownThread() throws {
        #if os(Linux)
        let name = try Self.name(of: "thread-self")
        let mine = try Self.nice(of: "thread-self"), main = try Self.nice(of: "self")
        #expect(name == "synchat-wait")
        // Not equal: libdispatch may start a thread of its own higher (nice -4 as root), and
        // the waiting threads are made by one such thread, or by the pool before any lowering.
        #expect(mine <= main && mine < WaitersFirst.poolNice, "this thread's nice \(mine), the main thread's \(main)")
        #endif
    }

    @Test("a thread made at nice 10 (the pool's, lowered, or a low priority's) that takes the main thread's nice runs at it: what the maker and each waiting thread do as they start (root only: lowering a nice needs the privilege; CI runs as root)",
          .enabled(if: getuid() == 0, "lowering a nice needs root"))
    func atMainNice() throws {
        #if os(Linux)
        let main = try Self.nice(of: "self")
        let seen = Mutex<(before: Int, after: Int)?>(nil)
        let thread = Thread {
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
            let before = (try? Self.nice(of: "thread-self")) ?? -99
            WaitThreads.atMainNice()
            let after = (try? Self.nice(of: "thread-self")) ?? -99
            seen.withLock { $0 = (before, after) }
        }
        thread.start()
        let deadline = Date().addingTimeInterval(10)
        while seen.withLock({ $0 }) == nil, Date() < deadline { usleep(1_000) }
        let result = try #require(seen.withLock { $0 })
        #expect(result.before == 10 && result.after == main, "nice \(result.before) → \(result.after), the main thread's \(main)")
        #endif
    }

    /// The thread's name and nice, from `/proc/<which>/comm` and field 19 of `…/stat`.
    static func name(of which: String) throws -> String {
        try String(contentsOfFile: "/proc/\(which)/comm", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func nice(of which: String) throws -> Int {
        let stat = try String(contentsOfFile: "/proc/\(which)/stat", encoding: .utf8)
        let fields = stat[stat.index(after: stat.lastIndex(of: ")")!)...].split(separator: " ")
        return Int(fields[16])!  // field 19: state is field 3, the first after the name
    }
}

@Suite("TestSupport: the pure tests' pool gives way")
struct PoolGivesWayTests {
    @Test("a pure test runs on the cooperative pool, and once a process suite has started, its thread is nicer (WaitersFirst)")
    func poolNicer() throws {
        #if os(Linux)
        guard ProcessInfo.processInfo.environment["SYNCHAT_TESTS_EVEN"] == nil else { return }
        WaitersFirst.lowerThePool()  // as each process suite's test does as it starts
        #expect(try WaitingThreadsTests.name(of: "thread-self").hasSuffix("default-qos"))
        #expect(try WaitingThreadsTests.nice(of: "thread-self") >= WaitersFirst.poolNice)
        #expect(try WaitingThreadsTests.nice(of: "self") < WaitersFirst.poolNice, "the main thread is not the pool's")
        #endif
    }
}
