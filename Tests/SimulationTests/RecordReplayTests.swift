import Directives
import Foundation
import Simulation
import SyncCore
import SyncEngine
import Testing
import TestSupport
import WidthCorpus

/// A live session written down by `SessionRecorder` replays under `simulate` to
/// the very event lines the session lived — whatever the frame sizes of the live run.
@Suite("Record and replay")
struct RecordReplayTests {
    /// A "live" session driven the way the TUI drives one: the world runs up to each frame's
    /// instant, then that frame's keys apply. Returns its event lines and the recording.
    static func liveSession(frames: [Int64], keys: [Int: [Directive]], file: String) throws -> (lines: [String], recording: String) {
        let session = AppSession(seed: 9, contacts: 4, trafficPerHour: 90, mode: .remotePush, policy: .adaptive,
                                 storage: InMemoryChatStorage())
        session.start()
        let recorder = try SessionRecorder(path: file, session: session, policy: .adaptive)
        var t = session.scheduler.now
        for (i, step) in frames.enumerated() {
            t = t + .milliseconds(step)
            session.advance(to: t)
            for d in keys[i] ?? [] { session.apply(d) }
        }
        recorder.finish(at: session.scheduler.now)
        let lines = session.log.filter(\.event.isDecision).map(\.line)
        return (lines, try String(contentsOfFile: file, encoding: .utf8))
    }

    static let keys: [Int: [Directive]] = [
        40: [.background],
        55: [.foreground],
        70: [.fault(.pushDrop(percent: 100))],
        90: [.fault(.realtimeDown), .send(handle: "alice", text: "written \"offline\"\n\u{1B}[2J and ☃")],  // two keys in one frame
        120: [.fault(.realtimeUp), .fault(.pushDrop(percent: 0)), .fault(.pushDelay(.seconds(90)))],
        135: [.fault(.pushUp), .preview(.hidden), .mode(.backgroundFetch)],
        150: [.open(handle: "alice"), .fault(.indexerDown)],
        170: [.sync, .retry, .fault(.tokenExpire)],
        185: [.fault(.indexerUp), .mode(.remotePush)],
    ]

    @Test("the recording replays to the same event lines, line for line, and stops where the session quit")
    func roundTrip() throws {
        let dir = try TemporaryDirectory("record")
        defer { dir.remove() }
        // Frames of uneven length, as wall time gives them: 1.7 s to 9.4 s of world time each.
        let frames = (0..<200).map { Int64(1_700 + ($0 * 7_919) % 7_700) }
        let live = try Self.liveSession(frames: frames, keys: Self.keys, file: dir.file("r.scenario"))
        #expect(live.lines.count > 150)
        let scenario = try ScenarioParser.parse(live.recording, file: "r.scenario")
        #expect(scenario.steps.last?.directive == .stop)
        let replay = ScenarioRun(scenario: scenario, policy: .adaptive)
        replay.run()
        let lines = replay.session.log.filter(\.event.isDecision).map(\.line)
        #expect(lines == live.lines)
        #expect(live.recording.contains(#"send alice "written \"offline\"\n\e[2J and ☃""#))
    }

    @Test("events do not depend on frame sizes: the same keys at the same instants give the same log with 250 ms or 60 s frames")
    func frameSizesDoNotMatter() throws {
        let dir = try TemporaryDirectory("record")
        defer { dir.remove() }
        let keys: [Int: [Directive]] = [3: [.background], 6: [.foreground], 9: [.fault(.pushDrop(percent: 100))], 14: [.fault(.realtimeDown)], 18: [.fault(.realtimeUp)]]
        let coarse = try Self.liveSession(frames: Array(repeating: 60_000, count: 20), keys: keys, file: dir.file("a"))
        // The same instants reached in small steps: each 60 s frame as 240 frames of 250 ms.
        var fine: [Int: [Directive]] = [:]
        for (i, k) in keys { fine[(i + 1) * 240 - 1] = k }
        let small = try Self.liveSession(frames: Array(repeating: 250, count: 20 * 240), keys: fine, file: dir.file("b"))
        #expect(coarse.lines == small.lines)
        #expect(coarse.lines.count > 40)
    }

    @Test("hostile text survives a recording: every string of the public width corpus is written and read back as itself")
    func quotedRoundTrip() throws {
        let entries = try Corpus.load(path: Corpus.defaultPath(packageRoot: BuiltProducts.packageRoot.path))
        var text = "contacts 1\n"
        for (i, e) in entries.enumerated() { text += "at \(i)s receive alice \(Directive.quoted(e.text))\n" }
        text = "duration \(entries.count + 1)s\n" + text
        let scenario = try ScenarioParser.parse(text, file: "quoted")
        #expect(scenario.steps.map(\.directive) == entries.map { .receive(handle: "alice", text: $0.text) })
    }

    @Test("a recording that cannot be written is refused with one line naming the file")
    func unwritable() throws {
        let dir = try TemporaryDirectory("record")
        defer { dir.remove() }
        let session = AppSession(seed: 1, contacts: 2, trafficPerHour: 0, mode: .remotePush, policy: .adaptive, storage: InMemoryChatStorage())
        #expect(!session.resumed)
        _ = try SessionRecorder(path: dir.file("ok"), session: session, policy: .adaptive)
        #expect {
            try SessionRecorder(path: dir.path + "/no/such/dir/r", session: session, policy: .adaptive)
        } throws: { error in
            "\(error)" == "--record: cannot write \(dir.path)/no/such/dir/r"
        }
    }
}
