import Foundation
import Testing

/// `keys.toml` in a real terminal: a key rebound in keys.toml does its action, its old key
/// does nothing, and the help shows the new one.
@Suite("End to end: keys.toml", .serialized, .timingSensitive)
struct KeysEndToEndTests {
    init() throws { try TmuxSession.requireReady() }

    @Test("background = \"B\": B backgrounds, b does not, the help lists B; a bad line is a warning with file and line")
    func rebound() throws {
        let dir = try TemporaryDirectory("keys")
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.file("config/synchat"), withIntermediateDirectories: true)
        try "[keys]\nbackground = \"B\"\ndance = \"d\"\n[compose]\nkillWord = \"ctrl-h\"\n".write(toFile: dir.file("config/synchat/keys.toml"), atomically: true, encoding: .utf8)
        let t = try TmuxSession(width: 140, height: 40, arguments: "--ephemeral --speed 10 --log \(dir.file("events.log"))", environment: ["XDG_CONFIG_HOME": dir.file("config")])
        defer { t.close() }
        // Two warnings: counted on the compose line, each whole in the sync log (whose first
        // lines the chat soon scrolls past: read where --log keeps them).
        t.wait(for: "2 warnings, each in the log (l)")
        let log = { (try? String(contentsOfFile: dir.file("events.log"), encoding: .utf8)) ?? "" }
        #expect(t.poll(seconds: 10) { _ in log().contains("keys.toml:3: unknown action \"dance\"") })
        // A key the terminal reads as another is said, with its line.
        #expect(t.poll(seconds: 10) { _ in
            log().contains("keys.toml:5: \"ctrl-h\" reaches the app as Bksp (the terminal sends one byte for both); killWord keeps its keys")
        })
        t.wait(for: " foreground │")
        try t.keys("b")
        #expect(!t.poll(seconds: 1.5) { $0.contains(" background │") }, "b still backgrounds")
        try t.keys("B")
        t.wait(for: " background │")
        try t.keys("f")
        t.wait(for: " foreground │")
        try t.keys("?")
        let help = t.wait(for: "send the app to the background")
        #expect(help.split(separator: "\n").contains { $0.range(of: #"B +send the app to the background"#, options: .regularExpression) != nil })
        try t.keys("Escape", "q")
        t.wait(for: "EXIT=0")
    }
}

/// On the real screen: keys that arrive in one read each act on the state the one before
/// left, so none of them is lost or acts twice, on the screen or in a recording.
@Suite("End to end: keys that arrive together", .serialized, .timingSensitive)
struct KeyBurstEndToEndTests {
    init() throws { try TmuxSession.requireReady() }

    @Test("+ + in one write goes two steps (x30 → x120), - - - three (x120 → x10); m, then m m f, records three modes and ends where the keys left it")
    func bursts() throws {
        let dir = try TemporaryDirectory("burst")
        defer { dir.remove() }
        let recording = dir.file("session.scenario")
        let t = try TmuxSession(width: 140, height: 40, arguments: "--ephemeral --speed 30 --record \(recording)")
        defer { t.close() }
        t.wait(for: " foreground │", seconds: 60)
        t.wait(for: " x30")
        try t.keys("+", "+")  // one send-keys: one write to the terminal
        t.wait(for: " x120")
        try t.keys("-", "-", "-")
        t.wait(for: " x10")
        #expect(!t.poll(seconds: 1) { $0.contains(" x60") || $0.contains(" x30") }, "a key of the burst was lost")
        // remote-push → background-fetch, then → off → remote-push, and the foreground.
        try t.keys("m")
        t.wait(for: "│ background-fetch │")
        try t.keys("m", "m", "f")
        t.wait(for: "│ remote-push │")
        try t.keys("q")
        t.wait(for: "EXIT=0")
        let lines = try String(contentsOfFile: recording, encoding: .utf8).split(separator: "\n").filter { $0.contains(" mode ") }
        #expect(lines.map { String($0.split(separator: " ").last!) } == ["background-fetch", "off", "remote-push"], "\(lines)")
    }
}
