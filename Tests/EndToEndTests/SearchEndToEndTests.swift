import Foundation
import Testing

/// Search in a real terminal: a word of a message, searched with `/`, is found by the
/// store's index and shown; Tab searches all conversations and lists the hits.
@Suite("End to end: search in tmux", .serialized, .timingSensitive)
struct SearchEndToEndTests {
    init() throws { try TmuxSession.requireReady() }

    @Test("/ word Enter finds the message in this conversation; / Tab word Enter lists hits in all conversations")
    func search() throws {
        let t = try TmuxSession(width: 120, height: 36, arguments: "--ephemeral --seed 2 --speed 300")
        defer { t.close() }
        t.wait(for: " foreground │", seconds: 60)
        // Open a conversation that has messages (u: the next with unread ones), and take a
        // word of one of them.
        t.wait("a message arrived", seconds: 60) { UnreadEndToEndTests.unreadRow($0) != nil }
        try t.keys("u")
        var word = ""
        let pattern = #"│ \d\d:\d\d [rpfb] [^:]+: (.*)$"#
        let opened = t.wait("a message in the pane") { $0.split(separator: "\n").contains { $0.range(of: pattern, options: .regularExpression) != nil } }
        for line in opened.split(separator: "\n") where line.range(of: pattern, options: .regularExpression) != nil {
            let text = line.split(separator: ":", maxSplits: 2).last.map(String.init) ?? ""
            if let w = text.split(separator: " ").first(where: { $0.count >= 4 && $0.allSatisfy(\.isLetter) }) { word = String(w); break }
        }
        try #require(!word.isEmpty, "no conversation with a message")
        try t.keys("Escape", "/")
        t.wait(for: "search ")
        try t.type(word)
        try t.keys("Enter")
        let found = t.wait("the hit in the title") { $0.split(separator: "\n").first?.range(of: "“\(word)”: 1/\\d+ · n older", options: .regularExpression) != nil }
        #expect(found.contains(word))
        try t.keys("Escape", "/", "Tab")
        t.wait(for: "search all conversations>")
        try t.type(word)
        try t.keys("Enter")
        let all = t.wait("the list of hits") { $0.range(of: "search “\(word)”: \\d+ hits? in \\d+ conversations?", options: .regularExpression) != nil }
        #expect(all.contains("Enter opens"))
        // Nothing found says so, and offers no keys to move.
        try t.keys("Escape", "/", "Tab")
        t.wait(for: "search all conversations>")
        try t.type("zzqqxxnothing")
        try t.keys("Enter")
        let none = t.wait(for: "“zzqqxxnothing”: nothing found · Esc")
        #expect(!none.contains("0 hits"))
        try t.keys("Escape", "q")
        t.wait(for: "EXIT=0")
    }
}
