import ChatUI
import SyncCore
import SyncEngine
import Testing

/// Issue 16: a conversation's history is loaded a page at a time from the store, the newest
/// first. The oracle is the same screen with the whole history loaded at once, as it was
/// before: paging must never show anything else.
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

    @Test("opening reads one page, and shows what the whole history shows")
    func firstPage() throws {
        let store = try Self.store()
        let paged = Self.opened(store, paged: true)
        #expect(paged.messages[alice]?.count == ViewState.historyPage)
        #expect(paged.partialHistory == [alice])
        #expect(Render.screen(paged, width: 100, height: 30) == Render.screen(Self.opened(store, paged: false), width: 100, height: 30))
    }

    @Test("scrolling back loads older pages as it nears them, up to the first message, each screen as with the whole history")
    func scrollBack() throws {
        let store = try Self.store()
        var paged = Self.opened(store, paged: true)
        var whole = Self.opened(store, paged: false)
        var pagesRead = 1
        var afterTheStart = 0
        for step in 0..<400 {
            for s in [0, 1] {
                if s == 0 { _ = ViewModel.reduce(&paged, .key(.pageUp)) } else { _ = ViewModel.reduce(&whole, .key(.pageUp)) }
            }
            let before = paged.messages[alice]?.count ?? 0
            ViewModel.loadHistory(&paged, read: Self.read(store))
            if (paged.messages[alice]?.count ?? 0) > before { pagesRead += 1 }
            #expect(Render.screen(paged, width: 100, height: 30) == Render.screen(whole, width: 100, height: 30), "page up \(step + 1)")
            if paged.partialHistory.isEmpty { afterTheStart += 1 }
            if afterTheStart > 5 { break }
        }
        #expect(paged.partialHistory.isEmpty)
        #expect(paged.messages[alice]?.map(\.txId).elementsEqual(whole.messages[alice]?.map(\.txId) ?? []) == true)
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
        var paged = Self.opened(store, paged: true)
        var whole = Self.opened(store, paged: false)
        let target = store.messages(in: alice)[10]
        for s in [0, 1] {
            var state = s == 0 ? paged : whole
            state.focus = .messages
            _ = ViewModel.reduce(&state, .key(.char("/")))
            for c in "message" { _ = ViewModel.reduce(&state, .key(.char(c))) }
            _ = ViewModel.reduce(&state, .key(.enter))
            let query = state.search!.query!
            let hit = SearchState.Hit(txId: target.txId, conversation: alice, sender: "Alice", text: target.message.body, blockTime: target.message.blockTime)
            _ = ViewModel.reduce(&state, .searchResults(query, [hit]))
            if s == 0 { paged = state } else { whole = state }
        }
        ViewModel.loadHistory(&paged, read: Self.read(store))
        #expect(paged.messages[alice]?.contains { $0.txId == target.txId } == true)
        #expect(paged.partialHistory == [alice])  // only as far as the hit: the first ten stay in the store
        let screen = Render.screen(paged, width: 100, height: 30)
        #expect(screen == Render.screen(whole, width: 100, height: 30))
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
        _ = ViewModel.reduce(&s, .message(alice, MessageRow(new, contact: Self.contact)))
        _ = ViewModel.reduce(&s, .key(.enter))
        ViewModel.loadHistory(&s, read: Self.read(store))
        #expect((ViewState.historyPage...ViewState.historyPage + 1).contains(s.messages[alice]?.count ?? 0))  // (a page never splits an instant)
        #expect(s.messages[alice]?.last?.txId == "new")
    }
}
