import ChatUI
import SyncCore
import Testing

/// What is under a cell is read from the layout the screen is drawn with; a
/// click opens a conversation or focuses a pane, the wheel scrolls the pane under it.
@Suite("Mouse")
struct MouseTests {
    @Test("the area under a cell: the list's rows, the messages, the log, the compose line")
    func areas() {
        var s = sampleState()
        _ = ViewModel.reduce(&s, .key(.escape))
        let t = Render.screen(s, width: 100, height: 24).text
        let logTitle = t.firstIndex { $0.hasPrefix("─ sync log") }!
        #expect(Render.area(s, width: 100, height: 24, x: 3, y: 1) == .conversation(0))
        #expect(Render.area(s, width: 100, height: 24, x: 3, y: 3) == .conversation(2))
        #expect(Render.area(s, width: 100, height: 24, x: 3, y: 6) == .list)
        #expect(Render.area(s, width: 100, height: 24, x: 50, y: 5) == .messages)
        #expect(Render.area(s, width: 100, height: 24, x: 50, y: logTitle + 1) == .log)
        #expect(Render.area(s, width: 100, height: 24, x: 50, y: t.firstIndex { $0.hasPrefix("to Alice>") }!) == .compose)
        #expect(Render.area(s, width: 100, height: 24, x: 50, y: 23) == .none)  // the status bar
        #expect(Render.area(s, width: 59, height: 24, x: 3, y: 1) == .none)  // too small: nothing to click
    }

    @Test("a click on a conversation opens it; on a pane gives it the keys; the wheel scrolls the pane under it")
    func reduce() {
        let store = TestStore(sampleState())
        store.send(.key(.escape)) { $0.focus = .list }
        store.send(.mouse(MouseEvent(x: 3, y: 2, kind: .click), .conversation(1)), commands: [.apply(.open(handle: "bob"))]) {
            $0.selected = 1
            $0.open = bob
            $0.focus = .compose
            $0.newMarker = nil  // the sample's new line was Alice's
        }
        store.send(.mouse(MouseEvent(x: 50, y: 18, kind: .click), .log)) { $0.focus = .log }
        store.send(.mouse(MouseEvent(x: 50, y: 5, kind: .wheelUp), .messages)) { $0.scroll = 3 }  // what is under it; the focus stays
        store.send(.mouse(MouseEvent(x: 50, y: 18, kind: .wheelUp), .log)) {
            $0.logScroll = 3
            $0.logFrozenAt = $0.logCount
        }
        store.send(.mouse(MouseEvent(x: 50, y: 18, kind: .wheelDown), .log)) {
            $0.logScroll = 0
            $0.logFrozenAt = nil
        }
        store.send(.mouse(MouseEvent(x: 3, y: 1, kind: .wheelDown), .list)) { $0.selected = 2 }
    }
}
