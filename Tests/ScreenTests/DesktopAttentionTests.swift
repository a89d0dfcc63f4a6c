import ChatUI
import SyncCore
import SyncEngine
import Testing

/// The decision: a desktop notification only while the terminal is unfocused (or
/// never says), never for a muted conversation, the body hidden with preview off, one per
/// conversation per second (rule 15), only for what lands while the app runs; and how the
/// method is chosen for a terminal.
@Suite("Desktop notifications: when, and by which protocol")
struct DesktopAttentionTests {
    static func incoming(_ tx: String, _ text: String = "lunch at one?", at second: Int64 = 400, sender: String = "Carol") -> MessageRow {
        MessageRow(txId: tx, outgoing: false, sender: sender, text: text, kind: .contextual, blockTime: at(second), channel: .realtime)
    }

    /// The sample state (Alice open, Bob muted, Carol not open), notifying by OSC 777, at `second`.
    static func state(focused: Bool?, second: Int64 = 400) -> ViewState {
        var s = sampleState()
        _ = ViewModel.reduce(&s, .notifyBy(.osc777, passthrough: false))
        if let focused { _ = ViewModel.reduce(&s, .focus(focused)) }
        _ = ViewModel.reduce(&s, .clock(at(second), speed: 30))
        return s
    }

    static func notifications(_ commands: [Command]) -> [String] {
        commands.compactMap { if case .notify(let t, let b) = $0 { "\(t)|\(b)" } else { nil } }
    }

    @Test("focused: the unread marks, no notification; unfocused, or a terminal that never says: one, with the contact's name and the text, the open conversation's too")
    func onlyWhenAway() {
        var focused = Self.state(focused: true)
        #expect(Self.notifications(ViewModel.reduce(&focused, .message(carol, Self.incoming("c1")))).isEmpty)
        for case let s? in [Self.state(focused: false), Self.state(focused: nil)] {
            var s = s
            #expect(Self.notifications(ViewModel.reduce(&s, .message(carol, Self.incoming("c1")))) == ["Carol|lunch at one?"])
            #expect(Self.notifications(ViewModel.reduce(&s, .message(alice, Self.incoming("a1", "on my way", sender: "Alice")))) == ["Alice|on my way"],
                    "the open conversation, while you are away, too")
        }
        // Focus comes back, then goes: the terminal's word each time.
        var s = Self.state(focused: false)
        _ = ViewModel.reduce(&s, .focus(true))
        #expect(Self.notifications(ViewModel.reduce(&s, .message(carol, Self.incoming("c2")))).isEmpty)
        _ = ViewModel.reduce(&s, .focus(false))
        #expect(Self.notifications(ViewModel.reduce(&s, .message(carol, Self.incoming("c3", at: 402)))).count == 1)
    }

    @Test("never: a muted contact, your own message, history older than the app's start, notifications off (m), or --notify off; with preview hidden the body says only that a message came")
    func never() {
        var s = Self.state(focused: false)
        #expect(Self.notifications(ViewModel.reduce(&s, .message(bob, Self.incoming("b1", sender: "Bob")))).isEmpty, "Bob is muted")
        let mine = MessageRow(txId: "o1", outgoing: true, sender: "Carol", text: "x", kind: .contextual, blockTime: at(400), channel: .sent)
        #expect(Self.notifications(ViewModel.reduce(&s, .message(carol, mine))).isEmpty)
        #expect(Self.notifications(ViewModel.reduce(&s, .message(carol, Self.incoming("old", at: 100)))).isEmpty, "landed before the app started")
        var st = s.status.engine
        st.mode = .off
        _ = ViewModel.reduce(&s, .engineStatus(st))
        #expect(Self.notifications(ViewModel.reduce(&s, .message(carol, Self.incoming("c1")))).isEmpty)
        st.mode = .remotePush
        st.preview = .hidden
        _ = ViewModel.reduce(&s, .engineStatus(st))
        #expect(Self.notifications(ViewModel.reduce(&s, .message(carol, Self.incoming("c2", "the secret plan")))) == ["synchat|New message"])
        var off = Self.state(focused: false)
        _ = ViewModel.reduce(&off, .notifyBy(.off, passthrough: false))
        #expect(Self.notifications(ViewModel.reduce(&off, .message(carol, Self.incoming("c1")))).isEmpty)
    }

    @Test("rule 15's rate limit holds: one notification per conversation per second of the world's clock, each conversation its own")
    func rateLimit() {
        var s = Self.state(focused: false)
        var n = 0
        for i in 0..<5 { n += Self.notifications(ViewModel.reduce(&s, .message(carol, Self.incoming("c\(i)")))).count }
        n += Self.notifications(ViewModel.reduce(&s, .message(alice, Self.incoming("a1", sender: "Alice")))).count
        #expect(n == 2, "Carol once, Alice once, within the same second")
        _ = ViewModel.reduce(&s, .clock(at(401), speed: 30))
        #expect(Self.notifications(ViewModel.reduce(&s, .message(carol, Self.incoming("c9", at: 401)))).count == 1, "a second later")
    }

    @Test("in the background the engine's banners (rule 15 decided them) reach the desktop while away, not while focused")
    func banners() {
        var s = Self.state(focused: false)
        let banner = BannerRow(conversation: carol, title: "Carol", body: "lunch?", at: at(400))
        #expect(Self.notifications(ViewModel.reduce(&s, .banner(banner))) == ["Carol|lunch?"])
        var focused = Self.state(focused: true)
        #expect(Self.notifications(ViewModel.reduce(&focused, .banner(banner))).isEmpty)
    }

    typealias Identity = DesktopNotification.Identity

    @Test("auto: kitty's OSC 99 answer first; else by name (XTVERSION, TERM_PROGRAM, TERM): foot and urxvt OSC 777, WezTerm, iTerm2 and Ghostty OSC 9, kitty OSC 99; else the bell; asked by name, that one")
    func choice() {
        func method(_ id: Identity, _ r: DesktopNotification.Request = .auto) -> DesktopNotification.Method { DesktopNotification.choose(r, id).method }
        #expect(method(Identity(term: "xterm-256color", answersOSC99: true)) == .osc99)
        #expect(method(Identity(term: "foot")) == .osc777)
        #expect(method(Identity(term: "foot-extra")) == .osc777)
        #expect(method(Identity(term: "rxvt-unicode-256color")) == .osc777)
        #expect(method(Identity(term: "xterm-256color", termProgram: "WezTerm")) == .osc9)
        #expect(method(Identity(term: "xterm-256color", termProgram: "iTerm.app")) == .osc9)
        #expect(method(Identity(term: "xterm-ghostty")) == .osc9)
        #expect(method(Identity(term: "xterm-kitty")) == .osc99)
        #expect(method(Identity(term: "xterm-256color", version: "foot(1.13.1)")) == .osc777, "XTVERSION before TERM")
        #expect(method(Identity(term: "xterm-256color")) == .bell)
        #expect(method(Identity(term: "foot"), .osc9) == .osc9)
        #expect(method(Identity(term: "foot"), .off) == .off)
        let report = DesktopNotification.choose(.auto, Identity(term: "xterm", termProgram: "\u{1B}]52;c;cHduZWQ=\u{07}WezTerm")).report
        #expect(report.hasPrefix("notifications: osc9 (TERM_PROGRAM says ]52;c;cHduZWQ=WezTerm)"), "\(report)")
        #expect(!report.unicodeScalars.contains { $0.value < 0x20 })
    }

    @Test("inside tmux: the outer terminal as tmux's client knows it, wrapped in passthrough when allow-passthrough is on; the bell when it is off or tmux cannot say")
    func tmux() {
        let on = DesktopNotification.choose(.auto, Identity(term: "tmux-256color", termProgram: "tmux", insideTmux: true, tmuxClient: ["foot"], tmuxPassthrough: true))
        #expect(on.method == .osc777 && on.passthrough)
        #expect(on.report.contains("through tmux's passthrough"))
        let off = DesktopNotification.choose(.auto, Identity(term: "tmux-256color", insideTmux: true, tmuxClient: ["foot"], tmuxPassthrough: false))
        #expect(off.method == .bell && !off.passthrough)
        #expect(off.report.contains("set -g allow-passthrough on"))
        #expect(DesktopNotification.choose(.auto, Identity(term: "tmux-256color", insideTmux: true)).method == .bell)
        let asked = DesktopNotification.choose(.osc777, Identity(term: "tmux-256color", insideTmux: true, tmuxPassthrough: false))
        #expect(asked.method == .osc777 && asked.passthrough, "asked by name: done as asked, wrapped")
    }

    @Test("a $TMUX left behind (tmux cannot be asked, the terminal answers XTVERSION as itself): not inside tmux, the terminal's own answer")
    func staleTmux() {
        let stale = DesktopNotification.choose(.auto, Identity(term: "foot", version: "foot(1.13.1)", insideTmux: true))
        #expect(stale.method == .osc777 && !stale.passthrough, "\(stale.report)")
        #expect(stale.report.contains("XTVERSION says foot"))
        let asked = DesktopNotification.choose(.osc777, Identity(term: "foot", version: "foot(1.13.1)", insideTmux: true))
        #expect(!asked.passthrough, "never wrapped for a tmux that is not there")
        let real = DesktopNotification.choose(.auto, Identity(term: "tmux-256color", version: "tmux 3.3a", insideTmux: true))
        #expect(real.method == .bell, "tmux answers XTVERSION as tmux: still inside it, and it could not say what is outside")
    }
}
