// Time is owned, not borrowed (docs/design.md): SyncCore never reads a clock. Every machine takes
// `now` as a parameter and exposes its timers as deadlines, so the same code runs in virtual
// time (tests, `simulate`) and in scaled wall time (the TUI).

/// A point on the client's and the world's shared time line, in milliseconds since the epoch
/// of the run (the start of the simulated world).
public struct Instant: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    public static let zero = Instant(milliseconds: 0)

    public static func < (a: Instant, b: Instant) -> Bool { a.milliseconds < b.milliseconds }
    public static func + (a: Instant, b: Interval) -> Instant { Instant(milliseconds: a.milliseconds + b.milliseconds) }
    public static func - (a: Instant, b: Interval) -> Instant { Instant(milliseconds: a.milliseconds - b.milliseconds) }
    public static func - (a: Instant, b: Instant) -> Interval { Interval(milliseconds: a.milliseconds - b.milliseconds) }

    /// `HH:MM:SS.mmm` since the start of the run; hours keep counting past 24.
    public var description: String {
        let ms = max(0, milliseconds)
        let h = ms / 3_600_000, m = ms / 60_000 % 60, s = ms / 1000 % 60, f = ms % 1000
        return pad(h, 2) + ":" + pad(m, 2) + ":" + pad(s, 2) + "." + pad(f, 3)
    }
}

/// A length of time in milliseconds. Named `Interval` so it never clashes with `Swift.Duration`.
public struct Interval: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    public static func milliseconds(_ v: Int64) -> Interval { Interval(milliseconds: v) }
    public static func seconds(_ v: Int64) -> Interval { Interval(milliseconds: v * 1000) }
    public static func fractionalSeconds(_ v: Double) -> Interval { Interval(milliseconds: Int64((v * 1000).rounded())) }
    public static func minutes(_ v: Int64) -> Interval { Interval(milliseconds: v * 60_000) }
    public static func hours(_ v: Int64) -> Interval { Interval(milliseconds: v * 3_600_000) }
    public static let zero = Interval(milliseconds: 0)

    public var seconds: Double { Double(milliseconds) / 1000 }

    public static func < (a: Interval, b: Interval) -> Bool { a.milliseconds < b.milliseconds }
    public static func + (a: Interval, b: Interval) -> Interval { Interval(milliseconds: a.milliseconds + b.milliseconds) }
    public static func - (a: Interval, b: Interval) -> Interval { Interval(milliseconds: a.milliseconds - b.milliseconds) }
    public static func * (a: Interval, k: Int64) -> Interval { Interval(milliseconds: a.milliseconds * k) }

    /// Compact human form used in event lines: `7m12s`, `90s`, `1h05m`, `350ms`.
    public var description: String {
        let ms = milliseconds
        if ms < 0 { return "-" + Interval(milliseconds: -ms).description }
        if ms < 1000 { return "\(ms)ms" }
        let total = ms / 1000
        let h = total / 3600, m = total / 60 % 60, s = total % 60
        if h > 0 { return "\(h)h" + pad(m, 2) + "m" }
        if m > 0 { return s == 0 ? "\(m)m" : "\(m)m" + pad(s, 2) + "s" }
        let tenths = ms % 1000 / 100
        return tenths == 0 ? "\(s)s" : "\(s).\(tenths)s"
    }
}

@inline(__always)
func pad(_ v: Int64, _ width: Int) -> String {
    let s = String(v)
    return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
}
