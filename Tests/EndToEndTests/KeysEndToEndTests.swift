import Foundation
import Testing

/// Issue 15 #6 in a real terminal: a key rebound in keys.toml does its action, its old key
/// does nothing, and the help shows the new one.
@Suite("End to end: keys.toml", .serialized, .timingSensitive)
struct KeysEndToEndTests {
    init() throws { try TmuxSession.requireReady() }

    @Test("background = \"B\": B backgrounds, b does not, the help lists B; a bad line is a warning with file and line")
    func rebound() throws {
        let dir = try TemporaryDirectory("keys")
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.file("config/synchat"), withIntermediateDirectories: true)
        try "[keys]\nbackground = \"B\"\ndance = \"d\"\n".write(toFile: dir.file("config/synchat/keys.toml"), atomically: true, encoding: .utf8)
        let t = try TmuxSession(width: 140, height: 40, arguments: "--ephemeral --speed 10", environment: ["XDG_CONFIG_HOME": dir.file("config")])
        defer { t.close() }
        t.wait(for: "keys.toml:3: unknown action \"dance\"")
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
