import ChatUI
import SyncCore
import Testing

/// Issue 15 #2 on the screen: `/` opens the prompt, Enter asks the store, the answer lands
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

    @Test("/ types a query; Enter asks the store for this conversation; Esc in the prompt cancels")
    func prompt() {
        var s = withLongHistory()
        _ = ViewModel.reduce(&s, .key(.char("/")))
        #expect(s.search?.editing == true && s.search?.scope == .conversation(alice))
        for ch in "Park" { _ = ViewModel.reduce(&s, .key(.char(ch))) }
        let commands = ViewModel.reduce(&s, .key(.enter))
        #expect(commands == [.search(SearchQuery("park")!, in: alice)])
        #expect(s.search?.editing == false && s.search?.searching == true)
        _ = ViewModel.reduce(&s, .key(.char("/")))
        _ = ViewModel.reduce(&s, .key(.char("x")))
        _ = ViewModel.reduce(&s, .key(.escape))
        #expect(s.search == nil)
    }

    @Test("the hits: n goes older, N newer; the current hit is brought into view in the focus role, its word in the match role")
    func walk() throws {
        var s = withLongHistory()
        _ = ViewModel.reduce(&s, .key(.char("/")))
        for ch in "park" { _ = ViewModel.reduce(&s, .key(.char(ch))) }
        _ = ViewModel.reduce(&s, .key(.enter))
        _ = ViewModel.reduce(&s, .searchResults(SearchQuery("park")!, [Self.hit("m60", alice, "Alice", "parking is hard", 3600),
                                                                       Self.hit("m5", alice, "Alice", "the café by the park", 300)]))
        #expect(s.search?.current == 0)
        _ = ViewModel.reduce(&s, .key(.char("n")))
        #expect(s.search?.current == 1)
        let g = Render.screen(s, width: 100, height: 30)
        let row = try #require(g.text.firstIndex { $0.contains("Alice: the café by the park") }, "\(g.text.joined(separator: "\n"))")  // 75 messages back, in view
        let line = g.text[row]
        let roles = g.roles(row: row)
        let park = line.distance(from: line.startIndex, to: line.range(of: "park")!.lowerBound)
        #expect(roles[park] == .searchMatch && roles[park + 3] == .searchMatch)
        let cafe = line.distance(from: line.startIndex, to: line.range(of: "café")!.lowerBound)
        #expect(roles[cafe] == .focus)  // the current hit's line
        #expect(g.text[0].contains("Alice · “park”: 2/2 · n older · N newer · Esc"))
        // At the oldest hit, n says so (it did nothing, silently).
        _ = ViewModel.reduce(&s, .key(.char("n")))
        #expect(s.search?.current == 1 && s.notice == "the oldest hit: N goes back to newer ones")
        _ = ViewModel.reduce(&s, .key(.char("N")))
        #expect(s.search?.current == 0)
        _ = ViewModel.reduce(&s, .key(.char("N")))
        #expect(s.search?.current == 0 && s.notice == "the newest hit: n goes on to older ones")
        let newer = Render.screen(s, width: 100, height: 30)
        let r2 = try #require(newer.text.firstIndex { $0.contains("Alice: parking is hard") })
        let l2 = newer.text[r2]
        #expect(newer.roles(row: r2)[l2.distance(from: l2.startIndex, to: l2.range(of: "park")!.lowerBound)] == .searchMatch)
        _ = ViewModel.reduce(&s, .key(.escape))
        #expect(s.search == nil)
    }

    @Test("across all conversations: the hits listed under each conversation; Enter opens that conversation on that message")
    func all() {
        var s = withLongHistory()
        s.open = nil
        _ = ViewModel.reduce(&s, .key(.char("/")))
        #expect(s.search?.scope == .all)
        for ch in "coffee" { _ = ViewModel.reduce(&s, .key(.char(ch))) }
        #expect(ViewModel.reduce(&s, .key(.enter)) == [.search(SearchQuery("coffee")!, in: nil)])
        _ = ViewModel.reduce(&s, .searchResults(SearchQuery("coffee")!, [
            Self.hit("b2", bob, "Bob", "coffee later?", 900), Self.hit("a1", alice, "Alice", "coffee?", 800), Self.hit("b1", bob, "Bob", "coffee!", 700)]))
        #expect(s.search?.hits.map(\.txId) == ["b2", "b1", "a1"])  // Bob's together
        let t = Render.screen(s, width: 100, height: 30).text
        #expect(t[1].contains("search “coffee”: 3 hits in 2 conversations"))
        #expect(t[2].contains("│ Bob") && t[3].contains("Bob: coffee later?") && t[4].contains("Bob: coffee!") && t[5].contains("│ Alice"))
        _ = ViewModel.reduce(&s, .key(.char("n")))
        _ = ViewModel.reduce(&s, .key(.char("n")))
        let commands = ViewModel.reduce(&s, .key(.enter))
        #expect(s.open == alice && s.search?.scope == .conversation(alice) && s.search?.currentHit?.txId == "a1")
        #expect(commands.contains(.search(SearchQuery("coffee")!, in: alice)))
    }

    @Test("counts in words: 1 hit in 1 conversation; nothing found says so, and offers no keys to move")
    func countsInWords() {
        var s = withLongHistory()
        s.open = nil
        _ = ViewModel.reduce(&s, .key(.char("/")))
        for ch in "tea" { _ = ViewModel.reduce(&s, .key(.char(ch))) }
        _ = ViewModel.reduce(&s, .key(.enter))
        _ = ViewModel.reduce(&s, .searchResults(SearchQuery("tea")!, [Self.hit("b2", bob, "Bob", "tea later?", 900)]))
        #expect(Render.screen(s, width: 100, height: 30).text[1].contains("search “tea”: 1 hit in 1 conversation · n/N move"))
        _ = ViewModel.reduce(&s, .key(.escape))
        _ = ViewModel.reduce(&s, .key(.char("/")))
        for ch in "zebra" { _ = ViewModel.reduce(&s, .key(.char(ch))) }
        _ = ViewModel.reduce(&s, .key(.enter))
        _ = ViewModel.reduce(&s, .searchResults(SearchQuery("zebra")!, []))
        let t = Render.screen(s, width: 100, height: 30).text
        #expect(t[1].contains("search “zebra”: nothing found · Esc") && !t[1].contains("0 hits") && !t[1].contains("n/N"))
        _ = ViewModel.reduce(&s, .key(.char("n")))
        #expect(s.notice == "nothing found: no hit to move to")
    }
}
