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

    /// `text` with every instant the engine wrote into it (`00:14:40.102`, counted from the
    /// run's start: `Instant.description`) said on the world's clock as the line's own time is
    /// (`08:14:40.102`): one clock on a line of the log.
    public static func worldTimes(in text: String) -> String {
        guard text.contains(":") else { return text }
        return text.replacing(/\b(\d{2,}):([0-5]\d):([0-5]\d)\.(\d{3})\b/) { m in
            guard let h = Int64(m.output.1), let mi = Int64(m.output.2), let se = Int64(m.output.3), let ms = Int64(m.output.4) else { return String(m.output.0) }
            let t = Instant(milliseconds: ((h * 60 + mi) * 60 + se) * 1000 + ms)
            return time(t) + "." + String(m.output.4)
        }
    }

    static func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
}
