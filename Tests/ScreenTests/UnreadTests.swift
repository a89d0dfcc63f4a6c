import ChatUI
import SyncCore
import Testing

/// `u` opens the next conversation with unread messages, and opening one puts
/// a `new` line above its first unread message.
@Suite("Unread: jump and the new line")
struct UnreadTests {
    /// Carol has three messages, the last two unread.
    func withUnread() -> ViewState {
        var s = sampleState()
        _ = ViewModel.reduce(&s, .key(.escape))
        let rows = [
            MessageRow(txId: "c1", outgoing: false, sender: "Carol", text: "old news", kind: .contextual, blockTime: at(100), channel: .realtime),
            MessageRow(txId: "c2", outgoing: true, sender: "Carol", text: "my answer", kind: .contextual, blockTime: at(150), channel: .sent),
            MessageRow(txId: "c3", outgoing: false, sender: "Carol", text: "first unread", kind: .contextual, blockTime: at(200), channel: .push),
            MessageRow(txId: "c4", outgoing: false, sender: "Carol", text: "second unread", kind: .contextual, blockTime: at(250), channel: .push),
        ]
        _ = ViewModel.reduce(&s, .history(carol, rows))
        var list = s.conversations
        let i = list.firstIndex { $0.address == carol }!
        list[i].unread = 2
        _ = ViewModel.reduce(&s, .conversations(list))
        return s
    }

    @Test("u opens the next conversation with unread messages, after the selection and around, and leaves the keys on the list, so u again jumps on; none left: it says so")
    func jump() {
        var start = withUnread()
        var list = start.conversations
        let b = list.firstIndex { $0.address == bob }!
        list[b].unread = 1
        _ = ViewModel.reduce(&start, .conversations(list))
        let store = TestStore(start)
        #expect(store.state.selected == 0 && store.state.focus == .list)
        let c = store.state.conversations.firstIndex { $0.address == carol }!
        let first = min(b, c), second = max(b, c)
        let names = [b: "bob", c: "carol"], addresses = [b: bob, c: carol]
        store.send(.key(.char("u")), commands: [.apply(.open(handle: names[first]!))]) {
            $0.selected = first
            $0.open = addresses[first]!
            $0.newMarker = first == c ? NewMarker(conversation: carol, unread: 2, txId: "c3") : NewMarker(conversation: bob, unread: 1, txId: nil)
        }
        store.send(.unread(addresses[first]!, 0)) { $0.conversations[first].unread = 0 }  // the engine read it: its answer to open
        store.send(.key(.char("u")), commands: [.apply(.open(handle: names[second]!))]) {
            $0.selected = second
            $0.open = addresses[second]!
            $0.newMarker = second == c ? NewMarker(conversation: carol, unread: 2, txId: "c3") : NewMarker(conversation: bob, unread: 1, txId: nil)
        }
        store.send(.unread(addresses[second]!, 0)) { $0.conversations[second].unread = 0 }
        store.send(.key(.char("u"))) { $0.notice = "no unread messages" }
    }

    @Test("the new line stands above the first unread message, and stays while the conversation is open")
    func marker() {
        let store = TestStore(withUnread())
        let c = store.state.conversations.firstIndex { $0.address == carol }!
        store.send(.key(.down)) { $0.selected = 1 }
        store.send(.key(.down)) { $0.selected = c }
        store.send(.key(.enter), commands: [.apply(.open(handle: "carol"))]) {
            $0.open = carol
            $0.focus = .compose
            $0.newMarker = NewMarker(conversation: carol, unread: 2, txId: "c3")
        }
        store.send(.unread(carol, 0)) { $0.conversations[c].unread = 0 }  // read: the line stays all the same
        let t = Render.screen(store.state, width: 100, height: 30).text
        let newRow = t.firstIndex { $0.contains("── new ──") }
        let firstUnread = t.firstIndex { $0.contains("Carol: first unread") }
        #expect(newRow != nil && firstUnread != nil && newRow! + 1 == firstUnread!)
        #expect(t.firstIndex { $0.contains("you: my answer") }! < newRow!)
        // Opening a conversation with nothing unread takes the line away.
        store.send(.key(.escape)) { $0.focus = .list }
        store.send(.key(.up)) { $0.selected = 1 }
        #expect(store.state.selectedConversation?.address == bob)
        store.send(.key(.enter), commands: [.apply(.open(handle: "bob"))]) {
            $0.open = bob
            $0.focus = .compose
            $0.newMarker = nil
        }
    }
}
