import SyncCore
import SyncEngine

/// The simulated wall clock shown to people: the run starts on day 1 at 08:00.
public enum Clock {
    static let start = Interval.hours(8)

    public static func day(_ t: Instant) -> Int { Int((t + start).milliseconds / 86_400_000) + 1 }

    public static func hhmm(_ t: Instant) -> String {
        let m = (t + start).milliseconds / 60_000
        return two(m / 60 % 24) + ":" + two(m % 60)
    }

    public static func full(_ t: Instant) -> String {
        let s = (t + start).milliseconds / 1000
        return "d\(day(t)) " + two(s / 3600 % 24) + ":" + two(s / 60 % 60) + ":" + two(s % 60)
    }

    /// `d1 08:04:08.250`: the status bar's clock to the millisecond, for lines a program
    /// prints as it goes (`synchat bot --events`), so that they and the screen say one time.
    public static func stamp(_ t: Instant) -> String {
        full(t) + "." + String(String((t + start).milliseconds % 1000 + 1000).dropFirst())
    }

    /// `08:04:08`: the world's time of day, as the status bar's clock shows it (the log's).
    public static func time(_ t: Instant) -> String {
        let s = (t + start).milliseconds / 1000
        return two(s / 3600 % 24) + ":" + two(s / 60 % 60) + ":" + two(s % 60)
    }

    static func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
}
