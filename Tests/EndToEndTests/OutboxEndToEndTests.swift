import Foundation
import Testing

/// The outbox in a real terminal: written while the node is down, a message shows as not
/// sent with its retry, the bar counts it, and it goes out by itself once the node is back.
@Suite("End to end: a message the network cannot take", .serialized, .timingSensitive)
struct OutboxEndToEndTests {
    init() throws { try TmuxSession.requireReady() }

    @Test("r, then a message: ! not sent: node unreachable, 1 unsent; r again: it is sent, once")
    func sendWhileNodeDown() throws {
        let t = try TmuxSession(width: 140, height: 36, arguments: "--ephemeral --seed 1 --speed 10")
        defer { t.close() }
        t.wait(for: " live │", seconds: 60)
        try t.keys("r")
        t.wait(for: "fault: realtime down")
        try t.keys("Enter")
        t.wait("the compose prompt") { $0.split(separator: "\n").contains { $0.hasPrefix("to ") && $0.hasSuffix(">") } }
        try t.type("written while the node is down")
        try t.keys("Enter")
        // Polled whole: a capture can catch a frame half drawn.
        let failed = t.wait("the refused message and the count") { $0.contains("not sent: node unreachable") && $0.contains("1 unsent") }
        #expect(failed.contains("! you: written while the node is down"))
        try t.keys("Escape", "r")
        let sent = t.wait("the message sent") { !$0.contains("not sent") && !$0.contains("unsent") && $0.contains("› you: written while the node is down") }
        // Shown once in the pane (the log also has the line "world: send alice …").
        #expect(sent.split(separator: "\n").filter { $0.contains("you: written while the node is down") }.count == 1, "shown once")
        try t.keys("q")
        t.wait(for: "EXIT=0")
    }
}
