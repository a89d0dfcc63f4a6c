import ChatUI
import SyncCore
import SyncEngine
import Testing

/// A conversation's history is loaded a page at a time from the store, the newest first.
/// The oracle is the same screen with the whole history loaded at once: paging must never
/// show anything else.
@Suite("History a page at a time")
struct HistoryPagingTests {
    static let total = 2_000

    /// Alice's 2 000 messages (a few instants shared by several), every third sent.
    static func store() throws -> InMemoryChatStorage {
        let store = InMemoryChatStorage()
        let messages = (0..<total).map { i in
            StoredMessage(message: NetworkMessage(txId: "a\(i)", conversation: alice, direction: i % 3 == 0 ? .outgoing : .incoming,
                                                  kind: .contextual, body: "message \(i) " + String(repeating: "word ", count: i % 9),
                                                  blockTime: at(Int64(i / 2 * 60))),
                          receivedAt: .zero, via: .fetch)
        }
        _ = try store.commit(messages, cursor: nil)
        return store
    }

    static let contact = Contact(address: alice, handle: "alice", displayName: "Alice")

    static func read(_ store: ChatStorage) -> (HistoryPage) -> [MessageRow] {
        { page in store.messages(in: page.conversation, before: page.before, limit: page.limit).map { MessageRow($0, contact: contact) } }
    }

    /// Alice opened with `unread` unread messages, through pages (`paged`) or all at once.
    static func opened(_ store: ChatStorage, paged: Bool, unread: Int = 0) -> ViewState {
        var s = ViewState()
        _ = ViewModel.reduce(&s, .conversations([ConversationRow(address: alice, name: "Alice", unread: unread, muted: false, lastActivity: at(60_000))]))
        if !paged {
            let all = store.messages(in: alice).map { MessageRow($0, contact: contact) }.sorted { $0.blockTime < $1.blockTime }
            _ = ViewModel.reduce(&s, .history(alice, all))
        }
        _ = ViewModel.reduce(&s, .key(.enter))
        s.focus = .messages
        ViewModel.loadHistory(&s, read: read(store))
        return s
    }

    /// Alice's whole history, oldest first, as the screen loaded at once holds it.
    static func whole(_ store: ChatStorage) -> [MessageRow] {
        store.messages(in: alice).map { MessageRow($0, contact: contact) }.sorted { $0.blockTime < $1.blockTime }
    }

    @Test("opening reads one page, and shows what the whole history shows")
    func firstPage() throws {
        let store = try Self.store()
        var s = ViewState()
        _ = ViewModel.reduce(&s, .conversations([ConversationRow(address: alice, name: "Alice", unread: 0, muted: false, lastActivity: at(60_000))]))
        let paged = TestStore(s)
        paged.send(.key(.enter), commands: [.apply(.open(handle: alice.value))]) {
            $0.open = alice
            $0.focus = .compose
        }
        let pages = paged.loadHistory(read: Self.read(store)) {
            $0.messages[alice] = Array(Self.whole(store).suffix(ViewState.historyPage))
            $0.partialHistory = [alice]
        }
        #expect(pages.map(\.before) == [nil] && pages.map(\.limit) == [ViewState.historyPage])  // the newest page, once
        var shown = paged.state
        shown.focus = .messages
        #expect(Render.screen(shown, width: 100, height: 30) == Render.screen(Self.opened(store, paged: false), width: 100, height: 30))
    }

    @Test("scrolling back loads older pages as it nears them, up to the first message, each screen as with the whole history")
    func scrollBack() throws {
        let store = try Self.store()
        let all = Self.whole(store)
        let paged = TestStore(Self.opened(store, paged: true))
        let whole = TestStore(Self.opened(store, paged: false))
        var pagesRead = 1
        var afterTheStart = 0
        for step in 0..<400 {
            paged.send(.key(.pageUp)) { $0.scroll += 10 }
            whole.send(.key(.pageUp)) { $0.scroll += 10 }
            // Near the top of what is loaded, the next page is read: the 500 before it, or
            // none at the start, which ends the paging.
            let loaded = paged.state.messages[alice]?.count ?? 0
            let wanted = paged.state.historyWanted
            let pages = paged.loadHistory(read: Self.read(store)) {
                guard wanted != nil else { return }
                if loaded == Self.total { $0.partialHistory = [] } else { $0.messages[alice] = Array(all.suffix(loaded + ViewState.historyPage)) }
            }
            #expect(pages == (wanted.map { [$0] } ?? []), "page up \(step + 1)")
            if (paged.state.messages[alice]?.count ?? 0) > loaded { pagesRead += 1 }
            #expect(Render.screen(paged.state, width: 100, height: 30) == Render.screen(whole.state, width: 100, height: 30), "page up \(step + 1)")
            if paged.state.partialHistory.isEmpty { afterTheStart += 1 }
            if afterTheStart > 5 { break }
        }
        #expect(paged.state.partialHistory.isEmpty)
        #expect(paged.state.messages[alice]?.map(\.txId).elementsEqual(whole.state.messages[alice]?.map(\.txId) ?? []) == true)
        #expect(pagesRead == Self.total / ViewState.historyPage)  // (and one empty read that found the start)
    }

    @Test("a message older than everything loaded waits for its page; a new one is shown at once")
    func arrivals() throws {
        let store = try Self.store()
        var paged = Self.opened(store, paged: true)
        let old = StoredMessage(message: NetworkMessage(txId: "late-old", conversation: alice, direction: .incoming, kind: .contextual,
                                                        body: "fetched late, written long ago", blockTime: at(30)), receivedAt: .zero, via: .fetch)
        let new = StoredMessage(message: NetworkMessage(txId: "new", conversation: alice, direction: .incoming, kind: .contextual,
                                                        body: "just now", blockTime: at(70_000)), receivedAt: .zero, via: .realtime)
        for m in [old, new] {
            _ = try store.commit([m], cursor: nil)
            _ = ViewModel.reduce(&paged, .message(alice, MessageRow(m, contact: Self.contact)))
        }
        #expect(paged.messages[alice]?.last?.txId == "new")
        #expect(paged.messages[alice]?.contains { $0.txId == "late-old" } == false)
        paged.scroll = 100 * Self.total
        ViewModel.loadHistory(&paged, read: Self.read(store))
        let whole = store.messages(in: alice).sorted { ($0.message.blockTime, $0.txId == "late-old" ? 1 : 0) < ($1.message.blockTime, $1.txId == "late-old" ? 1 : 0) }
        #expect(paged.messages[alice]?.count == whole.count)
        #expect(paged.messages[alice]?.filter { $0.txId == "late-old" }.count == 1)
    }

    @Test("a search hit older than everything loaded brings the pages down to it, and is shown")
    func searchHitBeyond() throws {
        let store = try Self.store()
        let paged = TestStore(Self.opened(store, paged: true))
        let whole = TestStore(Self.opened(store, paged: false))
        let target = store.messages(in: alice)[10]
        let query = SearchQuery("message")!
        let hit = SearchState.Hit(txId: target.txId, conversation: alice, sender: "Alice", text: target.message.body, blockTime: target.message.blockTime)
        for state in [paged, whole] {
            state.send(.key(.char("/"))) { $0.search = SearchState(scope: .conversation(alice)) }
            state.type("message") { $0.search?.input = LineEditor("message") }
            state.send(.key(.enter), commands: [.search(query, in: alice)]) {
                $0.search?.editing = false
                $0.search?.query = query
                $0.search?.searching = true
            }
            state.send(.searchResults(query, [hit])) {
                $0.search?.hits = [hit]
                $0.search?.searching = false
            }
        }
        // The pages down to the hit; the last one read was whole, so the start is not known yet.
        let pages = paged.loadHistory(read: Self.read(store)) { $0.messages[alice] = Self.whole(store) }
        #expect(pages.count == 3)
        #expect(paged.state.messages[alice]?.contains { $0.txId == target.txId } == true)
        #expect(paged.state.partialHistory == [alice])
        let screen = Render.screen(paged.state, width: 100, height: 30)
        #expect(screen == Render.screen(whole.state, width: 100, height: 30))
        #expect(screen.text.joined(separator: "\n").contains("message 10 "))
    }

    @Test("the first page covers every unread message, so the new line stands where it does with the whole history")
    func unreadMarker() throws {
        let store = try Self.store()
        let paged = Self.opened(store, paged: true, unread: 900)
        let whole = Self.opened(store, paged: false, unread: 900)
        #expect(paged.newMarker?.txId != nil)
        #expect(paged.newMarker == whole.newMarker)
        #expect((paged.messages[alice]?.count ?? 0) < Self.total)  // not the whole history either
    }

    @Test("a message for a conversation not opened yet does not stand in for its history: opening it reads the page from the store")
    func arrivalBeforeOpening() throws {
        let store = try Self.store()
        var s = ViewState()
        _ = ViewModel.reduce(&s, .conversations([ConversationRow(address: alice, name: "Alice", unread: 0, muted: false, lastActivity: at(60_000))]))
        let new = StoredMessage(message: NetworkMessage(txId: "new", conversation: alice, direction: .incoming, kind: .contextual,
                                                        body: "just now", blockTime: at(70_000)), receivedAt: .zero, via: .realtime)
        _ = try store.commit([new], cursor: nil)
        let app = TestStore(s)
        app.send(.message(alice, MessageRow(new, contact: Self.contact))) { $0.conversations[0].lastActivity = at(70_000) }  // not a history
        app.send(.key(.enter), commands: [.apply(.open(handle: alice.value))]) {
            $0.open = alice
            $0.focus = .compose
        }
        // The newest page from the store: the new message and the 500 before it, less what
        // would split the oldest instant's pair.
        let page = Array(Self.whole(store).suffix(ViewState.historyPage + 1))
        let pages = app.loadHistory(read: Self.read(store)) {
            $0.messages[alice] = page.first?.blockTime == page.dropFirst().first?.blockTime ? page : Array(page.dropFirst())
            $0.partialHistory = [alice]
        }
        #expect(pages.count == 1)
        #expect((ViewState.historyPage...ViewState.historyPage + 1).contains(app.state.messages[alice]?.count ?? 0))  // (a page never splits an instant)
        #expect(app.state.messages[alice]?.last?.txId == "new")
    }
}
