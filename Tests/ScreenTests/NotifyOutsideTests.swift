import ChatUI
import SyncCore
import SyncEngine
import Testing

/// Outside the app, the bell (off unless asked for) and the unread count in the
/// terminal's title — our own words only — both following the preview mode.
@Suite("Bell and terminal title")
struct NotifyOutsideTests {
    static func incoming(_ tx: String, _ text: String) -> MessageRow {
        MessageRow(txId: tx, outgoing: false, sender: "Bob", text: text, kind: .contextual, blockTime: at(400), channel: .realtime)
    }

    @Test("a message in a conversation you are not reading rings the bell when asked; not in the open one, not with preview hidden, not by default")
    func bell() {
        var s = sampleState()  // Alice open, foreground
        #expect(ViewModel.reduce(&s, .message(bob, Self.incoming("b1", "hi"))).isEmpty)  // off by default
        s.bellEnabled = true
        #expect(ViewModel.reduce(&s, .message(bob, Self.incoming("b2", "hi"))) == [.bell])
        #expect(ViewModel.reduce(&s, .message(alice, MessageRow(txId: "a9", outgoing: false, sender: "Alice", text: "x", kind: .contextual,
                                                                 blockTime: at(401), channel: .realtime))).isEmpty)  // read by the engine, no bell
        var st = s.status.engine
        st.preview = .hidden
        _ = ViewModel.reduce(&s, .engineStatus(st))
        #expect(ViewModel.reduce(&s, .message(bob, Self.incoming("b3", "hi"))).isEmpty)
    }

    @Test("the title: synchat, with the unread count when there is one and the preview shows anything; never message text")
    func title() {
        var s = sampleState()
        var st = s.status.engine
        st.badge = 0
        _ = ViewModel.reduce(&s, .engineStatus(st))
        #expect(s.terminalTitle == "synchat")
        st.badge = 4
        _ = ViewModel.reduce(&s, .engineStatus(st))
        _ = ViewModel.reduce(&s, .message(bob, Self.incoming("b1", "\u{1B}]2;PWNED\u{07}")))
        #expect(s.terminalTitle == "synchat (4 unread)")
        st.preview = .hidden
        _ = ViewModel.reduce(&s, .engineStatus(st))
        #expect(s.terminalTitle == "synchat")
    }
}
