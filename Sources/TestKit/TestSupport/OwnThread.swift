import Foundation
import Testing
#if os(Linux)
import Glibc
#endif

/// Tests that wait on the wall clock — a real binary in tmux, a server on a socket — block
/// their thread while they wait (`usleep`, `waitpid`). Swift's cooperative pool has one thread
/// per core, so two such tests at once stall every other test of the run (measured: 60 tests
/// of the engine, pure and quick, each "took" 71 s, waiting behind two). A suite marked
/// `.ownThread` (and every `.timingSensitive` one) runs each test case on a thread of its own,
/// off the pool, so a test that waits costs its own time and nobody else's.
public struct OwnThreadTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    /// The suite's scope too, not only its test cases' (a recursive trait's default): see
    /// `provideScope`.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? { self }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        // A test's scope around its cases is not a body: each case moves. A suite's steps
        // between its tests move too, so that none of them queues behind the pool's work.
        guard testCase != nil || test.isSuite else { return try await function() }
        try await OwnThread.run(function)
    }
}

extension Trait where Self == OwnThreadTrait {
    /// Each test case of the suite on a thread of its own (it blocks while it waits on the wall clock).
    public static var ownThread: Self { OwnThreadTrait() }
}

enum OwnThread {
    /// Runs `body` with a task executor of its own, so that whatever it does synchronously
    /// runs there (a test function's body is synchronous code called from this task). The
    /// cooperative pool is made nicer first (`WaitersFirst`), never the waiting thread.
    static func run(_ body: @Sendable () async throws -> Void) async throws {
        let executor = BlockingExecutor()
        defer { executor.finish() }
        WaitersFirst.lowerThePool()
        try await withTaskExecutorPreference(executor) { try await body() }
    }
}

/// A task executor on a thread of its own, which a job that blocks holds, never one of the
/// cooperative pool's. The thread is made by `WaitThreads`, so that it is never made nicer,
/// whatever `WaitersFirst` did to the pool since (a Linux thread takes its nice from the
/// thread that makes it). It ends once the test is over and no job is left; a
/// job that comes later (a task the test left behind) gets a thread again.
final class BlockingExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()  // guards the three below
    private var jobs: [UnownedJob] = []
    private var serving = false
    private var finished = false

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        let start = !serving
        serving = true
        condition.signal()
        condition.unlock()
        if start { WaitThreads.shared.start { [self] in serve() } }
    }

    /// The test is over: the thread ends once its jobs are done.
    func finish() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }

    private func serve() {
        let executor = asUnownedTaskExecutor()
        while true {
            condition.lock()
            while jobs.isEmpty && !finished { condition.wait() }
            if jobs.isEmpty {
                serving = false
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: executor)
        }
    }
}

/// Makes the threads that waiting tests run on, from a thread of its own that nothing makes
/// nicer: its first use comes before `WaitersFirst` lowers any thread.
public final class WaitThreads: @unchecked Sendable {
    static let shared = WaitThreads()

    private let condition = NSCondition()  // guards `requests`
    private var requests: [@Sendable () -> Void] = []

    private init() {
        // Named before anyone may look: a new thread carries its maker's name (a pool
        // thread's) until it names itself, and `WaitersFirst` lowers threads by name.
        let named = DispatchSemaphore(value: 0)
        let maker = Thread { [self] in
            Self.name("synchat-maker")
            Self.atMainNice()
            named.signal()
            make()
        }
        maker.start()
        named.wait()
    }

    /// Runs `body` on a new thread named `synchat-wait`.
    func start(_ body: @escaping @Sendable () -> Void) {
        condition.lock()
        requests.append(body)
        condition.signal()
        condition.unlock()
    }

    private func make() {
        while true {
            condition.lock()
            while requests.isEmpty { condition.wait() }
            let body = requests.removeFirst()
            condition.unlock()
            let thread = Thread {
                Self.name("synchat-wait")
                Self.atMainNice()
                body()
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    /// Gives the calling thread the main thread's nice. A Linux thread takes its maker's, and
    /// the thread that first asks for `shared` is the pool's, at whatever nice libdispatch
    /// gave the priority of the job it was running, or that `WaitersFirst` gave it. Lowering
    /// a nice needs the privilege to (CAP_SYS_NICE, or root, as CI runs); without it the
    /// thread keeps what it has.
    public static func atMainNice() {
        #if os(Linux)
        errno = 0
        let main = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(getpid()))
        guard errno == 0 else { return }
        let me: id_t = 0  // on Linux, the calling thread (its nice is its own)
        errno = 0
        let mine = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), me)
        if errno == 0, mine != main { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), me, main) }
        #endif
    }

    /// Names the calling thread as the system sees it (`/proc/self/task/*/comm`): a new thread
    /// otherwise keeps its maker's name, which `WaitersFirst` reads.
    private static func name(_ name: String) {
        Thread.current.name = name  // Foundation names the system's thread when it is the current one
    }
}
