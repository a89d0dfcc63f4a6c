import ChatUI
import AppActions
import SyncCore
import SyncEngine
import Testing

@Suite("View-model reducer")
struct ViewModelTests {
    func listFocused() -> ViewState {
        var s = sampleState()
        _ = ViewModel.reduce(&s, .key(.escape))
        #expect(s.focus == .list)
        return s
    }

    @Test("Tab cycles focus: list → messages → compose → list")
    func focus() {
        var s = listFocused()
        _ = ViewModel.reduce(&s, .key(.tab)); #expect(s.focus == .messages)
        _ = ViewModel.reduce(&s, .key(.tab)); #expect(s.focus == .compose)
        _ = ViewModel.reduce(&s, .key(.tab)); #expect(s.focus == .list)
    }

    @Test("↑/↓ and j/k move the selection in the list and scroll in the messages")
    func moveAndScroll() {
        var s = listFocused()
        _ = ViewModel.reduce(&s, .key(.down)); #expect(s.selected == 1)
        _ = ViewModel.reduce(&s, .key(.char("j"))); #expect(s.selected == 2)
        _ = ViewModel.reduce(&s, .key(.down)); #expect(s.selected == 2)  // stays at the end
        _ = ViewModel.reduce(&s, .key(.char("k"))); #expect(s.selected == 1)
        _ = ViewModel.reduce(&s, .key(.tab))
        _ = ViewModel.reduce(&s, .key(.up)); #expect(s.scroll == 1)
        _ = ViewModel.reduce(&s, .key(.down)); #expect(s.scroll == 0)
        _ = ViewModel.reduce(&s, .key(.pageUp)); #expect(s.scroll == 10)
        _ = ViewModel.reduce(&s, .key(.pageDown)); #expect(s.scroll == 0)
        _ = ViewModel.reduce(&s, .key(.pageUp))
        _ = ViewModel.reduce(&s, .key(.end)); #expect(s.scroll == 0)
    }

    @Test("Enter opens the selected conversation, marks it read and focuses the compose line")
    func open() {
        var s = listFocused()
        _ = ViewModel.reduce(&s, .key(.down))
        #expect(ViewModel.reduce(&s, .key(.enter)) == [.markRead(bob)])
        #expect(s.open == bob)
        #expect(s.focus == .compose)
    }

    @Test("lifecycle and fault keys become directives; p cycles ok → drop all → delay 90 s → ok")
    func faultKeys() {
        var s = listFocused()
        #expect(ViewModel.reduce(&s, .key(.char("b"))) == [.apply(.background)])
        #expect(ViewModel.reduce(&s, .key(.char("f"))) == [.apply(.foreground)])
        #expect(ViewModel.reduce(&s, .key(.char("p"))) == [.apply(.pushDrop(percent: 100))])
        #expect(ViewModel.reduce(&s, .key(.char("p"))) == [.apply(.pushDrop(percent: 0)), .apply(.pushDelay(.seconds(90)))])
        #expect(ViewModel.reduce(&s, .key(.char("p"))) == [.apply(.pushUp)])
        #expect(ViewModel.reduce(&s, .key(.char("r"))) == [.apply(.realtimeDown)])
        #expect(ViewModel.reduce(&s, .key(.char("r"))) == [.apply(.realtimeUp)])
        #expect(ViewModel.reduce(&s, .key(.char("s"))) == [.apply(.realtimeStale)])
        #expect(ViewModel.reduce(&s, .key(.char("x"))) == [.apply(.indexerDown)])
        #expect(ViewModel.reduce(&s, .key(.char("x"))) == [.apply(.indexerUp)])
        #expect(ViewModel.reduce(&s, .key(.char("t"))) == [.apply(.tokenExpire)])
        #expect(ViewModel.reduce(&s, .key(.char("S"))) == [.apply(.sync)])
    }

    @Test("m cycles the notification mode, +/- step the speed, l toggles the log, q quits")
    func settingsKeys() {
        var s = listFocused()
        #expect(ViewModel.reduce(&s, .key(.char("m"))) == [.setMode(.backgroundFetch)])
        #expect(ViewModel.reduce(&s, .key(.char("v"))) == [.setPreview(.contact)])
        #expect(ViewModel.reduce(&s, .key(.char("+"))) == [.setSpeed(60)])
        #expect(ViewModel.reduce(&s, .key(.char("-"))) == [.setSpeed(10)])
        _ = ViewModel.reduce(&s, .clock(s.status.clock, speed: 600))
        #expect(ViewModel.reduce(&s, .key(.char("+"))) == [.setSpeed(600)])
        #expect(s.showLog)
        _ = ViewModel.reduce(&s, .key(.char("l"))); #expect(!s.showLog)
        #expect(ViewModel.reduce(&s, .key(.char("q"))) == [.quit])
        #expect(s.quitting)
    }

    @Test("? opens the help; any key closes it without acting")
    func help() {
        var s = listFocused()
        _ = ViewModel.reduce(&s, .key(.char("?")))
        #expect(s.showHelp)
        #expect(ViewModel.reduce(&s, .key(.char("q"))) == [])
        #expect(!s.showHelp && !s.quitting)
    }

    @Test("the compose line edits like readline, keeps history, and Enter sends")
    func compose() {
        var s = sampleState()
        #expect(s.focus == .compose)
        for ch in "hello world" { _ = ViewModel.reduce(&s, .key(.char(ch))) }
        _ = ViewModel.reduce(&s, .key(.ctrl("w")))
        #expect(s.compose.string == "hello ")
        _ = ViewModel.reduce(&s, .key(.ctrl("a")))
        _ = ViewModel.reduce(&s, .key(.char(">")))
        _ = ViewModel.reduce(&s, .key(.end))
        _ = ViewModel.reduce(&s, .key(.left))
        _ = ViewModel.reduce(&s, .key(.backspace))
        #expect(s.compose.string == ">hell ")
        _ = ViewModel.reduce(&s, .key(.home))
        _ = ViewModel.reduce(&s, .key(.delete))
        _ = ViewModel.reduce(&s, .key(.right))
        _ = ViewModel.reduce(&s, .key(.ctrl("e")))
        #expect(s.compose.string == "hell " && s.compose.cursor == 5)
        #expect(ViewModel.reduce(&s, .key(.enter)) == [.send(to: alice, text: "hell ")])
        #expect(s.compose.string.isEmpty)
        for ch in "second" { _ = ViewModel.reduce(&s, .key(.char(ch))) }
        _ = ViewModel.reduce(&s, .key(.ctrl("u")))
        #expect(s.compose.string.isEmpty)
        for ch in "draft" { _ = ViewModel.reduce(&s, .key(.char(ch))) }
        _ = ViewModel.reduce(&s, .key(.up))
        #expect(s.compose.string == "hell ")
        _ = ViewModel.reduce(&s, .key(.down))
        #expect(s.compose.string == "draft")
        _ = ViewModel.reduce(&s, .key(.ctrl("u")))
        #expect(ViewModel.reduce(&s, .key(.enter)) == [])  // blank lines are not sent
        // Keys that are commands elsewhere are typed here.
        for ch in "qbfp" { _ = ViewModel.reduce(&s, .key(.char(ch))) }
        #expect(s.compose.string == "qbfp" && !s.quitting)
        _ = ViewModel.reduce(&s, .key(.escape))
        #expect(s.focus == .list)
    }

    /// Plays keys and returns every command they gave.
    func play(_ s: inout ViewState, _ keys: [Key]) -> [Command] {
        keys.flatMap { ViewModel.reduce(&s, .key($0)) }
    }

    func typing(_ text: String) -> [Key] { text.map { Key.char($0) } }

    @Test("issue 11 #7: a draft stays with its conversation: Enter, type, Esc, ↓, Enter, Enter sends nothing to Bob, and Alice's draft and cursor come back")
    func draftPerConversation() {
        var s = listFocused()
        #expect(s.selectedConversation?.address == alice)
        let commands = play(&s, [.enter] + typing("secret for alice only") + [.left, .left, .escape, .down, .enter, .enter])
        #expect(s.open == bob)
        #expect(!commands.contains { if case .send = $0 { return true } else { return false } })
        #expect(s.compose.string.isEmpty)  // Bob's line is his own, and empty
        _ = play(&s, typing("for bob") + [.escape, .up, .enter])
        #expect(s.open == alice)
        #expect(s.compose.string == "secret for alice only")
        #expect(s.compose.cursor == 19)  // where it was left
        // Each line is sent to its own conversation; the history is shared.
        #expect(play(&s, [.enter]) == [.send(to: alice, text: "secret for alice only")])
        _ = play(&s, [.escape, .down, .enter])
        #expect(s.compose.string == "for bob")
        #expect(play(&s, [.ctrl("u"), .up]) == [])
        #expect(s.compose.string == "secret for alice only")
        _ = play(&s, [.down])
        #expect(s.compose.string.isEmpty)
    }

    @Test("o opens the latest notification's conversation and foregrounds the app")
    func openBanner() {
        var s = listFocused()
        _ = ViewModel.reduce(&s, .banner(BannerRow(conversation: carol, title: "Carol", body: "hey", at: at(9))))
        #expect(ViewModel.reduce(&s, .key(.char("o"))) == [.apply(.foreground), .markRead(carol)])
        #expect(s.open == carol)
        #expect(s.selectedConversation?.address == carol)
    }

    @Test("the conversation list sorts by last activity and keeps the selection")
    func conversations() {
        var s = listFocused()
        _ = ViewModel.reduce(&s, .key(.down))  // Bob
        _ = ViewModel.reduce(&s, .conversations([
            ConversationRow(address: carol, name: "Carol", unread: 1, muted: false, lastActivity: at(900)),
            ConversationRow(address: alice, name: "Alice", unread: 0, muted: false, lastActivity: at(300)),
            ConversationRow(address: bob, name: "Bob", unread: 0, muted: true, lastActivity: at(200)),
        ]))
        #expect(s.conversations.map(\.name) == ["Carol", "Alice", "Bob"])
        #expect(s.selectedConversation?.address == bob)
    }

    @Test("a message lands in block-time order once; the open conversation is marked read in the foreground")
    func messages() {
        var s = sampleState()
        let late = MessageRow(txId: "x", outgoing: false, sender: "Alice", text: "x", kind: .contextual, blockTime: at(90), channel: .fetch)
        #expect(ViewModel.reduce(&s, .message(alice, late)) == [.markRead(alice)])
        #expect(s.messages[alice]!.map(\.txId) == ["1", "x", "2", "3"])
        #expect(ViewModel.reduce(&s, .message(alice, late)) == [])
        let other = MessageRow(txId: "y", outgoing: false, sender: "Bob", text: "y", kind: .contextual, blockTime: at(95), channel: .push)
        #expect(ViewModel.reduce(&s, .message(bob, other)) == [])
        s.scroll = 5
        _ = ViewModel.reduce(&s, .message(alice, MessageRow(txId: "z", outgoing: false, sender: "Alice", text: "z", kind: .contextual, blockTime: at(999), channel: .realtime)))
        #expect(s.scroll == 6)  // scrolled back: the view stays still
    }

    @Test("log lines and banners are bounded; coming back to the foreground clears banners and marks read")
    func logBannersStatus() {
        var s = sampleState()
        for i in 0..<(ViewState.logCapacity + 10) { _ = ViewModel.reduce(&s, .logLine("l\(i)")) }
        #expect(s.log.count == ViewState.logCapacity && s.log.last == "l\(ViewState.logCapacity + 9)")
        var st = s.status.engine
        st.lifecycle = .background
        _ = ViewModel.reduce(&s, .engineStatus(st))
        for i in 0..<30 { _ = ViewModel.reduce(&s, .banner(BannerRow(conversation: bob, title: "Bob", body: "\(i)", at: at(Int64(i))))) }
        #expect(s.banners.count == 20)
        st.lifecycle = .foreground
        #expect(ViewModel.reduce(&s, .engineStatus(st)) == [.markRead(alice)])
        #expect(s.banners.isEmpty)
    }

    @Test("a notice shows until the next key")
    func notice() {
        var s = listFocused()
        _ = ViewModel.reduce(&s, .notice("theme: unknown key"))
        #expect(s.notice == "theme: unknown key")
        #expect(Render.screen(s, width: 100, height: 24).text[21] == " theme: unknown key")
        _ = ViewModel.reduce(&s, .key(.down))
        #expect(s.notice == nil)
    }

    @Test("every key of the help table dispatches to its action")
    func keyTableDispatch() {
        for binding in KeyTable.global {
            for key in binding.keys where binding.keys.count == 1 || !KeyTable.global.contains(where: { $0.keys == [key] }) {
                #expect(KeyTable.action(for: key, in: KeyTable.global) == binding.action)
            }
        }
        #expect(KeyTable.action(for: .right, in: KeyTable.compose) == .right)
        #expect(KeyTable.action(for: .down, in: KeyTable.compose) == .historyDown)
    }

    @Test("one stream: a stored message moves its conversation up and counts unread unless it is open in the foreground; opening reads it")
    func messagesKeepTheList() {
        var s = sampleState()  // Alice open, foreground
        #expect(s.conversations.first { $0.address == alice }?.unread == 0)
        let fromCarol = MessageRow(txId: "c1", outgoing: false, sender: "Carol", text: "hey", kind: .contextual, blockTime: at(900), channel: .realtime)
        #expect(ViewModel.reduce(&s, .message(carol, fromCarol)) == [])
        #expect(s.conversations.first?.address == carol)  // newest activity first
        #expect(s.conversations.first?.unread == 1)
        #expect(s.selectedConversation?.address == alice)  // the selection stays on Alice
        let fromAlice = MessageRow(txId: "a9", outgoing: false, sender: "Alice", text: "read at once", kind: .contextual, blockTime: at(901), channel: .push)
        #expect(ViewModel.reduce(&s, .message(alice, fromAlice)) == [.markRead(alice)])
        #expect(s.conversations.first { $0.address == alice }?.unread == 0)
        _ = ViewModel.reduce(&s, .contact(Contact(address: carol, handle: "carol", displayName: "Carol R.", muted: true)))
        let c = s.conversations.first { $0.address == carol }
        #expect(c?.name == "Carol R." && c?.muted == true && c?.unread == 1)
    }

    @Test("ViewInput.from: the engine's events are all the view needs, with the world's clock on log lines")
    func fromEvents() {
        let m = StoredMessage(message: NetworkMessage(txId: "t1", conversation: alice, direction: .incoming, kind: .contextual, body: "hi\u{1B}[2J",
                                                      blockTime: at(60)), receivedAt: at(61), via: .realtime)
        let contact = Contact(address: alice, handle: "alice", displayName: "Alice")
        #expect(ViewInput.from(TimedEvent(at: at(61), event: .messageStored(m, contact: contact)))
                == [.message(alice, MessageRow(txId: "t1", outgoing: false, sender: "Alice", text: "hi\u{1B}[2J", kind: .contextual, blockTime: at(60), channel: .realtime))])
        var st = EngineStatus()
        st.realtime = .polling
        #expect(ViewInput.from(TimedEvent(at: at(5), event: .status(st))) == [.engineStatus(st)])
        #expect(ViewInput.from(TimedEvent(at: at(3661), event: .polling("stopped: realtime is back")))
                == [.logLine("09:01:01 polling: stopped: realtime is back")])
        #expect(ViewInput.from(TimedEvent(at: at(1), event: .messageSent(txId: "x", to: "bob"))).isEmpty)
    }
}
