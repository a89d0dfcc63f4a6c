import Foundation
import Testing

extension Trait where Self == TimingSensitive {
    /// This suite drives real processes against wall-clock deadlines (tmux and the built
    /// binary, the crash harness's SIGKILLs): only a few such suites run at once, each test
    /// on a thread of its own.
    ///
    /// Swift Testing runs suites in parallel, and `.serialized` orders the tests of one suite
    /// only. Suites that carry this trait share slots across every test target — two at once
    /// by default, `SYNCHAT_TIMING_SENSITIVE_SUITES=N` for another number (1: one at a time) —
    /// so the tmux suites and the crash suite do not skew each other's timings past their
    /// deadlines, while most of their time, spent waiting for a screen, overlaps. Put
    /// `.serialized` beside it so that the suite's own tests run one at a time too:
    ///
    ///     @Suite("End to end: the TUI in tmux", .serialized, .timingSensitive)
    public static var timingSensitive: Self { TimingSensitive() }
}

/// See `Trait.timingSensitive`.
public struct TimingSensitive: SuiteTrait, TestTrait, TestScoping {
    /// A suite's tests carry it too, so that each of their cases reaches `provideScope` and
    /// runs on a thread of its own, never blocking the cooperative pool while it waits.
    public var isRecursive: Bool { true }

    /// The lock is held by a whole suite (or a lone test), not by each of its tests; each
    /// test case runs on a thread of its own (`.ownThread`), since it blocks while it waits.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? { self }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        if testCase != nil { return try await OwnThread.run(function) }
        // A suite's tests inherit the trait: they run inside the suite's hold.
        if Self.holding { return try await function() }
        // The suite's own steps (waiting for a slot, starting each test, recording its end)
        // run off the pool too: on the pool they would queue behind every pure test of the
        // run, and a suite whose tests had ended would hold its slot that long.
        try await OwnThread.run {
            await Self.slots.acquire()
            defer { Self.slots.release() }
            try await Self.$holding.withValue(true) { try await function() }
        }
    }

    @TaskLocal static var holding = false
    static let slots = AsyncSemaphore(width: Int(ProcessInfo.processInfo.environment["SYNCHAT_TIMING_SENSITIVE_SUITES"] ?? "") ?? 2)
}

/// A semaphore that waits without blocking a thread: a waiting suite must not hold one of the
/// cooperative pool's few threads (two on a 2-core machine) while the holders need them.
final class AsyncSemaphore: @unchecked Sendable {
    private let mutex = NSLock()  // guards the two below
    private var free: Int
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init(width: Int) { free = max(1, width) }

    func acquire() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            mutex.lock()
            if free == 0 {
                waiters.append(waiter)
                mutex.unlock()
            } else {
                free -= 1
                mutex.unlock()
                waiter.resume()
            }
        }
    }

    func release() {
        mutex.lock()
        let next = waiters.isEmpty ? nil : waiters.removeFirst()
        if next == nil { free += 1 }
        mutex.unlock()
        next?.resume()  // the slot passes straight to the next waiter
    }
}
