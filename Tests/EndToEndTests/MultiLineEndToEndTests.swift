import Foundation
import Testing

/// Lines within a message on the real screen: a received message's lines, a bracketed paste
/// as tmux's `paste-buffer -p` sends it (as any modern terminal does), Ctrl-J and Alt-Enter,
/// the 16 KiB limit on a paste, and the terminal's paste mode given back at exit.
@Suite("End to end: multi-line messages", .serialized, .timingSensitive)
struct MultiLineEndToEndTests {
    init() throws { try TmuxSession.requireReady() }

    /// The column where `text` starts on the row that has it.
    func column(of text: String, in screen: String) -> Int? {
        for row in screen.split(separator: "\n", omittingEmptySubsequences: false) {
            if let r = row.range(of: text) { return row.distance(from: row.startIndex, to: r.lowerBound) }
        }
        return nil
    }

    @Test("received lines start rows under the body; a paste stays in the compose line until Enter; Ctrl-J, Alt-Enter; the limit; paste mode off at exit")
    func multiLine() throws {
        let dir = try TemporaryDirectory("multiline")
        defer { dir.remove() }
        try """
        seed 3
        duration 30m
        contacts 2
        at 5s receive alice "line one\\nline two\\x0D\\nline three"

        """.write(toFile: dir.file("ml.scenario"), atomically: true, encoding: .utf8)
        let t = try TmuxSession(width: 100, height: 30, arguments: "--ephemeral --speed 10 --scenario \(dir.file("ml.scenario"))")
        defer { t.close() }
        t.wait(for: "Conversations")
        t.wait(for: "Alice")
        try t.keys("Enter")
        let received = t.wait(for: "Alice: line one")
        let body = try #require(column(of: "line one", in: received))
        #expect(column(of: "line two", in: received) == body)
        #expect(column(of: "line three", in: received) == body)
        let row = try #require(received.split(separator: "\n").first { $0.contains("Alice: line one") })
        #expect(!row.contains("^J") && !row.contains("^M"), "the pane's row: \(row)")

        // A paste of two lines: one edit, nothing sent.
        try t.tmux(["set-buffer", "-b", "ml", "pasted one\npasted two"])
        try t.tmux(["paste-buffer", "-p", "-b", "ml", "-t", t.name])
        t.wait(for: "to Alice> pasted one⏎pasted two")
        #expect(!t.poll(seconds: 1.5) { $0.contains("you: pasted one") }, "a line of the paste was sent")
        // By hand: Ctrl-J, then Alt-Enter (Esc and Enter in one write).
        try t.keys("C-j")
        try t.type("by hand")
        try t.keys("Escape", "Enter")
        t.wait(for: "pasted one⏎pasted two⏎by hand⏎")
        try t.keys("Enter")
        // The sent rows, once the compose line is empty too: a screen caught between the two
        // still holds the message's lines in the compose line, at other columns.
        let sent = t.wait("the message sent and the compose line emptied") { $0.contains("you: pasted one") && !$0.contains("to Alice> pasted") }
        let sentBody = try #require(column(of: "pasted one", in: sent))
        #expect(column(of: "pasted two", in: sent) == sentBody)
        #expect(column(of: "by hand", in: sent) == sentBody)

        // 200 lines of 100 bytes pasted: the 16 KiB limit holds, and says so.
        let lines = Array(repeating: String(repeating: "y", count: 99), count: 200).joined(separator: "\n")
        try lines.write(toFile: dir.file("big.txt"), atomically: true, encoding: .utf8)  // past what a tmux command carries
        try t.tmux(["load-buffer", "-b", "big", dir.file("big.txt")])
        try t.tmux(["paste-buffer", "-p", "-b", "big", "-t", t.name])
        t.wait(for: "message limit: 16 KiB (16384 bytes); nothing more is added")
        #expect(!t.poll(seconds: 1) { $0.contains("you: yyyy") }, "a line of the paste was sent")

        // Out: the unsent line is said (ephemeral), the second q quits.
        try t.keys("Escape", "q")
        try t.keys("q")
        t.wait(for: "EXIT=0")
        // The shell gets a paste as it is: synchat switched the terminal's paste mode off.
        try t.type("cat -v")
        try t.keys("Enter")
        try t.tmux(["set-buffer", "-b", "after", "zz"])
        try t.tmux(["paste-buffer", "-p", "-b", "after", "-t", t.name])
        try t.keys("Enter")
        let shell = t.wait(for: "zz")
        #expect(!shell.contains("[200~"), "bracketed paste left on:\n\(shell)")
        try t.keys("C-d")
    }

    @Test("a paste that holds the paste's own end marker stays text: what follows ESC [201~ in the same write is pasted too, never keys (ESC p faulted push, q q quit)", .timeLimit(.minutes(1)))
    func pasteCannotEndItself() throws {
        let t = try TmuxSession(width: 120, height: 30, arguments: "--ephemeral --speed 10")
        defer { t.close() }
        t.wait(for: "Conversations")
        t.wait(for: "Alice")
        try t.keys("Enter")
        try t.keys("Tab")
        t.wait(for: "to Alice>")
        try t.tmux(["set-buffer", "-b", "evil", "hi\u{1B}[201~\u{1B}p q q\u{1B}[200~ rest"])
        try t.tmux(["paste-buffer", "-p", "-b", "evil", "-t", t.name])
        let screen = t.wait(for: "to Alice> hi^[p q q rest")
        let status = screen.split(separator: "\n").suffix(2).joined(separator: "\n")
        #expect(!status.contains("push drop") && !screen.contains("EXIT="), "the paste acted as keys:\n\(screen)")
        try t.keys("Escape", "q", "q")  // the second q: quit with the unsent line (--ephemeral keeps none)
        t.wait(for: "EXIT=0")
    }

    @Test("a paste with a byte that is not UTF-8 keeps all of it, the byte as U+FFFD, and says so; nothing of it acts as keys or is sent", .timeLimit(.minutes(1)))
    func pasteNotUTF8() throws {
        let dir = try TemporaryDirectory("paste-bytes")
        defer { dir.remove() }
        _ = FileManager.default.createFile(atPath: dir.file("bad"), contents: Data([0x61, 0x62, 0xFF, 0x63, 0x64, 0x20, 0x71, 0x20, 0x71]))
        let t = try TmuxSession(width: 120, height: 30, arguments: "--ephemeral --speed 10")
        defer { t.close() }
        t.wait(for: "Alice")
        try t.keys("Enter")
        try t.keys("Tab")
        t.wait(for: "to Alice>")
        try t.tmux(["load-buffer", "-b", "bad", dir.file("bad")])
        try t.tmux(["paste-buffer", "-p", "-b", "bad", "-t", t.name])
        let screen = t.wait(for: "the paste held a byte that is not UTF-8, each kept as \u{FFFD}")
        #expect(screen.contains("to Alice> ab\u{FFFD}cd q q") && !screen.contains("EXIT="), "what came after the bad byte is kept: \(screen)")
        try t.keys("Escape", "q", "q")
        t.wait(for: "EXIT=0")
    }
}
