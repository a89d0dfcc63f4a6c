import Foundation
import Testing

/// The real `synchat` in tmux. Needs tmux (`.ci/run` installs it) and the built binary
/// (`swift build` first, or SYNCHAT_BIN).
@Suite("End to end: the TUI in tmux", .serialized, .timingSensitive)
struct TUIEndToEndTests {
    static let args = "--ephemeral --seed 1 --speed 60"

    init() throws { try TmuxSession.requireReady() }

    @Test("the first screen shows the conversations and 'foreground'")
    func firstScreen() throws {
        let t = try TmuxSession(arguments: Self.args)
        defer { t.close() }
        let screen = t.wait("the first screen") { $0.contains("Conversations") && $0.contains("foreground") }
        #expect(screen.contains("Alice"))
        #expect(screen.contains("push:"))
        try t.keys("q")
        t.wait(for: "EXIT=0")
    }

    @Test("a typed message shows, and then the contact's reply")
    func typeAndReply() throws {
        let t = try TmuxSession(arguments: Self.args)
        defer { t.close() }
        t.wait(for: "foreground")
        // Open the highlighted conversation and write.
        try t.keys("Enter")
        t.wait("the compose prompt") { $0.split(separator: "\n").contains { $0.hasPrefix("to ") && $0.hasSuffix(">") } }
        try t.type("hello from the e2e test")
        try t.keys("Enter")
        t.wait(for: "you: hello from the e2e test")
        let name = t.screen().split(separator: "\n").first.map(String.init) ?? ""
        let contact = name.split(separator: "│").last.map { $0.split(separator: " ").first.map(String.init) ?? "" } ?? ""
        #expect(!contact.isEmpty)
        t.wait("the reply from \(contact)", seconds: 30) { screen in
            // A line from the contact below ours.
            guard let mine = screen.range(of: "you: hello from the e2e test") else { return false }
            return screen[mine.upperBound...].contains("\(contact): ")
        }
        try t.keys("Escape")
        try t.keys("q")
        t.wait(for: "EXIT=0")
    }

    @Test("b shows 'background', f shows 'foreground'")
    func lifecycleKeys() throws {
        let t = try TmuxSession(arguments: Self.args)
        defer { t.close() }
        t.wait(for: " foreground │")
        try t.keys("b")
        t.wait(for: " background │")
        t.wait(for: "badge")
        try t.keys("f")
        t.wait(for: " foreground │")
        t.wait(for: "forced reconnect")
        try t.keys("q")
        t.wait(for: "EXIT=0")
    }

    @Test("p leads to 'push: unreliable' and a forced catch-up in the log")
    func pushFault() throws {
        // x600: three push graces run out in seconds of wall time, not twenty.
        let t = try TmuxSession(arguments: "--ephemeral --seed 1 --speed 600")
        defer { t.close() }
        t.wait(for: "push: reliable", seconds: 60)
        try t.keys("p")
        t.wait(for: "push: unreliable", seconds: 60)
        t.wait(for: "catch-up started (push-unreliable)")
        try t.keys("q")
        t.wait(for: "EXIT=0")
    }

    @Test("SIGTERM and Ctrl-C put the terminal back", arguments: ["term", "ctrl-c"])
    func signals(how: String) throws {
        let t = try TmuxSession(arguments: Self.args)
        defer { t.close() }
        t.wait(for: "Conversations")
        if how == "term" {
            let pid = try #require(try t.appPid())
            kill(pid, SIGTERM)
            let end = t.wait(for: "EXIT=143")
            #expect(!end.contains("Conversations"))
        } else {
            try t.keys("C-c")
            let end = t.wait(for: "EXIT=0")
            #expect(!end.contains("Conversations"))
        }
        // The shell works normally again: echo is on and lines end where they should.
        try t.type("echo still-here")
        try t.keys("Enter")
        t.wait("the shell to echo") { $0.split(separator: "\n").contains { $0 == "still-here" } }
    }

    @Test("a profile keeps the history and the learned push state across a relaunch")
    func profilePersists() throws {
        let scratch = try TemporaryDirectory("e2e-data")
        defer { scratch.remove() }
        let data = scratch.path
        let args = "--seed 1 --speed 60"
        do {
            let t = try TmuxSession(arguments: args, environment: ["XDG_DATA_HOME": data])
            defer { t.close() }
            t.wait(for: "push: reliable", seconds: 60)
            try t.keys("Enter")
            t.wait("the compose prompt") { $0.split(separator: "\n").contains { $0.hasPrefix("to ") && $0.hasSuffix(">") } }
            try t.type("kept across restarts")
            try t.keys("Enter")
            t.wait(for: "you: kept across restarts")
            try t.keys("Escape")
            try t.keys("q")
            t.wait(for: "EXIT=0")
        }
        #expect(FileManager.default.fileExists(atPath: data + "/synchat/default.sqlite"))
        // Speed 1 now: no new traffic re-sorts the list while we walk it.
        let t = try TmuxSession(arguments: "--seed 1 --speed 1", environment: ["XDG_DATA_HOME": data])
        defer { t.close() }
        let first = t.wait(for: "Conversations")
        #expect(first.contains("push: reliable"))  // learned before, not relearned
        t.wait(for: "launched: ")
        #expect(try t.openConversations(until: "you: kept across restarts"))
        try t.keys("q")
        t.wait(for: "EXIT=0")
    }

    @Test("a profile open in one synchat is refused to a second: one line naming it and the holder's pid, exit 1; free again once the first quits or is killed")
    func profileLock() throws {
        let scratch = try TemporaryDirectory("e2e-data")
        defer { scratch.remove() }
        let data = scratch.path
        let second = { try TmuxSession.spawn(["/usr/bin/env", "XDG_DATA_HOME=\(data)", TmuxSession.binary, "--profile", "shared"], captureOutput: true, captureErrors: true) }
        for ending in ["q", "SIGKILL"] {
            let t = try TmuxSession(arguments: "--profile shared --speed 1", environment: ["XDG_DATA_HOME": data])
            defer { t.close() }
            t.wait(for: "foreground")
            let holder = try #require(try t.appPid())
            let refused = try second()
            #expect(refused.status == 1)
            #expect(refused.err == "synchat: profile \"shared\" (\(data)/synchat/shared.sqlite) is in use by another synchat (pid \(holder)); quit it first, or use another --profile\n")
            #expect(refused.out.isEmpty)
            #expect(t.screen().contains("foreground"))  // the first one is untouched
            if ending == "q" {
                try t.keys("q")
                t.wait(for: "EXIT=0")
            } else {
                kill(holder, SIGKILL)
                t.wait(for: "EXIT=137")
            }
            // The profile opens again: past the lock, this process without a terminal stops at the TTY check.
            let after = try second()
            #expect(after.status == 1 && after.err.hasPrefix("synchat: not a terminal"), "after \(ending): \(after.err)")
        }
        let t = try TmuxSession(arguments: "--profile shared --speed 1", environment: ["XDG_DATA_HOME": data])
        defer { t.close() }
        t.wait(for: "foreground")
        try t.keys("q")
        t.wait(for: "EXIT=0")
    }

    @Test("a draft stays with its conversation: Enter, type, Esc, ↓, Enter, Enter sends nothing, and the draft is back on return")
    func draftStaysWithItsConversation() throws {
        // Speed 1: no traffic re-sorts the list while we walk it.
        let t = try TmuxSession(arguments: "--ephemeral --seed 1 --speed 1")
        defer { t.close() }
        t.wait(for: " foreground │")
        func prompt(_ screen: String) -> String? {
            screen.split(separator: "\n").map(String.init).first { $0.hasPrefix("to ") && $0.contains(">") }
        }
        try t.keys("Enter")
        let first = try #require(prompt(t.wait("the compose prompt") { prompt($0) != nil }))
        try t.type("secret for the first only")
        t.wait(for: "> secret for the first only")
        try t.keys("Escape")
        try t.keys("Down")
        try t.keys("Enter")
        let second = t.wait("another conversation's compose line") { screen in
            prompt(screen).map { $0 != first && !$0.contains("secret") } ?? false
        }
        #expect(!second.contains("you: secret"))
        try t.keys("Enter")  // its line is empty: nothing to send
        #expect(!t.poll(seconds: 1.5) { $0.contains("you: secret") }, "the first conversation's draft was sent to another")
        try t.keys("Escape")
        try t.keys("Up")
        try t.keys("Enter")
        t.wait("the first conversation's draft") { prompt($0)?.hasPrefix(first + " secret for the first only") == true }
        try t.keys("Escape")
        try t.keys("q")  // --ephemeral keeps nothing: the first q says the draft would be lost
        t.wait(for: "would be lost (nothing is kept): press q again to quit")
        try t.keys("q")
        t.wait(for: "EXIT=0")
    }

    @Test("text after a NUL is kept: shown as ^@ from a profile's SQLite store, and again after a relaunch")
    func nulKeptThroughTheStore() throws {
        let scratch = try TemporaryDirectory("e2e-nul")
        defer { scratch.remove() }
        let dir = scratch.path
        try #"""
            duration 1h
            contacts 3
            traffic 0/h
            at 1s receive alice "before\x00after"
            at 2s send alice "mine\x00tail"
            """#.write(toFile: dir + "/nul.scenario", atomically: true, encoding: .utf8)
        let environment = ["XDG_DATA_HOME": dir + "/data"]
        do {
            let t = try TmuxSession(arguments: "--seed 1 --speed 10 --scenario \(dir)/nul.scenario", environment: environment)
            defer { t.close() }
            t.wait(for: "world: send alice")  // both lines have been played
            try t.keys("Enter")  // Alice: the only conversation with activity, on top
            t.wait(for: "Alice: before^@after")
            t.wait(for: "you: mine^@tail")
            try t.keys("Escape")
            try t.keys("q")
            t.wait(for: "EXIT=0")
        }
        let t = try TmuxSession(arguments: "--seed 1 --speed 1", environment: environment)
        defer { t.close() }
        t.wait(for: "Conversations")
        try t.keys("Enter")
        t.wait(for: "Alice: before^@after")
        t.wait(for: "you: mine^@tail")
        try t.keys("Escape")
        try t.keys("q")
        t.wait(for: "EXIT=0")
    }

    @Test("resizing redraws the layout for the new size; too small says so; q exits 0 back to the shell")
    func resizeAndQuit() throws {
        let t = try TmuxSession(arguments: Self.args)
        defer { t.close() }
        t.wait(for: "Conversations")
        try t.resize(width: 70, height: 20)
        t.wait("a 70-column layout") { screen in
            // capture-pane trims trailing blanks: the title ends in "? help" one column short of 70.
            let lines = screen.split(separator: "\n", omittingEmptySubsequences: false)
            return lines.first?.hasSuffix("? help") == true && lines.first?.count == 69
                && lines.allSatisfy { $0.count <= 70 } && screen.contains(" foreground │")
        }
        try t.resize(width: 50, height: 10)
        t.wait(for: "synchat needs 60x16; terminal too small (50x10)")
        try t.resize(width: 100, height: 30)
        t.wait("the full layout again") { $0.contains("Conversations") && $0.contains("sync log") }
        try t.keys("q")
        let end = t.wait(for: "EXIT=0")
        #expect(!end.contains("Conversations"))  // the screen is the shell's again
        // The shell's prompt is back (capture-pane trims its trailing space; a resize may
        // have reflowed the first prompt off the screen, so any prompt line will do).
        #expect(end.split(separator: "\n").contains { $0.hasPrefix("$") })
    }
}
