import ChatUI
import Foundation
import Testing
import WidthCorpus

/// asciinema (PyPI), the judge of a cast nobody here wrote: `asciinema cat` reads it back.
enum Asciinema {
    static var path: String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(dir)/asciinema") {
            return "\(dir)/asciinema"
        }
        return nil
    }

    static var available: Bool { path != nil }

    /// What `asciinema cat FILE` prints, escape sequences and all.
    static func cat(_ file: String) throws -> (status: Int32, out: String) {
        let r = try TmuxSession.spawn([path!, "cat", file], captureOutput: true, captureErrors: true)
        return (r.status, r.out)
    }

    /// `text` without its CSI sequences and other escapes: the characters it prints.
    static func printed(_ text: String) -> String {
        text.replacingOccurrences(of: #"\x{1B}\[[0-9;?]*[ -/]*[@-~]|\x{1B}\][^\x{07}]*\x{07}|\x{1B}[()][0-9A-Za-z]|\x{1B}[=>]|\x{0F}"#, with: "", options: .regularExpression)
    }
}

/// `synchat --cast` and `synchat simulate --cast`: asciicast v2 files, judged by asciinema.
@Suite("End to end: casts for asciinema's player", .serialized, .timingSensitive)
struct CastEndToEndTests {
    init() throws { try TmuxSession.requireReady() }

    static func header(_ file: String) throws -> [String: Any] {
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let first = String(text.prefix { $0 != "\n" })
        return try #require(try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any])
    }

    @Test("simulate --cast: the demo at x120 with no terminal; the header says 100x30 and emoji safe, asciinema reads it back, and its text holds the status bar and the run's log lines",
          .enabled(if: Asciinema.available, "asciinema is not installed: python3 -m pip install asciinema"), .timeLimit(.minutes(1)))
    func simulateCast() throws {
        let dir = try TemporaryDirectory("cast-sim")
        defer { dir.remove() }
        let scenario = TmuxSession.packageRoot.appendingPathComponent("Scenarios/demo.scenario").path
        let cast = dir.file("demo.cast")
        let made = try runSynchat(["simulate", "--scenario", scenario, "--cast", cast, "--size", "100x30", "--speed", "120"])
        #expect(made.status == 0 && made.err.isEmpty, "\(made.err)")
        let header = try Self.header(cast)
        #expect(header["version"] as? Int == 2 && header["width"] as? Int == 100 && header["height"] as? Int == 30)
        #expect((header["env"] as? [String: String])?["SYNCHAT_EMOJI"] == "safe")
        let (status, out) = try Asciinema.cat(cast)
        #expect(status == 0)
        let text = Asciinema.printed(out)
        for word in [" foreground │ live │ push: reliable 0/3 │ token active", "push: unreliable", "remote-push", "x120", "script settling"] {
            #expect(text.contains(word), "the cast's text lacks \(word)")
        }
        // Each decision of the run, as the sync log shows it (the world's time of day, then
        // the line), where it fits one row: all but message arrivals (the log's `everything`
        // view), observation hits (the log folds a run of them into one line: `hit ×7 since`),
        // and those of the launch, more than its rows before the first frame.
        let events = try runSynchat(["simulate", "--scenario", scenario, "--events"]).out.split(separator: "\n")
            .filter { !$0.hasPrefix("00:00:00.") && !$0.dropFirst(13).hasPrefix("message ") && !$0.dropFirst(13).hasPrefix("observation hit ") }
        #expect(text.contains("observation hit ×"))
        var missing: [String] = []
        for line in events {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[1].count <= 100 - 9, let (h, m, s) = Self.clock(parts[0]) else { continue }
            // An instant inside the line is on the world's clock too (the day starts at 08:00).
            let body = String(parts[1]).replacing(/(\d\d):(\d\d):(\d\d)\.(\d\d\d)/) { t in
                String(format: "%02d:%@:%@.%@", (Int(t.output.1)! + 8) % 24, String(t.output.2), String(t.output.3), String(t.output.4))
            }
            let shown = String(format: "%02d:%02d:%02d ", 8 + h, m, s) + body
            if !text.contains(shown) { missing.append(shown) }
        }
        #expect(events.count > 30 && missing.count <= events.count / 20, "\(missing.count) of \(events.count) log lines never shown: \(missing.prefix(5))")
        // The same scenario gives the same cast, byte for byte.
        let again = dir.file("again.cast")
        _ = try runSynchat(["simulate", "--scenario", scenario, "--cast", again, "--size", "100x30", "--speed", "120"])
        #expect(FileManager.default.contentsEqual(atPath: cast, andPath: again))
        // The cast lasts the story: the scenario's 15 min and 30 s of its 15-minute settle, at
        // x120: 7.75 s (not the settle's quiet 15 min, which were half of it).
        let lastLine = try String(contentsOfFile: cast, encoding: .utf8).split(separator: "\n").last.map(String.init) ?? ""
        let seconds = Double(lastLine.dropFirst().prefix { $0 != "," }) ?? 0
        #expect(abs(seconds - 7.75) < 0.2, "\(seconds)")
    }

    /// `HH:MM:SS.mmm` since the start: hours, minutes, seconds.
    static func clock(_ s: Substring) -> (Int, Int, Int)? {
        let p = s.split(separator: ":")
        guard p.count == 3, let h = Int(p[0]), let m = Int(p[1]), let sec = Double(p[2]) else { return nil }
        return (h, m, Int(sec))
    }

    @Test("the frames of a cast are what a terminal needs: played in tmux, they leave the grid's text, emoji drawn whole at tmux's widths included", .timeLimit(.minutes(1)))
    func framesInATerminal() throws {
        let dir = try TemporaryDirectory("cast-frames")
        defer { dir.remove() }
        let tmuxWidths = EmojiWidths.measured(EmojiAdvances(flag: 2, modifier: 2, joined: true, presentation: 1, keycap: 1, tag: 2))
        var a = Grid(width: 80, height: 6, emoji: tmuxWidths)
        a.put("family 👨\u{200D}👩\u{200D}👧 flag 🇩🇪 thumb 👍🏽 end", x: 0, y: 0, role: .messageIncoming)
        a.put("क्षि conjunct, then", x: 2, y: 2, role: .listUnread)
        a.put("bottom right", x: 68, y: 5, role: .statusBar)
        var b = a
        b.put("changed: ❤\u{FE0F} 🏳\u{FE0F}\u{200D}🌈 x", x: 0, y: 3, role: .warning)
        b.put("X", x: 79, y: 5, role: .statusBar)
        // Colours as a 256-colour terminal's (what the cast's roles use does not change the text).
        var screen = ANSIScreen(sgr: Dictionary(uniqueKeysWithValues: Role.allCases.enumerated().map { ($0.element, "\u{1B}[0;38;5;\($0.offset + 1)m") }))
        try (screen.frame(a) + screen.frame(b)).write(toFile: dir.file("frames"), atomically: true, encoding: .utf8)
        let tmux = Tmux(tag: "frames")
        defer { tmux.close() }
        try tmux.start(width: 80, height: 6, argv: ["sh", "-c", "cat \(dir.file("frames")); sleep 60"])
        #expect(Tmux.poll(seconds: 10) { tmux.capture().contains("changed:") })
        let shown = tmux.capture().split(separator: "\n", omittingEmptySubsequences: false).prefix(6).map { line -> String in
            var l = Substring(line)
            while l.last == " " { l = l.dropLast() }
            return String(l)
        }
        #expect(shown == b.text, "\(shown)\n\(b.text)")
    }

    @Test("synchat --cast in tmux: the session recorded as the terminal received it, with safe widths unless told, a resize, the exit code; asciinema reads it back and its text holds the screen's words",
          .enabled(if: Asciinema.available, "asciinema is not installed: python3 -m pip install asciinema"), .timeLimit(.minutes(1)))
    func liveCast() throws {
        let dir = try TemporaryDirectory("cast-live")
        defer { dir.remove() }
        let cast = dir.file("live.cast")
        let t = try TmuxSession(width: 100, height: 30, arguments: "--ephemeral --speed 60 --cast \(cast)")
        defer { t.close() }
        t.wait(for: "token active")
        try t.resize(width: 90, height: 28)
        t.wait("redrawn at 90 columns") { $0.split(separator: "\n").first.map { $0.hasSuffix("? help") && $0.count < 95 } ?? false }
        try t.keys("q")
        t.wait(for: "EXIT=0")
        let header = try Self.header(cast)
        #expect(header["width"] as? Int == 100 && header["height"] as? Int == 30 && header["timestamp"] is Int)
        #expect((header["env"] as? [String: String])?["SYNCHAT_EMOJI"] == "safe")
        #expect((header["title"] as? String) == "synchat: emoji split into what every terminal draws alike (safe)")  // no brackets in brackets
        let lines = try String(contentsOfFile: cast, encoding: .utf8).split(separator: "\n")
        #expect(lines.contains { $0.contains(#", "r", "90x28"]"#) })
        let (status, out) = try Asciinema.cat(cast)
        #expect(status == 0)
        let text = Asciinema.printed(out)
        for word in [" Conversations", "foreground", "push: ", "token active", "? help"] { #expect(text.contains(word), "lacks \(word)") }
        // What the terminal got: the screen's own escapes, the alternate screen entered and left.
        #expect(out.contains("\u{1B}[?1049h") && out.contains("\u{1B}[?1049l"))
    }

    @Test("synchat --cast puts the terminal back whatever the chat does: stopped (kill -TSTP) the shell gets its screen, cooked, and at fg the chat is drawn whole and takes keys; killed in the alternate screen with the mouse on, nothing is left set",
          .timeLimit(.minutes(1)))
    func castRestoresTheTerminal() throws {
        let dir = try TemporaryDirectory("cast-restore")
        defer { dir.remove() }
        let t = try TmuxSession(width: 100, height: 30, arguments: "--ephemeral --cast \(dir.file("r.cast"))")
        defer { t.close() }
        t.wait(for: "? help")
        func flags() throws -> String {
            try t.tmux(["display-message", "-p", "-t", t.name, "alt=#{alternate_on} mouse=#{mouse_any_flag} cursor=#{cursor_flag} keypad=#{keypad_cursor_flag}"],
                       output: true).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let chat = "alt=1 mouse=1 cursor=0 keypad=1", shell = "alt=0 mouse=0 cursor=1 keypad=0"
        #expect(try flags() == chat)
        let recorder = try #require(try t.appPid())
        kill(recorder, SIGTSTP)
        t.wait(for: "Stopped")
        #expect(try flags() == shell)
        try t.type("stty -a | grep -o -- ' -*icanon'")
        try t.keys("Enter")
        t.wait(for: " icanon")  // the shell's terminal is cooked (canonical), not the chat's raw
        try t.type("fg")
        try t.keys("Enter")
        t.wait("the chat drawn whole again") { $0.contains("Conversations") && $0.contains("? help") && !$0.contains("Stopped") }
        #expect(try flags() == chat)
        try t.keys("?")
        t.wait(for: "send the app to the background")
        let child = try #require(TmuxSession.run(["pgrep", "-P", "\(recorder)"], output: true).split(separator: "\n").first.flatMap { pid_t($0) })
        kill(child, SIGKILL)
        // (The shell ran the line's `echo EXIT` when the job stopped: the recorder's end is its process's.)
        #expect(t.poll(seconds: 30) { _ in kill(recorder, 0) != 0 }, "the recorder ends with its chat")
        #expect(try flags() == shell, "the alternate screen left, the mouse off, the cursor shown, the keypad normal")
    }
}
