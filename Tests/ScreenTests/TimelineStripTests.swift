import ClientRuntime
import ChatUI
import SyncCore
import SyncEngine
import Testing

/// In the TUI: the strip of the last hour (`T`), kept by the reducer from the
/// typed events, drawn in cells.
@Suite("Timeline strip")
struct TimelineStripTests {
    /// An hour: foreground, 10 minutes in the background from 0:20, push unreliable from 0:30
    /// to 0:40 during a `push drop 100%` from 0:25 to 0:40; catch-ups at 0:01, 0:30 (forced,
    /// full), a skip at 0:31, a targeted one at 0:50.
    func hour() -> ViewState {
        var s = sampleState()
        func clock(_ minutes: Int64) { _ = ViewModel.reduce(&s, .clock(at(minutes * 60), speed: 30)) }
        func status(_ l: Lifecycle, _ p: PushState) {
            var st = s.status.engine
            st.lifecycle = l
            st.push = p
            _ = ViewModel.reduce(&s, .engineStatus(st))
        }
        clock(0); status(.foreground, .reliable)
        for e in [TimedEvent(at: at(60), event: .catchUpStarted(trigger: .appActive, kind: .full, forced: false, objects: 9)),
                  TimedEvent(at: at(64), event: .catchUpFinished(trigger: .appActive, kind: .full, stored: 0, requests: 9, failed: 0, took: .seconds(4), stoppedBy: nil))] {
            for input in ViewInput.from(e) { _ = ViewModel.reduce(&s, input) }
        }
        clock(20); status(.background, .reliable)
        clock(25); _ = ViewModel.reduce(&s, .truth(WorldTruth(faults: WorldFaults(push: .init(dropPercent: 100)))))
        clock(30); status(.foreground, .unreliable)
        for e in [TimedEvent(at: at(1800), event: .catchUpStarted(trigger: .pushUnreliable, kind: .full, forced: true, objects: 9)),
                  TimedEvent(at: at(1803), event: .catchUpFinished(trigger: .pushUnreliable, kind: .full, stored: 2, requests: 9, failed: 0, took: .seconds(3), stoppedBy: nil)),
                  TimedEvent(at: at(1860), event: .catchUpSkipped(trigger: .appActive, lastAgo: .minutes(1), nextAllowedIn: .minutes(9)))] {
            for input in ViewInput.from(e) { _ = ViewModel.reduce(&s, input) }
        }
        clock(40); status(.foreground, .reliable); _ = ViewModel.reduce(&s, .truth(WorldTruth()))
        for e in [TimedEvent(at: at(3000), event: .catchUpStarted(trigger: .trailing, kind: .targeted, forced: false, objects: 1)),
                  TimedEvent(at: at(3001), event: .catchUpFinished(trigger: .trailing, kind: .targeted, stored: 0, requests: 1, failed: 0, took: .seconds(1), stoppedBy: nil))] {
            for input in ViewInput.from(e) { _ = ViewModel.reduce(&s, input) }
        }
        clock(60)
        return s
    }

    @Test("the reducer keeps the hour from the events: bands, faults, marks and requests land in their columns")
    func columns() {
        let cols = hour().timeline.columns(60, now: at(3600))  // one column a minute
        #expect(cols[5].lifecycle == .foreground && cols[25].lifecycle == .background && cols[35].lifecycle == .foreground)
        #expect(cols[10].push == .reliable && cols[33].push == .unreliable && cols[45].push == .reliable)
        #expect(!cols[24].fault && cols[26].fault && cols[39].fault && !cols[41].fault)
        #expect(cols[1].mark == .full && cols[30].mark == .full && cols[31].mark == .skipped && cols[50].mark == .targeted)
        #expect(cols[1].requests == 9 && cols[30].requests == 9 && cols[50].requests == 1)
        #expect(cols.map(\.requests).reduce(0, +) == 19)
    }

    @Test("T shows the strip above the compose line, in cells, with a key line under it; T again hides it")
    func grid() {
        let store = TestStore(hour())
        store.send(.key(.escape)) { $0.focus = .list }
        store.send(.key(.char("T"))) { $0.showTimeline = true }
        // 120 columns: 111 for the hour, 8 for the labels.
        let t = Render.screen(store.state, width: 120, height: 36).text
        let top = try! #require(t.firstIndex { $0.hasPrefix("─ timeline: the last hour") })
        // Under the rows, their key, glyph by glyph; then the compose line.
        #expect(t[top + 5] == "    key · fore ▓ back  ━ reliable ┄ unknown ▬ unreliable  ● full ▲ targeted ▪ light × skipped ░ fault  ▁…█ requests")
        #expect(t[top + 6].hasPrefix("to Alice>"))  // right above the compose line
        let app = Array(t[top + 1]), push = Array(t[top + 2]), syncs = Array(t[top + 3]), req = Array(t[top + 4])
        func col(_ minute: Double) -> Int { 8 + Int(minute * 60 / 3600 * 111) }  // the column of that minute of the hour
        #expect(String(app.prefix(8)) == "    app " && app[col(25)] == "▓" && app[col(10)] == "·")
        #expect(push[col(10)] == "━" && push[col(35)] == "▬")
        #expect(syncs[col(1)] == "●" && syncs[col(30)] == "●" && syncs[col(31)] == "×" && syncs[col(50)] == "▲")
        #expect(syncs[col(27)] == "░")  // the fault
        #expect(req[col(30.05)] == "█" && req[col(50.02)] == "▁")
        store.send(.key(.char("T"))) { $0.showTimeline = false }
        #expect(!Render.screen(store.state, width: 120, height: 36).text.contains { $0.hasPrefix("─ timeline") })
    }

    @Test("older than an hour is dropped: the strip stays small however long the run")
    func bounded() {
        var s = sampleState()
        for minute in 0..<(24 * 60) {
            _ = ViewModel.reduce(&s, .clock(at(Int64(minute) * 60), speed: 30))
            _ = ViewModel.reduce(&s, .syncMark(.light, at: at(Int64(minute) * 60)))
            _ = ViewModel.reduce(&s, .syncRequests(1, at: at(Int64(minute) * 60)))
            _ = ViewModel.reduce(&s, .truth(WorldTruth(faults: minute % 2 == 0 ? WorldFaults(indexer: .init(down: true)) : .none)))
        }
        #expect(s.timeline.marks.count <= 61 && s.timeline.requests.count <= 61 && s.timeline.faults.count <= 62)
    }
}
