import Foundation
import Testing

/// Where you left off, in a real terminal: quit with a conversation open and a line half written;
/// the command says the line is kept; the next launch opens that conversation with the line.
@Suite("End to end: where you left off", .serialized, .timingSensitive)
struct LeftOffEndToEndTests {
    init() throws { try TmuxSession.requireReady() }

    @Test("a relaunch opens the conversation you had open, with your unsent line in the compose line")
    func relaunchRestores() throws {
        let dir = try TemporaryDirectory("leftoff")
        defer { dir.remove() }
        let env = ["XDG_DATA_HOME": dir.file("data")]
        var name = ""
        do {
            let t = try TmuxSession(width: 120, height: 36, arguments: "--profile p --speed 10", environment: env)
            defer { t.close() }
            t.wait(for: " foreground │", seconds: 60)
            try t.keys("Down", "Enter")  // the second conversation
            let screen = t.wait("the compose prompt") { $0.split(separator: "\n").contains { $0.hasPrefix("to ") && $0.hasSuffix(">") } }
            name = String(screen.split(separator: "\n").first { $0.hasPrefix("to ") }!.dropFirst(3).dropLast())
            try t.type("not finished yet")
            try t.keys("Escape", "q")
            let end = t.wait(for: "EXIT=0")
            #expect(end.contains("synchat: your unsent line to \(name) is kept in the profile; it will be there next time"))
        }
        let t = try TmuxSession(width: 120, height: 36, arguments: "--profile p --speed 10", environment: env)
        defer { t.close() }
        let back = t.wait("the same conversation with the line") { $0.contains("to \(name)> not finished yet") }
        #expect(back.split(separator: "\n").first?.contains(" \(name)") == true)  // its title
        try t.keys("C-u", "Escape", "q")  // cleared: nothing left to keep
        let end = t.wait(for: "EXIT=0")
        #expect(!end.contains("is kept in the profile"))
    }
}
