import Foundation
import Testing

/// A played scenario in the real TUI: its end hands the world over instead of freezing it.
@Suite("End to end: a played scenario hands over to the live world", .serialized, .timingSensitive)
struct ScriptHandOverEndToEndTests {
    init() throws { try TmuxSession.requireReady() }

    @Test("after the script's end, b and f reconnect (not 'connecting' forever) and the status bar says the script is over")
    func liveAfterTheScript() throws {
        let file = NSTemporaryDirectory() + "handover-\(getpid()).scenario"
        try "seed 3\nduration 1m\nsettle 30s\ncontacts 3\ntraffic 0/h\nat 10s receive alice \"scripted hello\"\n"
            .write(toFile: file, atomically: true, encoding: .utf8)
        defer { unlink(file) }
        let t = try TmuxSession(width: 120, height: 36, arguments: "--ephemeral --speed 60 --scenario \(file)")
        defer { t.close() }
        t.wait(for: "script ", seconds: 30)
        t.wait(for: "script over: live", seconds: 30)
        t.wait(for: "the scenario is over: the world goes on live")  // announced where the eye is
        // A letter typed while a notice nobody asked for shows only takes it away.
        try t.keys("b")
        t.wait("the notice taken away, still in the foreground", seconds: 20) { screen in
            !screen.contains("the scenario is over") && screen.contains(" foreground │")
        }
        try t.keys("b")
        t.wait(for: "background", seconds: 20)
        try t.keys("f")
        t.wait("realtime live again after the script ended", seconds: 30) { screen in
            let status = screen.split(separator: "\n").suffix(2).joined(separator: "\n")
            return status.contains("foreground") && status.contains(" live ") && status.contains("script over: live")
        }
        try t.keys("q")
        t.wait(for: "EXIT=0")
    }
}
