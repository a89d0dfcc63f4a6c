import Foundation
import Testing

extension Trait where Self == TimingSensitive {
    /// This suite drives real processes against wall-clock deadlines (tmux and the built
    /// binary, the crash harness's SIGKILLs): no two such suites run at once.
    ///
    /// Swift Testing runs suites in parallel, and `.serialized` orders the tests of one suite
    /// only. Suites that carry this trait take one lock shared by every test target, so the
    /// tmux suites and the crash suite stop skewing each other's timings. Put `.serialized`
    /// beside it so that the suite's own tests run one at a time too:
    ///
    ///     @Suite("End to end: the TUI in tmux", .serialized, .timingSensitive)
    public static var timingSensitive: Self { TimingSensitive() }
}

/// See `Trait.timingSensitive`.
public struct TimingSensitive: SuiteTrait, TestTrait, TestScoping {
    /// The lock is held by a whole suite (or a lone test), not by each of its tests.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? self : nil
    }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        // A suite's tests inherit the trait: they run inside the suite's hold.
        if Self.holding { return try await function() }
        await Self.lock.acquire()
        defer { Self.lock.release() }
        try await Self.$holding.withValue(true) { try await function() }
    }

    @TaskLocal static var holding = false
    static let lock = AsyncLock()
}

/// A lock that waits without blocking a thread: a waiting suite must not hold one of the
/// cooperative pool's few threads (two on a 2-core machine) while the holder needs them.
final class AsyncLock: @unchecked Sendable {
    private let mutex = NSLock()  // guards the two below
    private var locked = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            mutex.lock()
            if locked {
                waiters.append(waiter)
                mutex.unlock()
            } else {
                locked = true
                mutex.unlock()
                waiter.resume()
            }
        }
    }

    func release() {
        mutex.lock()
        let next = waiters.isEmpty ? nil : waiters.removeFirst()
        if next == nil { locked = false }
        mutex.unlock()
        next?.resume()  // the lock passes straight to the next waiter
    }
}
