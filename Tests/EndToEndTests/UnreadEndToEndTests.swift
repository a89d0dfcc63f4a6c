import Foundation
import Testing

/// In a real terminal: when a conversation shows an unread count, `u` opens it
/// with a `new` line above what was unread.
@Suite("End to end: jump to unread", .serialized, .timingSensitive)
struct UnreadEndToEndTests {
    init() throws { try TmuxSession.requireReady() }

    /// The list row of a conversation with unread messages: `  Name   3 │`.
    static func unreadRow(_ screen: String) -> String? {
        screen.split(separator: "\n").lazy.map(String.init).first { row in
            guard let bar = row.firstIndex(of: "│") else { return false }
            return row[..<bar].range(of: #"\s\d+ $"#, options: .regularExpression) != nil
        }
    }

    @Test("u opens the conversation with unread messages; a new line stands above them; its count goes")
    func jump() throws {
        let t = try TmuxSession(width: 120, height: 36, arguments: "--ephemeral --seed 2 --speed 120")
        defer { t.close() }
        let screen = t.wait("a conversation with unread messages", seconds: 60) { Self.unreadRow($0) != nil }
        let row = try #require(Self.unreadRow(screen))
        // Outside the app, the terminal's title counts them.
        let deadline = Date().addingTimeInterval(10)
        var paneTitle = ""
        while Date() < deadline {
            paneTitle = try t.tmux(["display-message", "-p", "-t", t.name, "#{pane_title}"], output: true).trimmingCharacters(in: .newlines)
            if paneTitle.range(of: #"^synchat \(\d+ unread\)$"#, options: .regularExpression) != nil { break }
            usleep(100_000)
        }
        #expect(paneTitle.range(of: #"^synchat \(\d+ unread\)$"#, options: .regularExpression) != nil, "\(paneTitle)")
        let name = row.dropFirst(2).split(separator: " ").first.map(String.init) ?? ""
        try t.keys("u")
        // Polled whole (a capture can catch a frame half drawn): the title, the line, the prompt.
        t.wait("the conversation open with its new line") {
            $0.contains("── new ──") && $0.split(separator: "\n").first?.contains(" \(name)") == true && $0.contains("to \(name)>")
        }
        try t.keys("Escape", "q")
        t.wait(for: "EXIT=0")
    }
}
