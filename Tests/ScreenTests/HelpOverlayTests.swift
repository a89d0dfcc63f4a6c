import ChatUI
import SyncCore
import Testing

/// The help overlay is generated from the key table: every labelled key is in
/// it, side by side when wide, and a help taller than the screen scrolls and says so.
@Suite("Help overlay")
struct HelpOverlayTests {
    func withHelp() -> ViewState {
        var s = sampleState()
        _ = ViewModel.reduce(&s, .key(.escape))
        _ = ViewModel.reduce(&s, .key(.char("?")))
        return s
    }

    @Test("at 120x36 the help scrolls: ↓ and PgDn reach its last line, ↑ goes back, any other key closes it")
    func scrolls() {
        let store = TestStore(sampleState())
        store.send(.key(.escape)) { $0.focus = .list }
        store.send(.key(.char("?"))) { $0.showHelp = true }
        let first = Render.screen(store.state, width: 120, height: 36).text.joined(separator: "\n")
        #expect(first.contains("↑↓ scroll"))
        #expect(!first.contains("leave the compose line"))
        store.send(.key(.down)) { $0.helpScroll = 1 }
        store.send(.key(.pageDown)) { $0.helpScroll = 11 }
        store.send(.key(.pageDown)) { $0.helpScroll = 21 }
        store.send(.key(.pageDown)) { $0.helpScroll = 31 }
        let last = Render.screen(store.state, width: 120, height: 36).text.joined(separator: "\n")
        #expect(last.contains("leave the compose line"))  // the last binding of the table
        store.send(.key(.up)) { $0.helpScroll = 30 }
        store.send(.key(.char("q"))) {  // closes the help; no .quit, not quitting
            $0.showHelp = false
            $0.helpScroll = 0
        }
    }

    @Test("on a wide screen both tables stand side by side and every labelled key of the table is shown, with nothing to scroll")
    func sideBySide() {
        let text = Render.screen(withHelp(), width: 200, height: 50).text.joined(separator: "\n")
        #expect(!text.contains("↑↓ scroll"))
        let (global, compose) = KeyTable.helpSections()
        for line in global + compose { #expect(text.contains(line.help), "\(line.label)") }
        let row = Render.screen(withHelp(), width: 200, height: 50).text.first { $0.contains("── keys ──") }
        #expect(row?.contains("── compose line ──") == true)
    }
}

/// The pane that has the keys says so — its title in the focus role — so that
/// fault letters are not typed into the compose line by mistake, nor the reverse.
@Suite("Visible focus")
struct VisibleFocusTests {
    @Test("the list's, the messages' and the log's titles take the focus role when they have the keys, and only then")
    func titles() throws {
        let store = TestStore(sampleState())
        func roleOf(_ text: String, _ g: Grid) throws -> Role {
            let y = try #require(g.text.firstIndex { $0.contains(text) })
            let x = g.text[y].distance(from: g.text[y].startIndex, to: g.text[y].range(of: text)!.lowerBound)
            return g.roles(row: y)[x + 1]
        }
        store.send(.key(.escape)) { $0.focus = .list }
        var g = Render.screen(store.state, width: 100, height: 24)
        #expect(try roleOf("Conversations", g) == .focus)
        #expect(try roleOf("Alice  ", g) == .title)
        #expect(try roleOf("sync log", g) == .logTitle)
        store.send(.key(.tab)) { $0.focus = .messages }
        g = Render.screen(store.state, width: 100, height: 24)
        #expect(try roleOf("Conversations", g) == .title)
        #expect(try roleOf("Alice  ", g) == .focus)
        store.send(.key(.tab)) { $0.focus = .compose }  // its cursor shows, and the pane's title
        store.send(.key(.tab)) { $0.focus = .log }
        g = Render.screen(store.state, width: 100, height: 24)
        #expect(try roleOf("sync log", g) == .focus)
        #expect(try roleOf("Alice  ", g) == .title)
    }
}
