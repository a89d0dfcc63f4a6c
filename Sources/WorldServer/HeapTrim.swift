import Foundation

/// Gives the pages the allocator holds free back to the system (glibc's `malloc_trim`), so the
/// server's resident size follows what it holds now, not the most it ever held: 8 192
/// upgraded sockets closed left 42 MB resident, and 8 192 unfinished heads opened next could
/// not reuse most of it (the allocator keeps freed chunks of one size apart from others), which
/// took the crowd attack to +76 MB (`synchat-bench hostile together`). Looked up at run time:
/// a C library without it (musl, macOS) does nothing.
enum HeapTrim {
    private typealias Trim = @convention(c) (Int) -> Int32
    private static let trim: Trim? = {
        guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: Trim.self)
    }()

    /// Trims, and says how long it took.
    @discardableResult
    static func now() -> Duration {
        let clock = ContinuousClock()
        return clock.measure { _ = trim?(0) }
    }
}
