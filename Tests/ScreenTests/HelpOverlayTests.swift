import ChatUI
import SyncCore
import Testing

/// The help overlay is generated from the key table (issue 15 #6): every labelled key is in
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
        var s = withHelp()
        let first = Render.screen(s, width: 120, height: 36).text.joined(separator: "\n")
        #expect(first.contains("↑↓ scroll"))
        #expect(!first.contains("leave the compose line"))
        for _ in 0..<3 { _ = ViewModel.reduce(&s, .key(.pageDown)) }
        let last = Render.screen(s, width: 120, height: 36).text.joined(separator: "\n")
        #expect(last.contains("leave the compose line"))  // the last binding of the table
        _ = ViewModel.reduce(&s, .key(.up))
        #expect(s.showHelp)
        _ = ViewModel.reduce(&s, .key(.char("q")))
        #expect(!s.showHelp && !s.quitting && s.helpScroll == 0)
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

/// Issue 15 #7: the pane that has the keys says so — its title in the focus role — so that
/// fault letters are not typed into the compose line by mistake, nor the reverse.
@Suite("Visible focus")
struct VisibleFocusTests {
    @Test("the list's, the messages' and the log's titles take the focus role when they have the keys, and only then")
    func titles() throws {
        var s = sampleState()
        func roleOf(_ text: String, _ g: Grid) throws -> Role {
            let y = try #require(g.text.firstIndex { $0.contains(text) })
            let x = g.text[y].distance(from: g.text[y].startIndex, to: g.text[y].range(of: text)!.lowerBound)
            return g.roles(row: y)[x + 1]
        }
        _ = ViewModel.reduce(&s, .key(.escape))  // the list
        var g = Render.screen(s, width: 100, height: 24)
        #expect(try roleOf("Conversations", g) == .focus)
        #expect(try roleOf("Alice  ", g) == .title)
        #expect(try roleOf("sync log", g) == .logTitle)
        _ = ViewModel.reduce(&s, .key(.tab))  // the messages
        g = Render.screen(s, width: 100, height: 24)
        #expect(try roleOf("Conversations", g) == .title)
        #expect(try roleOf("Alice  ", g) == .focus)
        _ = ViewModel.reduce(&s, .key(.tab))  // the compose line: its cursor shows, and the pane's title
        _ = ViewModel.reduce(&s, .key(.tab))  // the log
        g = Render.screen(s, width: 100, height: 24)
        #expect(try roleOf("sync log", g) == .focus)
        #expect(try roleOf("Alice  ", g) == .title)
    }
}
