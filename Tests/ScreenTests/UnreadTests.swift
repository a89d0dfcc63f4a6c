import ChatUI
import SyncCore
import Testing

/// Issue 15 #3: `u` opens the next conversation with unread messages, and opening one puts
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

    @Test("u opens the next conversation with unread messages, after the selection and around; none left: it says so")
    func jump() {
        var s = withUnread()
        s.selected = 0
        let commands = reduceAsApp(&s, .key(.char("u")))
        #expect(s.open == carol && commands == [.apply(.open(handle: "carol"))])
        #expect(s.conversations.first { $0.address == carol }?.unread == 0)
        _ = ViewModel.reduce(&s, .key(.escape))
        #expect(ViewModel.reduce(&s, .key(.char("u"))).isEmpty)
        #expect(s.notice == "no unread messages")
    }

    @Test("the new line stands above the first unread message, and stays while the conversation is open")
    func marker() {
        var s = withUnread()
        s.selected = s.conversations.firstIndex { $0.address == carol }!
        _ = ViewModel.reduce(&s, .key(.enter))
        #expect(s.newMarker == NewMarker(conversation: carol, unread: 2, txId: "c3"))
        let t = Render.screen(s, width: 100, height: 30).text
        let newRow = t.firstIndex { $0.contains("── new ──") }
        let firstUnread = t.firstIndex { $0.contains("Carol: first unread") }
        #expect(newRow != nil && firstUnread != nil && newRow! + 1 == firstUnread!)
        #expect(t.firstIndex { $0.contains("you: my answer") }! < newRow!)
        // Opening a conversation with nothing unread takes the line away.
        _ = ViewModel.reduce(&s, .key(.escape))
        s.selected = s.conversations.firstIndex { $0.address == bob }!
        _ = ViewModel.reduce(&s, .key(.enter))
        #expect(s.newMarker == nil)
    }
}
