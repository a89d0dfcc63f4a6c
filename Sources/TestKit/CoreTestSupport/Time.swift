import SyncCore

// The test clock's words. Every test runs in virtual time from `Instant.zero`, the start of
// the run, so an instant is written as the time since then.

/// `minutes` and `seconds` into the run: `t(3, 3)` is 00:03:03.
public func t(_ minutes: Int64, _ seconds: Int64 = 0) -> Instant { .zero + .minutes(minutes) + .seconds(seconds) }

/// `seconds` into the run: `at(90)` is 00:01:30.
public func at(_ seconds: Int64) -> Instant { .zero + .seconds(seconds) }

/// `seconds` into the run, as the screen tests first wrote it.
@available(*, deprecated, renamed: "at")
public func sec(_ seconds: Int64) -> Instant { at(seconds) }
