import ChatUI
import SyncCore
import Testing

/// On the screen: `/` opens the prompt, Enter asks the store, the answer lands
/// as hits; in a conversation n/N walk them with the current one in view and the words lit;
/// across conversations the hits are listed under each conversation's name.
@Suite("Search on the screen")
struct SearchScreenTests {
    static func hit(_ tx: String, _ c: Address, _ sender: String, _ text: String, _ t: Int64) -> SearchState.Hit {
        SearchState.Hit(txId: tx, conversation: c, sender: sender, text: text, blockTime: at(t))
    }

    func withLongHistory() -> ViewState {
        var s = sampleState()
        var rows: [MessageRow] = []
        for i in 0..<80 {
            let text = i == 5 ? "the café by the park" : i == 60 ? "parking is hard" : "message number \(i)"
            rows.append(MessageRow(txId: "m\(i)", outgoing: false, sender: "Alice", text: text, kind: .contextual, blockTime: at(Int64(i) * 60), channel: .realtime))
        }
        _ = ViewModel.reduce(&s, .history(alice, rows))
        _ = ViewModel.reduce(&s, .key(.escape))
        return s
    }

    /// Types `text` in a search prompt opened in `scope` and sends it with Enter.
    func search(_ store: TestStore, _ text: String, in scope: SearchState.Scope) {
        store.send(.key(.char("/"))) { $0.search = SearchState(scope: scope) }  // editing
        store.type(text) { $0.search?.input = LineEditor(text) }
        let query = SearchQuery(text)!
        let conversation: Address? = if case .conversation(let a) = scope { a } else { nil }
        store.send(.key(.enter), commands: [.search(query, in: conversation)]) {
            $0.search?.editing = false
            $0.search?.query = query
            $0.search?.searching = true
        }
    }

    @Test("/ types a query; Enter asks the store for this conversation; Esc in the prompt cancels")
    func prompt() {
        let store = TestStore(withLongHistory())
        search(store, "Park", in: .conversation(alice))
        #expect(store.state.search?.query == SearchQuery("park"))
        store.send(.key(.char("/"))) { $0.search = SearchState(scope: .conversation(alice)) }
        store.send(.key(.char("x"))) { $0.search?.input = LineEditor("x") }
        store.send(.key(.escape)) { $0.search = nil }
    }

    @Test("the hits: n goes older, N newer; the current hit is brought into view in the focus role, its word in the match role")
    func walk() throws {
        let store = TestStore(withLongHistory())
        search(store, "park", in: .conversation(alice))
        let hits = [Self.hit("m60", alice, "Alice", "parking is hard", 3600), Self.hit("m5", alice, "Alice", "the café by the park", 300)]
        store.send(.searchResults(SearchQuery("park")!, hits)) {
            $0.search?.hits = hits
            $0.search?.searching = false
            $0.search?.current = 0
        }
        store.send(.key(.char("n"))) { $0.search?.current = 1 }
        let g = Render.screen(store.state, width: 100, height: 30)
        let row = try #require(g.text.firstIndex { $0.contains("Alice: the café by the park") }, "\(g.text.joined(separator: "\n"))")  // 75 messages back, in view
        let line = g.text[row]
        let roles = g.roles(row: row)
        let park = line.distance(from: line.startIndex, to: line.range(of: "park")!.lowerBound)
        #expect(roles[park] == .searchMatch && roles[park + 3] == .searchMatch)
        let cafe = line.distance(from: line.startIndex, to: line.range(of: "café")!.lowerBound)
        #expect(roles[cafe] == .focus)  // the current hit's line
        #expect(g.text[0].contains("Alice · “park”: 2/2 · n older · N newer · Esc"))
        // At the oldest hit, n says so (it did nothing, silently).
        store.send(.key(.char("n"))) { $0.notice = "the oldest hit: N goes back to newer ones" }
        store.send(.key(.char("N"))) {
            $0.search?.current = 0
            $0.notice = nil
        }
        store.send(.key(.char("N"))) { $0.notice = "the newest hit: n goes on to older ones" }
        let newer = Render.screen(store.state, width: 100, height: 30)
        let r2 = try #require(newer.text.firstIndex { $0.contains("Alice: parking is hard") })
        let l2 = newer.text[r2]
        #expect(newer.roles(row: r2)[l2.distance(from: l2.startIndex, to: l2.range(of: "park")!.lowerBound)] == .searchMatch)
        store.send(.key(.escape)) {
            $0.search = nil
            $0.notice = nil
        }
    }

    @Test("across all conversations: the hits listed under each conversation; Enter opens that conversation on that message")
    func all() {
        var s = withLongHistory()
        s.open = nil
        let store = TestStore(s)
        search(store, "coffee", in: .all)  // no conversation open: all of them
        let b2 = Self.hit("b2", bob, "Bob", "coffee later?", 900), a1 = Self.hit("a1", alice, "Alice", "coffee?", 800)
        let b1 = Self.hit("b1", bob, "Bob", "coffee!", 700)
        store.send(.searchResults(SearchQuery("coffee")!, [b2, a1, b1])) {
            $0.search?.hits = [b2, b1, a1]  // Bob's together
            $0.search?.searching = false
            $0.search?.current = 0
        }
        let t = Render.screen(store.state, width: 100, height: 30).text
        #expect(t[1].contains("search “coffee”: 3 hits in 2 conversations"))
        #expect(t[2].contains("│ Bob") && t[3].contains("Bob: coffee later?") && t[4].contains("Bob: coffee!") && t[5].contains("│ Alice"))
        store.send(.key(.char("n"))) { $0.search?.current = 1 }
        store.send(.key(.char("n"))) { $0.search?.current = 2 }
        store.send(.key(.enter), commands: [.apply(.open(handle: "alice")), .search(SearchQuery("coffee")!, in: alice)]) {
            $0.open = alice
            $0.focus = .messages
            $0.search?.scope = .conversation(alice)
            $0.search?.hits = [a1]
            $0.search?.current = 0
            $0.search?.searching = true
        }
        #expect(store.state.search?.currentHit?.txId == "a1")
    }

    @Test("counts in words: 1 hit in 1 conversation; nothing found says so, and offers no keys to move")
    func countsInWords() {
        var s = withLongHistory()
        s.open = nil
        let store = TestStore(s)
        search(store, "tea", in: .all)
        let tea = Self.hit("b2", bob, "Bob", "tea later?", 900)
        store.send(.searchResults(SearchQuery("tea")!, [tea])) {
            $0.search?.hits = [tea]
            $0.search?.searching = false
        }
        #expect(Render.screen(store.state, width: 100, height: 30).text[1].contains("search “tea”: 1 hit in 1 conversation · n/N move"))
        store.send(.key(.escape)) { $0.search = nil }
        search(store, "zebra", in: .all)
        store.send(.searchResults(SearchQuery("zebra")!, [])) {
            $0.search?.searching = false
            $0.notice = "no message has zebra (Esc ends the search)"
        }
        let t = Render.screen(store.state, width: 100, height: 30).text
        #expect(t[1].contains("search “zebra”: nothing found · Esc") && !t[1].contains("0 hits") && !t[1].contains("n/N"))
        store.send(.key(.char("n"))) { $0.notice = "nothing found: no hit to move to" }
    }
}
