import Foundation
import Testing

/// In a real terminal: space pauses the world's clock, `.` steps it to the next
/// event of the log, and `i` shows the engine's inspector with the world's faults.
@Suite("End to end: pause, step and the inspector in tmux", .serialized, .timingSensitive)
struct TimeAndInspectorEndToEndTests {
    static let args = "--ephemeral --seed 1 --speed 60"

    init() throws { try TmuxSession.requireReady() }

    /// The status bar's clock, `08:04:15`.
    static func clock(_ screen: String) -> String? {
        guard let r = screen.range(of: #"d\d+ \d\d:\d\d:\d\d x"#, options: .regularExpression) else { return nil }
        return String(screen[r].dropFirst(screen[r].firstIndex(of: " ").map { screen[r].distance(from: screen[r].startIndex, to: $0) + 1 } ?? 0).prefix(8))
    }

    /// The time of the newest event `--log` wrote (`00:04:15.123 …`, virtual time since the
    /// world began, which the status bar shows from 08:00) as the status bar says it: every
    /// event the app lived through, message arrivals included.
    static func lastLogTime(_ file: String) -> String? {
        let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        guard let last = text.split(separator: "\n").last, let hours = Int(last.prefix(2)) else { return nil }
        let h = hours + 8
        return (h < 10 ? "0" : "") + "\(h)" + String(last.dropFirst(2).prefix(6))
    }

    @Test("space pauses (the clock stops and the bar says paused), . steps to the next log line's time, space resumes")
    func pauseAndStep() throws {
        let dir = try TemporaryDirectory("step")
        defer { dir.remove() }
        let log = dir.file("events.log")
        let t = try TmuxSession(width: 120, height: 36, arguments: Self.args + " --log \(log)")
        defer { t.close() }
        t.wait(for: "push: reliable", seconds: 60)
        try t.keys("Space")
        let paused = t.wait(for: "│ paused")
        let stopped = try #require(Self.clock(paused))
        // Paused: a real second and a half (90 simulated seconds at x60) moves nothing.
        #expect(!t.poll(seconds: 1.5) { Self.clock($0) != stopped })
        try t.keys(".")
        let stepped = t.wait("the clock to move to the next event") { Self.clock($0).map { $0 > stopped } ?? false }
        let at = try #require(Self.clock(stepped))
        // The clock stopped at the event the step ran to: the newest line of the event log.
        #expect(Self.lastLogTime(log) == at)
        #expect(stepped.contains("│ paused"))
        #expect(!t.poll(seconds: 1) { Self.clock($0) != at })
        try t.keys("Space")
        t.wait("the clock to run again") { !$0.contains("│ paused") && Self.clock($0).map { $0 > at } ?? false }
        try t.keys("q")
        t.wait(for: "EXIT=0")
    }

    @Test("truth beside belief: p puts truth: push drop 100% on the bar within a frame, counting, while the engine still says reliable; it goes when push is found unreliable")
    func truthSegment() throws {
        // x300: the three misses that make push unreliable come five times sooner than at x60.
        let t = try TmuxSession(width: 160, height: 36, arguments: "--ephemeral --seed 1 --speed 300")
        defer { t.close() }
        t.wait(for: "push: reliable", seconds: 60)
        try t.keys("p")
        // Within a frame: the key's frame draws it (not a later step of the world).
        #expect(t.poll(seconds: 0.5) { $0.contains("truth: push drop 100% for ") && $0.contains("push: reliable") })
        t.wait("the lag to count") { $0.range(of: #"truth: push drop 100% for (\d+m)?[1-9]\d*s"#, options: .regularExpression) != nil }
        let found = t.wait(for: "push: unreliable", seconds: 60)
        #expect(!found.contains("truth:"), "the segment outlived the belief: \(found)")
        // Past the threshold the bar counts on, as the log does.
        t.wait("the misses counted past 3/3") { $0.range(of: #"push: unreliable \d+ misses"#, options: .regularExpression) != nil }
        try t.keys("q")
        t.wait(for: "EXIT=0")
    }

    @Test("T shows the timeline strip of the last hour above the compose line, with the first catch-up's mark; T hides it")
    func timelineStrip() throws {
        let t = try TmuxSession(width: 120, height: 36, arguments: Self.args)
        defer { t.close() }
        t.wait(for: "push: reliable", seconds: 60)
        try t.keys("T")
        let shown = t.wait("the strip") { $0.contains("─ timeline: the last hour") && $0.contains("●") }
        let rows = shown.split(separator: "\n").map(String.init)
        let top = try #require(rows.firstIndex { $0.hasPrefix("─ timeline") })
        #expect(rows[top + 1].hasPrefix("    app ") && rows[top + 2].hasPrefix("   push ") && rows[top + 3].hasPrefix("  syncs ") && rows[top + 4].hasPrefix("    req "))
        #expect(rows[top + 2].contains("━"))  // push reliable
        try t.keys("T")
        t.wait("the strip gone") { !$0.contains("─ timeline") }
        try t.keys("q")
        t.wait(for: "EXIT=0")
    }

    @Test("i shows the inspector's six sections; an injected fault shows there and on the status bar; i closes it")
    func inspector() throws {
        let t = try TmuxSession(width: 120, height: 36, arguments: Self.args)
        defer { t.close() }
        t.wait(for: "push: reliable", seconds: 60)
        try t.keys("i")
        let shown = t.wait("the inspector") { $0.contains("── push ──") && $0.contains("── timers ──") }
        for title in ["── gate ──", "── cursors ──", "── faults ──", "── truth ──", "inspector — i closes", "state reliable, misses 0/3"] {
            #expect(shown.contains(title), "\(title)")
        }
        // The keepalive's timer in one of its two phases: at x60 a ping goes every half second
        // of wall time, and the screen may be caught waiting for its answer.
        #expect(shown.contains("keepalive   ping in") || shown.contains("keepalive   answer due in"), "\(shown)")
        try t.keys("x")
        let fault = t.wait("the fault in the inspector and the status bar") {
            $0.components(separatedBy: "indexer down").count - 1 >= 2 && $0.contains("fault: indexer down")
        }
        #expect(fault.contains("inspector — i closes"))
        try t.keys("x")
        t.wait("the fault gone") { !$0.contains("indexer down") || $0.contains("world: indexer up") }
        try t.keys("i")
        t.wait("the chat back") { !$0.contains("── push ──") && !$0.contains("inspector — i closes") }
        try t.keys("q")
        t.wait(for: "EXIT=0")
    }
}
