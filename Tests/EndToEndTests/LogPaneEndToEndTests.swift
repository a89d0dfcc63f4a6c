import Foundation
import Testing

/// In a real terminal: the sync log takes focus, scrolls back and says so, End
/// follows again, and L shows everything, message arrivals with their channel included.
@Suite("End to end: the sync log pane in tmux", .serialized, .timingSensitive)
struct LogPaneEndToEndTests {
    init() throws { try TmuxSession.requireReady() }

    @Test("Tab to the log, PgUp: scrolled back; End: following; L: a 'message … via …' line shows")
    func focusScrollFilter() throws {
        let t = try TmuxSession(width: 120, height: 36, arguments: "--ephemeral --seed 1 --speed 120")
        defer { t.close() }
        // Enough history to scroll: a few backgrounds and foregrounds.
        t.wait(for: "push: reliable", seconds: 60)
        for _ in 0..<3 {
            try t.keys("b")
            t.wait(for: " background │")
            try t.keys("f")
            t.wait(for: " foreground │")
        }
        try t.keys("Tab", "Tab")  // messages, then (no conversation open) the log
        t.wait(for: "─ sync log · decisions (L) · ↑↓ PgUp PgDn End")
        try t.keys("PPage")
        t.wait(for: "scrolled back")
        try t.keys("End")
        t.wait("following again") { !$0.contains("scrolled back") }
        try t.keys("L")
        let all = t.wait("a message arrival in the log") { screen in
            screen.contains("─ sync log · everything (L)") && screen.range(of: #"message [0-9a-f]{8} from \w+ \(contextual\) via (realtime|push|fetch|background)"#, options: .regularExpression) != nil
        }
        #expect(all.contains("everything"))
        try t.keys("q")
        t.wait(for: "EXIT=0")
    }
}
