import ChatUI
import SyncCore
import Testing

/// Issue 15 #5: what is under a cell is read from the layout the screen is drawn with; a
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
        var s = sampleState()
        _ = ViewModel.reduce(&s, .key(.escape))
        #expect(ViewModel.reduce(&s, .mouse(MouseEvent(x: 3, y: 2, kind: .click), .conversation(1))) == [.apply(.open(handle: "bob"))])
        #expect(s.open == bob && s.focus == .compose)
        _ = ViewModel.reduce(&s, .mouse(MouseEvent(x: 50, y: 18, kind: .click), .log))
        #expect(s.focus == .log)
        _ = ViewModel.reduce(&s, .mouse(MouseEvent(x: 50, y: 5, kind: .wheelUp), .messages))
        #expect(s.scroll == 3 && s.focus == .log)  // the wheel scrolls what is under it, focus stays
        _ = ViewModel.reduce(&s, .mouse(MouseEvent(x: 50, y: 18, kind: .wheelUp), .log))
        #expect(s.logScroll == 3 && s.logFrozenAt != nil)
        _ = ViewModel.reduce(&s, .mouse(MouseEvent(x: 50, y: 18, kind: .wheelDown), .log))
        #expect(s.logScroll == 0 && s.logFrozenAt == nil)
        _ = ViewModel.reduce(&s, .mouse(MouseEvent(x: 3, y: 1, kind: .wheelDown), .list))
        #expect(s.selected == 2)
    }
}
