import Foundation
import Testing

/// Record and replay with the real binary: a session played by hand in tmux with `--record` and
/// `--log`, then `synchat simulate --scenario RECORDING --events` prints exactly what `--log`
/// wrote.
@Suite("End to end: record in tmux, replay with simulate", .serialized, .timingSensitive)
struct RecordEndToEndTests {
    init() throws { try TmuxSession.requireReady() }

    @Test("b f p r x v m, open and write, p p r x S t, q: the replay prints the log, line for line")
    func roundTrip() throws {
        let dir = try TemporaryDirectory("record")
        defer { dir.remove() }
        let recording = dir.file("session.scenario"), log = dir.file("session.log")
        let t = try TmuxSession(width: 120, height: 36, arguments: "--ephemeral --seed 4 --speed 60 --record \(recording) --log \(log)")
        defer { t.close() }
        t.wait(for: " live │", seconds: 60)
        // Each key's own line in the event log says it was taken (the screen's log may have
        // scrolled past it at x60).
        func logged(_ text: String) {
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline {
                if ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains(text) { return }
                usleep(50_000)
            }
            Issue.record("\(text) never reached the log")
        }
        for (key, shows) in [("b", "world: background"), ("f", "world: foreground"), ("p", "world: push drop 100%"), ("r", "world: realtime down"),
                             ("x", "world: indexer down"), ("v", "world: notification preview contact"), ("m", "world: notification mode background-fetch")] {
            try t.keys(key)
            logged(shows)
        }
        try t.keys("Enter")
        t.wait("the compose prompt") { $0.split(separator: "\n").contains { $0.hasPrefix("to ") && $0.hasSuffix(">") } }
        try t.type("recorded \"hello\"")
        try t.keys("Enter")
        t.wait(for: "not sent: node unreachable")
        try t.keys("Escape")
        for (key, shows) in [("p", "world: push delay"), ("p", "world: push up"), ("r", "world: realtime up"), ("x", "world: indexer up"),
                             ("S", "world: sync"), ("t", "world: token expire")] {
            try t.keys(key)
            logged(shows)
        }
        // The line written while realtime was down goes out once it is back; q before that
        // would ask first (a message waiting to be sent would be lost with --ephemeral).
        t.wait("the message sent", seconds: 60) { !$0.contains("not sent:") && !$0.contains("sending…") }
        try t.keys("q")
        t.wait(for: "EXIT=0")
        // The events, without the `#` notes (what the terminal was found to draw, warnings).
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("# ") }.joined(separator: "\n")
        let replay = try TmuxSession.spawn([TmuxSession.binary, "simulate", "--scenario", recording, "--events"], captureOutput: true, captureErrors: true)
        #expect(replay.status == 0, "\(replay.err)")
        #expect(replay.out == lines)
        #expect(lines.split(separator: "\n").count > 40)
        let script = try String(contentsOfFile: recording, encoding: .utf8)
        for verb in ["background", "foreground", "push drop 100%", "realtime down", "indexer down", "preview contact", "mode background-fetch",
                     "open ", #"send "#, "sync", "token expire", "stop"] {
            #expect(script.contains(verb), "\(verb) missing from:\n\(script)")
        }
    }

    @Test("--record with a resumed profile, or with --scenario, is one line and exit 2")
    func refused() throws {
        let dir = try TemporaryDirectory("record")
        defer { dir.remove() }
        let env = ["XDG_DATA_HOME=\(dir.file("data"))"]
        let t = try TmuxSession(arguments: "--profile p --speed 60", environment: ["XDG_DATA_HOME": dir.file("data")])
        t.wait(for: " foreground │", seconds: 60)
        try t.keys("q")
        t.wait(for: "EXIT=0")
        t.close()
        let resumed = try TmuxSession.spawn(["/usr/bin/env"] + env + [TmuxSession.binary, "--profile", "p", "--record", dir.file("r")], captureOutput: true, captureErrors: true)
        #expect(resumed.status == 2)
        #expect(resumed.err == "synchat: --record needs a new world: this profile resumes one (use --ephemeral, or a new --profile)\n")
        let demo = TmuxSession.packageRoot.appendingPathComponent("Scenarios/demo.scenario").path
        let both = try TmuxSession.spawn([TmuxSession.binary, "--ephemeral", "--scenario", demo, "--record", dir.file("r")], captureOutput: true, captureErrors: true)
        #expect(both.status == 2)
        #expect(both.err.contains("--record writes a live session as a scenario; with --scenario, replay that scenario instead"))
        #expect(both.err.filter { $0 == "\n" }.count == 1)
    }
}
