import Foundation
import Testing

/// Hostile text and hostile sizes against the real binary in tmux.
@Suite("End to end: escape injection and resize storms", .serialized, .timingSensitive)
struct HostileEndToEndTests {
    init() throws { try TmuxSession.requireReady() }

    func title(_ t: TmuxSession) throws -> String {
        try t.tmux(["display-message", "-p", "-t", t.name, "#{pane_title}"], output: true).trimmingCharacters(in: .newlines)
    }

    @Test("the check can fail: a raw OSC 0 written to this tmux does change the pane title")
    func canary() throws {
        let t = try TmuxSession(arguments: "--version")
        defer { t.close() }
        t.wait(for: "EXIT=0")
        try t.type("printf '\\033]0;CANARY\\007'")
        try t.keys("Enter")
        #expect(t.poll(seconds: 10) { _ in (try? self.title(t)) == "CANARY" })
    }

    @Test("Scenarios/hostile.scenario in tmux: the title stays, the screen is not cleared, no cursor report comes back, nothing outside the message pane moves")
    func hostileScenario() throws {
        let scenario = TmuxSession.packageRoot.appendingPathComponent("Scenarios/hostile.scenario").path
        // The title is set before the app starts (set after, under load it raced the app's
        // push of the title it found, and the title popped at exit was the one before).
        let t = try TmuxSession(arguments: "--ephemeral --scenario \(scenario) --speed 20", title: "ORIGINAL")
        defer { t.close() }
        t.wait(for: "Conversations")
        // Every line has landed once the script has run past its last message (1m20s ≈ 4 s
        // at x20) and the app is in the foreground again.
        let screen = t.wait("the script past its last hostile message", seconds: 60) { screen in
            screen.contains(" foreground │") && ["script settling", "script over", "script 2m", "script 3m", "script 4m", "script 5m"].contains { screen.contains($0) }
        }
        // The title is the app's own (its unread count) or the one it had: never message text.
        let during = try title(t)
        #expect(during == "ORIGINAL" || during.hasPrefix("synchat"), "\(during)")
        #expect(!during.contains("PWNED") && !during.contains("TITLE"))
        #expect(screen.contains("Conversations"))  // not cleared (ESC c, CSI 2J)
        #expect(screen.contains("^[]0;"))           // shown, visibly
        #expect(screen.range(of: #"\d+;\d+R"#, options: .regularExpression) == nil)  // no cursor report typed back
        let lines = screen.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLast(screen.hasSuffix("\n") ? 1 : 0)
        #expect(lines.count == 30)
        #expect(lines.first.map { $0.hasPrefix(" Conversations") && $0.hasSuffix("? help") } == true)
        #expect(lines.contains { $0.hasPrefix(" foreground │") })
        // The list's border stays in its column on every row of the pane.
        let border = try #require(lines[1].firstIndex(of: "│")).utf16Offset(in: lines[1])
        let paneBottom = try #require(lines.firstIndex { $0.hasPrefix("─ sync log") })
        for y in 1..<paneBottom {
            let chars = Array(lines[y])
            #expect(chars.count > border && chars[border] == "│", "row \(y): \(lines[y])")
        }
        // The hostile names are in the list, made visible.
        #expect(screen.contains("^[]0;NAME-TITLE^GMa"))  // the name, made visible (cut to the list width)
        #expect(screen.contains("<U+202E>txet.exe"))
        try t.keys("q")
        t.wait(for: "EXIT=0")
        let after = try title(t)  // popped where the terminal keeps a title stack; tmux keeps the app's
        #expect(after == "ORIGINAL" || after.hasPrefix("synchat"), "\(after)")
    }

    @Test("resize storm: 200 resizes between 20x5 and 300x100 while messages arrive; no crash, and the last screen is right")
    func resizeStorm() throws {
        let scratch = try TemporaryDirectory("storm")
        defer { scratch.remove() }
        let dir = scratch.path
        // A busy world: about 30 messages a second at x60.
        try "duration 2h\ncontacts 8\ntraffic 1800/h\nmode remote-push\n".write(toFile: dir + "/busy.scenario", atomically: true, encoding: .utf8)
        let t = try TmuxSession(arguments: "--ephemeral --seed 3 --speed 60 --scenario \(dir)/busy.scenario --log \(dir)/events.log")
        defer { t.close() }
        t.wait(for: "Conversations")
        func stored() -> Int {
            ((try? String(contentsOfFile: dir + "/events.log", encoding: .utf8)) ?? "").components(separatedBy: "\n").filter { $0.contains(") via ") }.count
        }
        let before = stored()
        let pid = try #require(try t.appPid())
        var sizes: [(Int, Int)] = [(20, 5), (300, 100), (59, 16), (60, 15), (60, 16), (21, 100), (300, 5)]
        var state: UInt64 = 0x5EED
        while sizes.count < 200 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            sizes.append((20 + Int((state >> 33) % 281), 5 + Int((state >> 17) % 96)))
        }
        for (w, h) in sizes {
            try t.resize(width: w, height: h)
            usleep(20_000)  // let a frame or so be drawn at this size
        }
        #expect(kill(pid, 0) == 0, "synchat died during the storm")
        #expect(stored() > before + 20, "messages kept arriving during the storm (\(before) → \(stored()))")
        // The last size of the storm, then a tiny one, then back to a normal one.
        try t.resize(width: 20, height: 5)
        t.wait(for: "terminal too small")
        try t.resize(width: 100, height: 30)
        let screen = t.wait("the full 100x30 layout") { screen in
            let lines = screen.split(separator: "\n", omittingEmptySubsequences: false).dropLast(screen.hasSuffix("\n") ? 1 : 0)
            return lines.count == 30 && lines.first?.hasSuffix("? help") == true && lines.first?.count == 99
                && lines.allSatisfy { $0.count <= 100 } && screen.contains(" foreground │") && screen.contains("sync log")
        }
        #expect(!screen.contains("terminal too small"))
        #expect(kill(pid, 0) == 0)
        // Still a working chat: a message typed now shows.
        try t.keys("Enter")
        try t.type("after the storm")
        try t.keys("Enter")
        t.wait(for: "you: after the storm")
        try t.keys("Escape")
        try t.keys("q")
        t.wait(for: "EXIT=0")
    }
}
