import Testing
@testable import SyncCore

@Suite("Notifications (rule 15)")
struct NotificationPresenterTests {
    let alice = Contact(address: Address("a"), handle: "alice", displayName: "Alice")
    let bob = Contact(address: Address("b"), handle: "bob", displayName: "Bob")

    @Test("rule 15: at most one banner per conversation per second")
    func rateLimit() {
        var n = NotificationPresenter()
        #expect(n.incoming(from: alice, kind: .contextual, text: "1", mode: .remotePush, now: .zero) == .show(Banner(conversation: alice.address, title: "Alice", body: "1")))
        #expect(n.incoming(from: alice, kind: .contextual, text: "2", mode: .remotePush, now: .zero + .milliseconds(999))
                == .suppressed(reason: .rateLimited(oneEvery: .seconds(1))))
        #expect(n.incoming(from: bob, kind: .contextual, text: "3", mode: .remotePush, now: .zero + .milliseconds(999)) != .suppressed(reason: .rateLimited(oneEvery: .seconds(1))))
        #expect(n.incoming(from: alice, kind: .contextual, text: "4", mode: .remotePush, now: .zero + .seconds(1)) == .show(Banner(conversation: alice.address, title: "Alice", body: "4")))
    }

    @Test("rule 15: preview modes", arguments: [
        (PreviewMode.message, "Alice", "see you at 7"),
        (PreviewMode.contact, "Alice", "New message"),
        (PreviewMode.hidden, "synchat", "New message"),
    ])
    func previews(mode: PreviewMode, title: String, body: String) {
        var n = NotificationPresenter(preview: mode)
        #expect(n.incoming(from: alice, kind: .contextual, text: "see you at 7", mode: .remotePush, now: .zero)
                == .show(Banner(conversation: alice.address, title: title, body: body)))
    }

    @Test("rule 15: mode off and muted contacts raise nothing")
    func offAndMuted() {
        var n = NotificationPresenter()
        var muted = alice
        muted.muted = true
        #expect(n.incoming(from: alice, kind: .contextual, text: "x", mode: .off, now: .zero) == .suppressed(reason: .notificationsOff))
        #expect(n.incoming(from: muted, kind: .contextual, text: "x", mode: .remotePush, now: .zero) == .suppressed(reason: .muted(handle: "alice")))
    }
}

@Suite("Untrusted text")
struct UntrustedTextTests {
    @Test("controls and escape sequences become visible; wide characters pass")
    func visible() {
        #expect(UntrustedText.visible("\u{1B}]0;pwned\u{07}") == "^[]0;pwned^G")
        #expect(UntrustedText.visible("a\u{1B}[2Jb\rc\u{08}") == "a^[[2Jb^Mc^H")
        #expect(UntrustedText.visible("\u{9B}6n\u{7F}") == "<U+009B>6n^?")
        #expect(UntrustedText.visible("こんにちは 🎉") == "こんにちは 🎉")
        #expect(UntrustedText.visible("evil\u{202E}gnp.exe") == "evil<U+202E>gnp.exe")
        #expect(UntrustedText.visible("a\u{2066}b\u{2069}\u{200F}") == "a<U+2066>b<U+2069><U+200F>")
        #expect(UntrustedText.visible("👩\u{200D}💻 é") == "👩\u{200D}💻 é")  // joiners and combining marks stay
    }
}
