import ChatUI
import SyncCore
import SyncEngine
import Testing

/// A log people can read — focusable and scrollable, wrapped not cut, filtered
/// between decisions and everything, repeated observation hits folded.
@Suite("Sync log pane")
struct LogPaneTests {
    static func decision(_ time: String, _ text: String) -> ViewInput { .log(LogEntry(time: time, text: text, kind: .decision)) }
    static func arrival(_ time: String, _ text: String) -> ViewInput { .log(LogEntry(time: time, text: text, kind: .arrival)) }
    static func hit(_ time: String, _ tx: String, _ seconds: Int64, via: EvidenceChannel = .realtime) -> ViewInput {
        .log(LogEntry(time: time, text: "observation hit \(tx.prefix(8)) (\(via.rawValue)): push \(seconds)s after realtime",
                      kind: .hit(txId: tx, pushOffset: .seconds(seconds), via: via)))
    }

    func logState() -> ViewState {
        var s = sampleState()
        _ = ViewModel.reduce(&s, .key(.escape))
        s.log = []
        return s
    }

    func logRows(_ s: ViewState, width: Int = 120, height: Int = 36) -> [String] {
        let t = Render.screen(s, width: width, height: height).text
        guard let top = t.firstIndex(where: { $0.hasPrefix("─ sync log") }) else { return [] }
        return Array(t[(top + 1)...].prefix { !$0.hasPrefix("  select") && !$0.hasPrefix("to ") && !$0.hasPrefix(" foreground") })
            .filter { !$0.isEmpty }
    }

    @Test("Tab reaches the log after the compose line; there ↑↓ and PgUp/PgDn scroll it, End follows again, Tab leaves")
    func focusAndScroll() {
        var s = logState()
        for i in 0..<100 { _ = ViewModel.reduce(&s, Self.decision("08:00:\(i % 60)", "decision \(i)")) }
        let store = TestStore(s)
        store.send(.key(.tab)) { $0.focus = .messages }
        store.send(.key(.tab)) { $0.focus = .compose }  // a conversation is open
        store.send(.key(.tab)) { $0.focus = .log }
        store.send(.key(.pageUp)) {
            $0.logScroll = 10
            $0.logFrozenAt = $0.logCount
        }
        store.send(.key(.up)) { $0.logScroll = 11 }
        store.send(.key(.down)) { $0.logScroll = 10 }
        store.send(.key(.end)) {
            $0.logScroll = 0
            $0.logFrozenAt = nil
        }
        store.send(.key(.tab)) { $0.focus = .list }
        // The messages are not scrolled by the log's keys: no send above changed `scroll`.
    }

    @Test("scrolled back, new lines do not move the view; the title counts them; End shows them")
    func frozenWhileScrolled() {
        var s = logState()
        for i in 0..<60 { _ = ViewModel.reduce(&s, Self.decision("08:00:00", "line \(i)")) }
        s.focus = .log
        let store = TestStore(s)
        store.send(.key(.pageUp)) {
            $0.logScroll = 10
            $0.logFrozenAt = $0.logCount
        }
        let before = logRows(store.state)
        for i in 60..<65 {
            let line = Self.decision("08:00:01", "line \(i)")
            store.send(line) {
                if case .log(let entry) = line { $0.log.append(entry) }
                $0.logCount += 1
            }
        }
        #expect(logRows(store.state) == before)
        let title = Render.screen(store.state, width: 120, height: 36).text.first { $0.hasPrefix("─ sync log") } ?? ""
        #expect(title.contains("scrolled back, 5 new below (End)"))
        store.send(.key(.end)) {
            $0.logScroll = 0
            $0.logFrozenAt = nil
        }
        #expect(logRows(store.state).last == "08:00:01 line 64")
    }

    @Test("a long line wraps by display width under its text: the end of 'next allowed in …' is on screen at 60 and 120 columns")
    func wraps() {
        let line = "catch-up skipped (app-active): push reliable, last catch-up 6m07s ago, next allowed in 3m52s, and 漢字 wide text too"
        for width in [60, 120] {
            var s = logState()
            _ = ViewModel.reduce(&s, Self.decision("08:06:08", line))
            let rows = logRows(s, width: width, height: 30)
            #expect(rows.first?.hasPrefix("08:06:08 catch-up skipped") == true, "\(width)")
            #expect(rows.joined().contains("3m52s"), "\(width): \(rows)")
            #expect(rows.last?.hasSuffix("text too") == true, "\(width): \(rows)")
            for r in rows.dropFirst() { #expect(r.hasPrefix("         "), "continuation indented under the text: \(r)") }
        }
    }

    @Test("the filter: decisions hides message arrivals, everything shows them; L toggles and the title says which")
    func filter() {
        var s = logState()
        _ = ViewModel.reduce(&s, Self.decision("08:00:01", "realtime live: subscribed"))
        _ = ViewModel.reduce(&s, Self.arrival("08:00:02", "message 7c12d26f from alice (contextual) via push"))
        #expect(logRows(s) == ["08:00:01 realtime live: subscribed"])
        let store = TestStore(s)
        store.send(.key(.char("L"))) { $0.logFilter = .all }
        #expect(logRows(store.state) == ["08:00:01 realtime live: subscribed", "08:00:02 message 7c12d26f from alice (contextual) via push"])
        #expect(Render.screen(store.state, width: 120, height: 36).text.contains { $0.hasPrefix("─ sync log · everything (L)") })
        store.send(.key(.char("L"))) { $0.logFilter = .decisions }
    }

    @Test("consecutive hits fold into one line with their count, span and channels; a miss or a decision breaks the run; arrivals break it only in everything")
    func folding() {
        var s = logState()
        _ = ViewModel.reduce(&s, Self.hit("08:01:00", "aaaaaaaa11", 1))
        _ = ViewModel.reduce(&s, Self.arrival("08:01:00", "message aaaaaaaa from alice (contextual) via realtime"))
        _ = ViewModel.reduce(&s, Self.hit("08:02:00", "bbbbbbbb22", 3))
        _ = ViewModel.reduce(&s, Self.hit("08:03:00", "cccccccc33", 2, via: .fetch))
        _ = ViewModel.reduce(&s, Self.decision("08:03:30", "observation miss dddddddd (realtime): no push within grace, misses 1/3"))
        _ = ViewModel.reduce(&s, Self.hit("08:04:00", "eeeeeeee44", 2))
        #expect(logRows(s) == [
            "08:03:00 observation hit ×3 since 08:01:00 (fetch, realtime): push 1s–3s after the tx, last cccccccc",
            "08:03:30 observation miss dddddddd (realtime): no push within grace, misses 1/3",
            "08:04:00 observation hit eeeeeeee (realtime): push 2s after realtime",
        ])
        _ = ViewModel.reduce(&s, .key(.char("L")))  // everything: the arrival between the first two
        #expect(logRows(s).first == "08:01:00 observation hit aaaaaaaa (realtime): push 1s after realtime")
        #expect(logRows(s)[2] == "08:03:00 observation hit ×2 since 08:02:00 (fetch, realtime): push 2s–3s after the tx, last cccccccc")
    }

    @Test("l hides the log and gives the keys back to the list")
    func hideWhileFocused() {
        var s = logState()
        s.focus = .log
        let store = TestStore(s)
        store.send(.key(.char("l"))) {
            $0.showLog = false
            $0.focus = .list
        }
    }
}

@Suite("Warnings at start")
struct StartNoticesTests {
    @Test("two bad lines of a keys file: the compose line counts both and shows both, not the last alone")
    func several() throws {
        let warnings = ["keys: keys.toml:3: unknown action \"fly\"; ignored", "keys: keys.toml:7: \"ctrl-h\" is Backspace; ignored"]
        #expect(Notices.atStart([]) == nil)
        #expect(Notices.atStart([warnings[0]]) == warnings[0])
        var s = sampleState()
        _ = ViewModel.reduce(&s, .notice(try #require(Notices.atStart(warnings))))
        let rows = Render.screen(s, width: 200, height: 24).text
        let row = rows[19] + rows[20]  // the notice's two rows, above the compose line
        #expect(row.contains("2 warnings, each in the log (l): keys: keys.toml:3:") && row.contains("keys: keys.toml:7:"), "\(row)")
    }
    @Test("the app's own lines (what the terminal was found to draw) carry the clock's time like the engine's: wrapped and scrolled half out of the pane, every row starts with a time or is indented under one")
    func noticesHaveTheClock() {
        var s = LogPaneTests().logState()
        s.status.clock = at(125)
        _ = ViewModel.reduce(&s, .logLine("terminal: measured in 80 ms: " + String(repeating: "flag 2, skin tone +2, ", count: 12)))
        #expect(s.log.last?.time == "08:02:05")
        for i in 0..<40 {
            let rows = LogPaneTests().logRows(s, width: 80, height: 24)
            #expect(!rows.isEmpty)
            for row in rows {
                let timed = row.range(of: #"^\d\d:\d\d:\d\d "#, options: .regularExpression) != nil
                #expect(timed || row.hasPrefix("         "), "row \(row) after \(i) more lines")
            }
            _ = ViewModel.reduce(&s, LogPaneTests.decision("08:02:05", "decision \(i)"))
        }
    }
}

@Suite("Long text in the log")
struct LongLogLineTests {
    @Test("a 16 KiB message's banner is one log line, cut like a directive's text, with its size: the pane shows other lines beside it")
    func bannerIsCut() {
        let body = String(repeating: "x", count: 16_384)
        let banner = SyncEvent.banner(Banner(conversation: alice, title: "Alice", body: body), badge: 1)
        #expect(banner.line == "banner [Alice] \(String(repeating: "x", count: 60))… (16384 bytes) (badge 1)")
        var s = sampleState()
        s.showLog = true
        for input in ViewInput.from(TimedEvent(at: at(300), event: banner)) { _ = ViewModel.reduce(&s, input) }
        let rows = Render.screen(s, width: 100, height: 24).text
        #expect(rows.filter { $0.contains("xxxxxxxxxx") }.count <= 1)
        #expect(rows.contains { $0.contains("catch-up skipped (app-active)") }, "the line before it is still in the pane")
    }
}
