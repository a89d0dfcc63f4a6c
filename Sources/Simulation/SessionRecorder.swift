import ClientRuntime
import Directives
import Foundation
import SyncCore

/// Writes a live session as a scenario file (`--record FILE`): a header that
/// rebuilds the same world (seed, contacts, traffic, mode, no settle), then every directive
/// the session applied — keys, sends, reads, mode and preview changes — at its virtual time
/// to the millisecond, and at the end `stop`, where the app quit. Replayed with
/// `synchat simulate --scenario FILE --policy P --events`, it prints the lines `--log` wrote.
///
/// Each line is written and flushed as it happens, so that a kill loses nothing before it;
/// the header's duration is a day until `finish` writes the real one (a recording cut short
/// replays as a day-long scenario).
public final class SessionRecorder: SessionRecording {
    public struct RecordError: Error, CustomStringConvertible {
        public var description: String
    }

    public let path: String
    private let handle: FileHandle
    private let startedAt: Instant
    private var header: [String]
    private var lines: [String] = []

    /// Starts a recording of `session` into `path` (created or truncated). A resumed profile
    /// cannot be replayed from a scenario (its world began before): refused.
    public init(path: String, session: AppSession, policy: SyncPolicy) throws {
        guard !session.resumed else {
            throw RecordError(description: "--record needs a new world: this profile resumes one (use --ephemeral, or a new --profile)")
        }
        guard FileManager.default.createFile(atPath: path, contents: nil), let h = FileHandle(forWritingAtPath: path) else {
            throw RecordError(description: "--record: cannot write \(path)")
        }
        self.path = path
        handle = h
        startedAt = session.startedAt
        let world = session.world
        header = [
            "# A live synchat session, recorded by --record. Replay it with:",
            "#   synchat simulate --scenario \(path) --policy \(policy.name) --events",
            "seed \(session.seed)",
            "duration 1d",
            "settle 0s",
            "contacts \(world.contacts.count)",
            "traffic \(Self.rate(world.traffic.perHour))",
            "mode \(session.driver.mode.rawValue)",
        ]
        write(header)
        session.onApply = { [weak self] directive, at in self?.record(directive, at: at) }
    }

    /// One applied directive.
    public func record(_ d: Directive, at: Instant) {
        let line = "at \(Self.time(at - startedAt)) \(d.scenarioText)"
        lines.append(line)
        write([line])
    }

    /// The app quits at `at`: `stop` there, and the header's real duration.
    public func finish(at end: Instant) {
        let elapsed = end - startedAt
        lines.append("at \(Self.time(elapsed)) stop")
        let seconds = (elapsed.milliseconds + 999) / 1000
        header = header.map { $0 == "duration 1d" ? "duration \(max(1, seconds))s" : $0 }
        try? handle.truncate(atOffset: 0)
        try? handle.seek(toOffset: 0)
        write(header + lines)
        try? handle.close()
    }

    private func write(_ text: [String]) {
        handle.write(Data(text.map { $0 + "\n" }.joined().utf8))
    }

    /// `1m2s345ms`: exact to the millisecond, as the parser reads it (also what the shrinker writes).
    public static func time(_ i: Interval) -> String {
        var ms = max(0, i.milliseconds)
        if ms == 0 { return "0s" }
        var out = ""
        let h = ms / 3_600_000; ms %= 3_600_000
        let m = ms / 60_000; ms %= 60_000
        let s = ms / 1000; ms %= 1000
        if h > 0 { out += "\(h)h" }
        if m > 0 { out += "\(m)m" }
        if s > 0 { out += "\(s)s" }
        if ms > 0 { out += "\(ms)ms" }
        return out
    }

    public static func rate(_ perHour: Double) -> String {
        perHour == perHour.rounded() ? "\(Int(perHour))/h" : "\(perHour)/h"
    }
}
