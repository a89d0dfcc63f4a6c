import ChatUI
import Config
import SyncCore
import SyncEngine
import Testing

/// Lines within a message: a message's new lines start new rows in the pane, a paste is one
/// edit that keeps its new lines, and a key adds one by hand (docs/keys.md, docs/screen.md).
@Suite("Multi-line messages")
struct MultiLineMessageTests {
    /// The message pane's rows (right of the list's border), without the border.
    func pane(_ s: ViewState, width: Int = 100, height: Int = 24) -> [String] {
        Render.screen(s, width: width, height: height).text.compactMap { row in
            row.firstIndex(of: "│").map { String(row[row.index(after: $0)...]) }
        }
    }

    func received(_ text: String, sender: String = "Alice", in s: inout ViewState) {
        _ = ViewModel.reduce(&s, .message(alice, MessageRow(txId: "ml", outgoing: false, sender: sender, text: text, kind: .contextual, blockTime: at(310), channel: .realtime)))
    }

    @Test("LF and CRLF start new rows, each under the body past the sender; a lone CR and other controls stay visible")
    func newLinesInThePane() {
        var s = sampleState()
        received("line one\nline two\r\nline three\rstill three\u{7}", in: &s)
        let rows = pane(s)
        let first = try! #require(rows.firstIndex { $0.contains("Alice: line one") })
        let column = rows[first].range(of: "line one")!.lowerBound.utf16Offset(in: rows[first])
        #expect(rows[first + 1].trimmingCharacters(in: .whitespaces) == "line two")
        #expect(rows[first + 2].trimmingCharacters(in: .whitespaces) == "line three^Mstill three^G")
        // Each line starts at the body's column: one block under the sender.
        for k in 1...2 {
            #expect(rows[first + k].firstIndex { $0 != " " }!.utf16Offset(in: rows[first + k]) == column, "\(rows[first + k])")
        }
        #expect(!rows.joined().contains("^J"))
    }

    @Test("a long line of a message wraps, and its rows stay under the body; empty lines are kept")
    func wrappedLinesIndent() {
        var s = sampleState()
        let long = Array(repeating: "word", count: 40).joined(separator: " ")
        received("head\n\n" + long, in: &s)
        let rows = pane(s, width: 80)
        let first = try! #require(rows.firstIndex { $0.contains("Alice: head") })
        let column = rows[first].range(of: "head")!.lowerBound.utf16Offset(in: rows[first])
        #expect(rows[first + 1].trimmingCharacters(in: .whitespaces).isEmpty, "the empty line stays")
        let wrapped = rows[(first + 2)...].prefix { $0.contains("word") }
        #expect(wrapped.count >= 3)
        #expect(wrapped.joined(separator: " ").split(separator: " ").count == 40, "every word shown once")
        for row in wrapped { #expect(row.firstIndex { $0 != " " }!.utf16Offset(in: row) == column) }
    }

    @Test("a sender too long to indent under: the name on its row, the body's lines indented by two")
    func longSender() {
        var s = sampleState()
        received("one\ntwo", sender: "A Contact Whose Name Is Longer Than A Third", in: &s)
        let rows = pane(s, width: 80)
        let name = try! #require(rows.firstIndex { $0.contains("A Contact Whose Name Is Longer Than A Third:") })
        #expect(rows[name + 1].contains("one") && rows[name + 2].contains("two"))
        let at = rows[name].range(of: "A Contact")!.lowerBound.utf16Offset(in: rows[name])
        #expect(rows[name + 1].firstIndex(of: "o")!.utf16Offset(in: rows[name + 1]) == at + 2)
    }

    @Test("one row where a message has one: a banner and a search hit mark each new line with ⏎; the sync log keeps ^J")
    func oneRowPlaces() {
        let banner = BannerRow(conversation: alice, title: "Alice", body: "a\nb\r\nc", at: at(1))
        #expect(banner.body == "a ⏎ b ⏎ c")
        let hit = SearchState.Hit(txId: "t", conversation: alice, sender: "Alice", text: "x\ny", blockTime: at(1))
        #expect(hit.text == "x ⏎ y")
        #expect(UntrustedText.brief("a\nb") == "a^Jb", "a log line stays one line")
        #expect(UntrustedText.visible("a\r\nb", newlines: .kept) == "a\nb")
        #expect(UntrustedText.visible("a\rb\u{1B}[2J", newlines: .kept) == "a^Mb^[[2J")
    }

    @Test("a paste is one edit: its new lines (CR, LF, CRLF) kept in the compose line as ⏎, nothing sent until Enter")
    func pasteKeepsLines() {
        let store = TestStore(sampleState())  // Alice open, the compose line focused
        store.send(.paste("first\rsecond\r\nthird\nfourth\r")) {
            $0.drafts[alice] = LineEditor("first\nsecond\nthird\nfourth\n")
        }
        let grid = Render.screen(store.state, width: 100, height: 24)
        let compose = grid.text[21]
        #expect(compose.hasPrefix("to Alice> first⏎second⏎third⏎fourth⏎"), "\(compose)")
        let mark = compose.distance(from: compose.startIndex, to: compose.firstIndex(of: "⏎")!)
        #expect(grid[mark, 21].role == .messageMeta, "the mark is not typed text")
        // Enter sends it whole; the new line it ended with goes.
        store.send(.key(.enter), commands: [.apply(.send(handle: "alice", text: "first\nsecond\nthird\nfourth"))]) {
            $0.drafts[alice] = nil
            $0.history.record("first\nsecond\nthird\nfourth")
        }
    }

    @Test("Ctrl-J and Alt-Enter add a new line by hand; blank lines alone send nothing")
    func newlineKeys() {
        let store = TestStore(sampleState())
        store.type("a") { $0.drafts[alice] = LineEditor("a") }
        store.send(.key(.ctrl("j"))) { $0.drafts[alice] = LineEditor("a\n") }
        store.type("b") { $0.drafts[alice] = LineEditor("a\nb") }
        store.send(.key(.altEnter)) { $0.drafts[alice] = LineEditor("a\nb\n") }
        store.send(.key(.ctrl("w"))) { $0.drafts[alice] = LineEditor("a\n") }  // the word and its new line
        store.send(.key(.ctrl("u"))) { $0.drafts[alice] = LineEditor("") }
        store.send(.paste("\n \n")) { $0.drafts[alice] = LineEditor("\n \n") }
        store.send(.key(.enter)) { $0.drafts[alice] = LineEditor() }  // blank: nothing sent
        #expect(Key.control(byte: 10) == .ctrl("j") && Key.control(byte: 13) == .enter)
        #expect(KeyTable.helpSections().compose.contains { $0.label == "^J Alt-Enter" })
    }

    @Test("a 20 KiB paste of lines stops at the 16 KiB limit with its notice")
    func pasteLimit() {
        var s = sampleState()
        let line = String(repeating: "y", count: 99) + "\r"
        #expect(ViewModel.reduce(&s, .paste(String(repeating: line, count: 200))).isEmpty)  // 20 000 bytes
        #expect(s.compose.utf8Count == MessageLimits.maxBodyBytes)
        #expect(s.notice == Notices.limitReached)
        #expect(s.compose.string == String(String(repeating: String(repeating: "y", count: 99) + "\n", count: 200).prefix(MessageLimits.maxBodyBytes)))
    }

    @Test("a paste outside the compose line goes to the open conversation's; with none open it is said, and nothing happens")
    func pasteElsewhere() {
        var s = sampleState()
        _ = ViewModel.reduce(&s, .key(.escape))  // leave the compose line: q would quit
        #expect(s.focus == .list)
        let commands = ViewModel.reduce(&s, .paste("q\rq"))
        #expect(commands.isEmpty && !s.quitting && s.focus == .compose && s.compose.string == "q\nq")
        var none = ViewState()
        _ = ViewModel.reduce(&none, .conversations([ConversationRow(address: bob, handle: "bob", name: "Bob", unread: 0, muted: false, lastActivity: nil)]))
        #expect(ViewModel.reduce(&none, .paste("q")).isEmpty && !none.quitting)
        #expect(none.notice == "nothing pasted: open a conversation first (Enter), then paste")
    }

    @Test("a paste into the search prompt or the contact prompt: one line, its new lines as spaces")
    func pasteInPrompts() {
        var s = sampleState()
        _ = ViewModel.reduce(&s, .key(.escape))
        _ = ViewModel.reduce(&s, .key(.char("/")))
        _ = ViewModel.reduce(&s, .paste("two\r\nwords"))
        #expect(s.search?.input.string == "two words")
        _ = ViewModel.reduce(&s, .key(.escape))
        _ = ViewModel.reduce(&s, .key(.char("a")))
        _ = ViewModel.reduce(&s, .paste("kaspa:qq\n"))
        #expect(s.prompt?.input.string == "kaspa:qq ")
    }

    @Test("keys.toml names Alt-Enter, and Ctrl-J binds with no warning (a key of its own now)")
    func keyFileNames() {
        #expect(KeyFile.parseKey("alt-enter") == .altEnter && KeyFile.parseKey("M-Enter") == .altEnter)
        let (map, warnings) = KeyFile.parse("[compose]\nnewline = \"ctrl-j\"\n", file: "keys.toml")
        #expect(warnings.isEmpty, "\(warnings)")
        #expect(KeyTable.action(for: .ctrl("j"), in: map.compose) == .newline)
    }
}
