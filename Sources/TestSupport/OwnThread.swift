import Dispatch
import Testing

/// Tests that wait on the wall clock — a real binary in tmux, a server on a socket — block
/// their thread while they wait (`usleep`, `waitpid`). Swift's cooperative pool has one thread
/// per core, so two such tests at once stall every other test of the run (measured: 60 tests
/// of the engine, pure and quick, each "took" 71 s, waiting behind two). A suite marked
/// `.ownThread` (and every `.timingSensitive` one) runs each test case on a thread of its own,
/// off the pool, so a test that waits costs its own time and nobody else's.
public struct OwnThreadTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        // A suite's scope, or a test's around its cases, is not a body: each case moves.
        guard testCase != nil else { return try await function() }
        try await OwnThread.run(test.name, function)
    }
}

extension Trait where Self == OwnThreadTrait {
    /// Each test case of the suite on a thread of its own (it blocks while it waits on the wall clock).
    public static var ownThread: Self { OwnThreadTrait() }
}

enum OwnThread {
    /// Runs `body` with a task executor of its own, so that whatever it does synchronously
    /// runs there (a test function's body is synchronous code called from this task).
    static func run(_ name: String, _ body: @Sendable () async throws -> Void) async throws {
        try await withTaskExecutorPreference(BlockingExecutor(name: name)) { try await body() }
    }
}

/// A task executor on a serial queue of its own: dispatch gives a serial queue a thread of its
/// own when the others are busy (a concurrent queue shares the pool's, one per core; measured:
/// eight blocked jobs took 3 s on a concurrent queue, 1 s on eight serial ones), so a job that
/// blocks holds that thread, never one of the cooperative pool's.
final class BlockingExecutor: TaskExecutor, @unchecked Sendable {
    private let queue: DispatchQueue

    init(name: String) {
        queue = DispatchQueue(label: "synchat.tests.own-thread." + name)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
