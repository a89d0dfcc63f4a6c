import ChatUI
import ClientRuntime
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

    // The key tests read as TCA's TestStore tests: each key, then the whole change of state it
    // makes and the commands it gives. Anything else that changed fails the test with a diff.

    @Test("Tab cycles focus: list → messages → compose → sync log → list; without the log, compose → list")
    func focus() {
        let store = TestStore(listFocused())
        store.send(.key(.tab)) { $0.focus = .messages }
        store.send(.key(.tab)) { $0.focus = .compose }
        store.send(.key(.tab)) { $0.focus = .log }
        store.send(.key(.tab)) { $0.focus = .list }
        store.send(.key(.char("l"))) { $0.showLog = false }
        store.send(.key(.tab)) { $0.focus = .messages }
        store.send(.key(.tab)) { $0.focus = .compose }
        store.send(.key(.tab)) { $0.focus = .list }
    }

    @Test("↑/↓ and j/k move the selection in the list and scroll in the messages")
    func moveAndScroll() {
        let store = TestStore(listFocused())
        store.send(.key(.down)) { $0.selected = 1 }
        store.send(.key(.char("j"))) { $0.selected = 2 }
        store.send(.key(.down))  // stays at the end
        store.send(.key(.char("k"))) { $0.selected = 1 }
        store.send(.key(.tab)) { $0.focus = .messages }
        store.send(.key(.up)) { $0.scroll = 1 }
        store.send(.key(.down)) { $0.scroll = 0 }
        store.send(.key(.pageUp)) { $0.scroll = 10 }
        store.send(.key(.pageDown)) { $0.scroll = 0 }
        store.send(.key(.pageUp)) { $0.scroll = 10 }
        store.send(.key(.end)) { $0.scroll = 0 }
    }

    @Test("Enter opens the selected conversation, marks it read and focuses the compose line")
    func open() {
        let store = TestStore(listFocused())
        store.send(.key(.down)) { $0.selected = 1 }
        store.send(.key(.enter), commands: [.apply(.open(handle: "bob"))]) {
            $0.open = bob
            $0.focus = .compose
            $0.newMarker = nil  // the sample's new line was Alice's
        }
    }

    @Test("lifecycle keys become directives; fault keys become toggles the session resolves against the world's truth (the view keeps no copy)")
    func faultKeys() {
        let store = TestStore(listFocused())
        store.send(.key(.char("b")), commands: [.apply(.background)])
        store.send(.key(.char("f")), commands: [.apply(.foreground)])
        store.send(.key(.char("p")), commands: [.toggleFault(.push)])
        store.send(.key(.char("p")), commands: [.toggleFault(.push)])
        store.send(.key(.char("r")), commands: [.toggleFault(.realtime)])
        store.send(.key(.char("s")), commands: [.apply(.fault(.realtimeStale))])
        store.send(.key(.char("x")), commands: [.toggleFault(.indexer)])
        store.send(.key(.char("A")), commands: [.toggleFault(.network)])
        store.send(.key(.char("t")), commands: [.apply(.fault(.tokenExpire))])
        store.send(.key(.char("S")), commands: [.apply(.sync)])
    }

    @Test("m cycles the notification mode, +/- step the speed, l toggles the log, q quits")
    func settingsKeys() {
        let store = TestStore(listFocused())
        // The mode, preview and speed are the app's to change: the keys only ask.
        store.send(.key(.char("m")), commands: [.apply(.mode(.backgroundFetch))])
        store.send(.key(.char("v")), commands: [.apply(.preview(.contact))])
        store.send(.key(.char("+")), commands: [.setSpeed(60)])
        store.send(.key(.char("-")), commands: [.setSpeed(10)])
        store.send(.clock(store.state.status.clock, speed: 300)) { $0.status.speed = 300 }
        store.send(.key(.char("+")), commands: [.setSpeed(300)])  // the fastest already
        store.send(.key(.char("l"))) { $0.showLog = false }
        store.send(.key(.char("q")), commands: [.quit]) { $0.quitting = true }
    }

    @Test("? opens the help; any key closes it without acting")
    func help() {
        let store = TestStore(listFocused())
        store.send(.key(.char("?"))) { $0.showHelp = true }
        store.send(.key(.char("q"))) { $0.showHelp = false }  // no .quit, not quitting
    }

    @Test("the compose line edits like readline, keeps history, and Enter sends")
    func compose() {
        let store = TestStore(sampleState())
        #expect(store.state.focus == .compose && store.state.open == alice)
        store.type("hello world") { $0.drafts[alice] = LineEditor("hello world") }
        store.send(.key(.ctrl("w"))) { $0.drafts[alice] = LineEditor("hello ") }
        store.send(.key(.ctrl("a"))) { $0.drafts[alice]!.home() }
        store.send(.key(.char(">"))) { $0.drafts[alice] = editor(">hello ", cursor: 1) }
        store.send(.key(.end)) { $0.drafts[alice]!.end() }
        store.send(.key(.left)) { $0.drafts[alice]!.left() }
        store.send(.key(.backspace)) { $0.drafts[alice] = editor(">hell ", cursor: 5) }
        store.send(.key(.home)) { $0.drafts[alice]!.home() }
        store.send(.key(.delete)) { $0.drafts[alice] = editor("hell ", cursor: 0) }
        store.send(.key(.right)) { $0.drafts[alice]!.right() }
        store.send(.key(.ctrl("e"))) { $0.drafts[alice] = LineEditor("hell ") }
        store.send(.key(.enter), commands: [.apply(.send(handle: "alice", text: "hell "))]) {
            $0.drafts[alice] = nil  // a sent line leaves no draft behind
            $0.history.record("hell ")
        }
        store.type("second") { $0.drafts[alice] = LineEditor("second") }
        store.send(.key(.ctrl("u"))) { $0.drafts[alice] = LineEditor() }
        store.type("draft") { $0.drafts[alice] = LineEditor("draft") }
        store.send(.key(.up)) { $0.drafts[alice]!.historyUp($0.history) }
        #expect(store.state.compose.string == "hell ")
        store.send(.key(.down)) { $0.drafts[alice] = LineEditor("draft") }
        store.send(.key(.ctrl("u"))) { $0.drafts[alice] = LineEditor() }
        store.send(.key(.enter))  // blank lines are not sent
        // Keys that are commands elsewhere are typed here.
        store.type("qbfp") { $0.drafts[alice] = LineEditor("qbfp") }
        store.send(.key(.escape)) { $0.focus = .list }
    }

    @Test("the TestStore is exhaustive: a change nobody stated, or a command nobody expected, fails with a diff")
    func testStoreCatchesWhatWasNotSaid() {
        let store = TestStore(listFocused())
        withKnownIssue {
            store.send(.key(.down))  // moves the selection, unstated
        } matching: { issue in
            let text = issue.comments.map(\.rawValue).joined()
            return text.contains("the state differs") && text.contains("-   selected: 0") && text.contains("+   selected: 1")
        }
        withKnownIssue {
            store.send(.key(.char("b")))  // asks for the background, unstated
        } matching: { issue in
            issue.comments.map(\.rawValue).joined().contains("the commands differ")
        }
    }

    /// A line holding `text` with the cursor at `cursor`, as the keys leave it.
    func editor(_ text: String, cursor: Int) -> LineEditor {
        var e = LineEditor(text)
        for _ in cursor..<text.count { e.left() }
        return e
    }

    @Test("a draft stays with its conversation: Enter, type, Esc, ↓, Enter, Enter sends nothing to Bob, and Alice's draft and cursor come back")
    func draftPerConversation() {
        let store = TestStore(listFocused())
        #expect(store.state.selectedConversation?.address == alice)
        store.send(.key(.enter), commands: [.apply(.open(handle: "alice"))]) { $0.focus = .compose }
        store.type("secret for alice only") { $0.drafts[alice] = LineEditor("secret for alice only") }
        store.send(.key(.left)) { $0.drafts[alice]!.left() }
        store.send(.key(.left)) { $0.drafts[alice]!.left() }
        store.send(.key(.escape)) { $0.focus = .list }
        store.send(.key(.down)) { $0.selected = 1 }
        store.send(.key(.enter), commands: [.apply(.open(handle: "bob"))]) {
            $0.open = bob
            $0.focus = .compose
            $0.newMarker = nil  // the sample's new line was Alice's
        }
        store.send(.key(.enter))  // Bob's line is his own, and empty: nothing is sent
        store.type("for bob") { $0.drafts[bob] = LineEditor("for bob") }
        store.send(.key(.escape)) { $0.focus = .list }
        store.send(.key(.up)) { $0.selected = 0 }
        store.send(.key(.enter), commands: [.apply(.open(handle: "alice"))]) {
            $0.open = alice
            $0.focus = .compose
        }
        #expect(store.state.compose.string == "secret for alice only")
        #expect(store.state.compose.cursor == 19)  // where it was left
        // Each line is sent to its own conversation; the history is shared.
        store.send(.key(.enter), commands: [.apply(.send(handle: "alice", text: "secret for alice only"))]) {
            $0.drafts[alice] = nil
            $0.history.record("secret for alice only")
        }
        store.send(.key(.escape)) { $0.focus = .list }
        store.send(.key(.down)) { $0.selected = 1 }
        store.send(.key(.enter), commands: [.apply(.open(handle: "bob"))]) {
            $0.open = bob
            $0.focus = .compose
            $0.newMarker = nil  // the sample's new line was Alice's
        }
        #expect(store.state.compose.string == "for bob")
        store.send(.key(.ctrl("u"))) { $0.drafts[bob] = LineEditor() }
        store.send(.key(.up)) { $0.drafts[bob]!.historyUp($0.history) }
        #expect(store.state.compose.string == "secret for alice only")
        store.send(.key(.down)) { $0.drafts[bob] = LineEditor() }
    }

    @Test("o opens the latest notification's conversation and foregrounds the app")
    func openBanner() {
        let store = TestStore(listFocused())
        let banner = BannerRow(conversation: carol, title: "Carol", body: "hey", at: at(9))
        store.send(.banner(banner)) { $0.banners = [banner] }
        store.send(.key(.char("o")), commands: [.apply(.foreground), .apply(.open(handle: "carol"))]) {
            $0.open = carol
            $0.selected = 2
            $0.focus = .compose
            $0.newMarker = nil  // the sample's new line was Alice's
        }
        #expect(store.state.selectedConversation?.address == carol)
    }

    @Test("the conversation list sorts by last activity and keeps the selection")
    func conversations() {
        let store = TestStore(listFocused())
        store.send(.key(.down)) { $0.selected = 1 }  // Bob
        let rows = [
            ConversationRow(address: alice, name: "Alice", unread: 0, muted: false, lastActivity: at(300)),
            ConversationRow(address: bob, name: "Bob", unread: 0, muted: true, lastActivity: at(200)),
            ConversationRow(address: carol, name: "Carol", unread: 1, muted: false, lastActivity: at(900)),
        ]
        store.send(.conversations(rows)) {
            $0.conversations = [rows[2], rows[0], rows[1]]  // newest activity first
            $0.selected = 2  // still Bob
        }
        #expect(store.state.selectedConversation?.address == bob)
    }

    @Test("a message lands in block-time order once; in the open conversation in the foreground it is not counted unread (the engine read it)")
    func messages() {
        var s = sampleState()
        let late = MessageRow(txId: "x", outgoing: false, sender: "Alice", text: "x", kind: .contextual, blockTime: at(90), channel: .fetch)
        #expect(ViewModel.reduce(&s, .message(alice, late)) == [])  // the engine reads it as it stores it
        #expect(s.messages[alice]!.map(\.txId) == ["1", "x", "2", "3"])
        #expect(s.conversations.first { $0.address == alice }?.unread == 0)
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
        #expect(s.log.count == ViewState.logCapacity && s.log.last?.text == "l\(ViewState.logCapacity + 9)")
        #expect(s.logCount == ViewState.logCapacity + 11)  // the sample's own line, and these
        var st = s.status.engine
        st.lifecycle = .background
        _ = ViewModel.reduce(&s, .engineStatus(st))
        for i in 0..<30 { _ = ViewModel.reduce(&s, .banner(BannerRow(conversation: bob, title: "Bob", body: "\(i)", at: at(Int64(i))))) }
        #expect(s.banners.count == 20)
        st.lifecycle = .foreground
        #expect(ViewModel.reduce(&s, .engineStatus(st)) == [.apply(.open(handle: "alice"))])
        #expect(s.banners.isEmpty)
    }

    @Test("a notice shows until the next key, on a row of its own above the compose line, which stays in view")
    func notice() {
        let store = TestStore(listFocused())
        let before = Render.screen(store.state, width: 100, height: 24).text
        store.send(.notice("theme: unknown key")) { $0.notice = "theme: unknown key" }
        let shown = Render.screen(store.state, width: 100, height: 24).text
        #expect(shown[20] == " theme: unknown key" && shown[21] == before[21], "\(shown[20])\n\(shown[21])")
        store.send(.key(.down)) {
            $0.notice = nil
            $0.selected = 1
        }
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

    @Test("one stream: a stored message moves its conversation up; its unread count is the store's, as the engine tells it; opening reads it")
    func messagesKeepTheList() {
        var s = sampleState()  // Alice open, foreground
        #expect(s.conversations.first { $0.address == alice }?.unread == 0)
        let fromCarol = MessageRow(txId: "c1", outgoing: false, sender: "Carol", text: "hey", kind: .contextual, blockTime: at(900), channel: .realtime)
        #expect(ViewModel.reduce(&s, .message(carol, fromCarol)) == [])
        #expect(s.conversations.first?.address == carol)  // newest activity first
        #expect(s.conversations.first?.unread == 0)  // the view counts nothing itself
        #expect(ViewModel.reduce(&s, .unread(carol, 1)) == [])
        #expect(s.conversations.first?.unread == 1)
        #expect(s.selectedConversation?.address == alice)  // the selection stays on Alice
        let fromAlice = MessageRow(txId: "a9", outgoing: false, sender: "Alice", text: "read at once", kind: .contextual, blockTime: at(901), channel: .push)
        #expect(ViewModel.reduce(&s, .message(alice, fromAlice)) == [])  // read by the engine at its instant
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
                == [.message(alice, MessageRow(txId: "t1", outgoing: false, sender: "Alice", text: "hi\u{1B}[2J", kind: .contextual, blockTime: at(60), channel: .realtime)),
                    .log(LogEntry(time: "08:01:01", text: "message t1 from alice (contextual) via realtime", kind: .arrival))])
        var st = EngineStatus()
        st.realtime = .polling
        #expect(ViewInput.from(TimedEvent(at: at(5), event: .status(st))) == [.engineStatus(st)])
        #expect(ViewInput.from(TimedEvent(at: at(3661), event: .polling("stopped: realtime is back")))
                == [.log(LogEntry(time: "09:01:01", text: "polling: stopped: realtime is back", kind: .decision))])
        #expect(ViewInput.from(TimedEvent(at: at(1), event: .messageSent(txId: "x", to: "bob")))
                == [.log(LogEntry(time: "08:00:01", text: "sent x to bob", kind: .arrival))])
        #expect(ViewInput.from(TimedEvent(at: at(2), event: .observationHit(txId: "abcdef0123", pushOffset: .seconds(2), via: .realtime)))
                == [.log(LogEntry(time: "08:00:02", text: "observation hit abcdef01 (realtime): push 2s after realtime",
                                  kind: .hit(txId: "abcdef0123", pushOffset: .seconds(2), via: .realtime)))])
    }
}

@Suite("One clock on a line of the log")
struct LogClockTests {
    @Test("an instant the engine wrote into a line is said on the world's clock, as the line's own time is: push watch's 'landing at 00:14:40.102' reads 08:14:40.102 at 08:19:40")
    func oneClock() {
        let e = TimedEvent(at: at(19 * 60 + 40), event: .pushWatch("lost 806475d5: no push within 5m of it landing at \(at(14 * 60 + 40) + .milliseconds(102))"))
        #expect(ViewInput.from(e) == [.log(LogEntry(time: "08:19:40", text: "push watch: lost 806475d5: no push within 5m of it landing at 08:14:40.102", kind: .decision))])
        #expect(Clock.worldTimes(in: "next look in 4m (at 00:16:00.000), since 16:30:00.000") == "next look in 4m (at 08:16:00.000), since 00:30:00.000")
        #expect(Clock.worldTimes(in: "push 398ms–3.5s after the tx, at 12:34, v1.2.3") == "push 398ms–3.5s after the tx, at 12:34, v1.2.3")
    }
}

@Suite("Notices beside the compose line")
struct NoticeRowTests {
    @Test("a server that forgot the user: at 80 columns its words fit whole in two rows of their own, and the compose line below them stays visible and editable")
    func forgottenFitsAndComposeStays() {
        var s = sampleState()  // Alice open, the compose line focused
        s.status.link = .forgotten("the server no longer knows ty (it was restarted without its data?): quit, then join again as a new user (another --profile, or --ephemeral)")
        _ = ViewModel.reduce(&s, .paste("still typing"))
        let rows = Render.screen(s, width: 80, height: 24).text
        let notice = rows[19] + " " + rows[20]
        #expect(rows[19].hasPrefix(" the server no longer knows ty") && notice.contains("--ephemeral)"), "\(rows[19])\n\(rows[20])")
        #expect(rows[21].hasPrefix("to Alice> still typing"), "\(rows[21])")
    }

    @Test("a letter typed while a notice that came in the middle of things shows (a played scenario's end) only takes it away, wherever the keys are: p then breaks nothing, the next p does; in the compose line it is typed as ever; the arrows still act; a notice that answers a key or greets the start leaves the next letter its own")
    func lettersAnswerTheNotice() {
        var s = sampleState()
        s.focus = .list
        func scriptEnds() {
            _ = ViewModel.reduce(&s, .script(.playing(from: s.status.clock, duration: .seconds(60))))
            _ = ViewModel.reduce(&s, .script(.live))
            #expect(s.notice == Notices.scriptOver)
        }
        scriptEnds()
        #expect(ViewModel.reduce(&s, .key(.char("p"))) == [])
        #expect(s.notice == nil)
        #expect(ViewModel.reduce(&s, .key(.char("p"))) == [.toggleFault(.push)])  // the next p is the push key
        scriptEnds()
        let selected = s.selected
        _ = ViewModel.reduce(&s, .key(.down))  // not a letter: it moves, and takes the notice away
        #expect(s.notice == nil && s.selected != selected)
        s.focus = .compose
        scriptEnds()
        _ = ViewModel.reduce(&s, .key(.char("h")))
        #expect(s.notice == nil && s.compose.string.hasSuffix("h"))
        // A notice that answers a key, or the greeting at start: the next letter acts.
        s.focus = .list
        _ = ViewModel.reduce(&s, .notice("the newest hit: n goes on to older ones"))
        #expect(ViewModel.reduce(&s, .key(.char("p"))) == [.toggleFault(.push)])
        _ = ViewModel.reduce(&s, .notice("on http://127.0.0.1:7420 as ada (joined): the server's clock, x60"))
        #expect(ViewModel.reduce(&s, .key(.char("p"))) == [.toggleFault(.push)])
    }

    @Test("the server's 'no longer knows' stays while it is true: only the first letter after it appears is its own, then keys act; it appearing again takes a letter again")
    func forgottenTakesOneLetter() {
        var s = sampleState()
        s.focus = .list
        let forgotten = ServerLink.forgotten("the server no longer knows ty: quit, then join again")
        _ = ViewModel.reduce(&s, .serverLink(forgotten))
        #expect(ViewModel.reduce(&s, .key(.char("p"))) == [])
        #expect(ViewModel.reduce(&s, .key(.char("p"))) != [])
        #expect(Render.screen(s, width: 100, height: 24).text.contains { $0.contains("no longer knows ty") })  // still shown
        _ = ViewModel.reduce(&s, .serverLink(.reached))
        _ = ViewModel.reduce(&s, .serverLink(forgotten))
        #expect(ViewModel.reduce(&s, .key(.char("p"))) == [])
    }

    @Test("where the keys go shows in words on the compose line, not only in the focus colour: conversations, messages, sync log; none while writing (the cursor says so)")
    func focusInWords() {
        var s = sampleState()
        #expect(!Render.screen(s, width: 100, height: 24).text[21].contains("keys:"))
        s.focus = .list
        #expect(Render.screen(s, width: 100, height: 24).text[21].hasSuffix(" keys: conversations"))
        s.focus = .messages
        #expect(Render.screen(s, width: 100, height: 24).text[21].hasSuffix(" keys: messages"))
        s.showLog = true
        s.focus = .log
        #expect(Render.screen(s, width: 100, height: 24).text[21].hasSuffix(" keys: sync log"))
    }
}
