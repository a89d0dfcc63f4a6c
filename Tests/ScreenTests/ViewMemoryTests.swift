import ChatUI
import SyncCore
import SyncEngine
import Testing

/// Where you left off — the open conversation, its scroll and every draft come
/// back; q keeps an unsent line with a profile, and asks first without one.
@Suite("Where you left off")
struct ViewMemoryTests {
    @Test("the memory of a state comes back as the same open conversation, scroll, drafts and cursors")
    func roundTrip() throws {
        var s = sampleState()  // Alice open, compose focused
        s.scroll = 3
        for ch in "half-written" { _ = ViewModel.reduce(&s, .key(.char(ch))) }
        _ = ViewModel.reduce(&s, .key(.left))
        _ = ViewModel.reduce(&s, .key(.escape))
        _ = ViewModel.reduce(&s, .key(.down))
        _ = ViewModel.reduce(&s, .key(.enter))  // Bob
        for ch in "to bob" { _ = ViewModel.reduce(&s, .key(.char(ch))) }
        let memory = try #require(ViewMemory.decode(ViewMemory(s).encoded))
        #expect(memory == ViewMemory(s))
        var fresh = sampleState()
        fresh.open = nil
        fresh.drafts = [:]
        fresh.focus = .list
        let commands = ViewModel.reduce(&fresh, .restore(memory))
        #expect(fresh.open == bob && fresh.focus == .compose && commands == [.apply(.open(handle: "bob"))])
        #expect(fresh.drafts[alice] == s.drafts[alice] && fresh.drafts[alice]?.cursor == 11)
        #expect(fresh.drafts[bob]?.string == "to bob")
        #expect(fresh.conversations[fresh.selected].address == bob)
    }

    @Test("a memory naming a conversation that is gone restores the drafts and opens nothing; bad text is no memory")
    func gone() {
        var s = sampleState()
        s.open = nil
        _ = ViewModel.reduce(&s, .restore(ViewMemory(open: "kaspa:nobody", scroll: 4, drafts: ["kaspa:carol": .init(text: "hi", cursor: 9)])))
        #expect(s.open == nil && s.drafts[carol]?.string == "hi" && s.drafts[carol]?.cursor == 2)
        #expect(ViewMemory.decode("not json") == nil)
    }

    @Test("without a profile, q with an unsent line asks first and says to whom; q again quits; another key forgets the question")
    func quitAsks() {
        let store = TestStore(sampleState())
        store.type("unsent") { $0.drafts[alice] = LineEditor("unsent") }
        store.send(.key(.escape)) { $0.focus = .list }
        let asked = "an unsent line to Alice would be lost (nothing is kept): press q again to quit"
        store.send(.key(.char("q"))) {  // not quitting
            $0.quitAsked = true
            $0.notice = asked
        }
        store.send(.key(.char("j"))) {
            $0.quitAsked = false
            $0.notice = nil
            $0.selected = 1
        }
        store.send(.key(.char("q"))) {  // asked again
            $0.quitAsked = true
            $0.notice = asked
        }
        store.send(.key(.char("q")), commands: [.quit]) {
            $0.quitting = true
            $0.notice = nil
        }
    }

    @Test("without a profile, q with a message waiting to be sent (failed, sending or refused) asks first and says to whom, as for an unsent line; once it is sent, q quits at once")
    func quitAsksForTheOutbox() {
        var s = sampleState()
        _ = ViewModel.reduce(&s, .key(.escape))
        let failed = OutgoingMessage(localId: "l1", to: alice, body: "are you there?", createdAt: at(305), failures: 1,
                                     state: .failed(reason: "node unreachable", retryAt: at(400)))
        _ = ViewModel.reduce(&s, .outgoing(failed))
        #expect(ViewModel.reduce(&s, .key(.char("q"))) == [])
        #expect(s.notice == "a message waiting to be sent to Alice would be lost (nothing is kept): press q again to quit")
        _ = ViewModel.reduce(&s, .key(.escape))
        _ = ViewModel.reduce(&s, .key(.enter))
        _ = ViewModel.reduce(&s, .paste("and a line"))
        _ = ViewModel.reduce(&s, .key(.escape))
        #expect(ViewModel.reduce(&s, .key(.char("q"))) == [])
        #expect(s.notice == "an unsent line to \(s.selectedConversation?.name ?? "") and a message waiting to be sent to Alice would be lost (nothing is kept): press q again to quit")
        #expect(ViewModel.reduce(&s, .key(.char("q"))) == [.quit])
        var sent = sampleState()
        _ = ViewModel.reduce(&sent, .key(.escape))
        var m = failed
        m.state = .sent(txId: "tx9")
        _ = ViewModel.reduce(&sent, .outgoing(failed))
        _ = ViewModel.reduce(&sent, .outgoing(m))
        #expect(ViewModel.reduce(&sent, .key(.char("q"))) == [.quit])
    }

    @Test("without a profile and with nothing unsent, q quits at once (docs/screen.md, README): it asks only when a line would be lost")
    func quitAtOnce() {
        let store = TestStore(sampleState())
        store.send(.key(.escape)) { $0.focus = .list }  // out of the compose line, where q is a letter
        #expect(!store.state.keepsDrafts)
        store.send(.key(.char("q")), commands: [.quit]) { $0.quitting = true }
        let emptied = TestStore(sampleState())  // a line typed and emptied again is nothing to lose either
        emptied.type("x") { $0.drafts[alice] = LineEditor("x") }
        emptied.send(.key(.backspace)) { $0.drafts[alice] = LineEditor() }
        emptied.send(.key(.escape)) { $0.focus = .list }
        emptied.send(.key(.char("q")), commands: [.quit]) { $0.quitting = true }
    }

    @Test("with a profile, q quits at once: the line is kept")
    func quitKeeps() {
        let store = TestStore(sampleState())
        store.send(.keepsDrafts(true)) { $0.keepsDrafts = true }
        store.type("unsent") { $0.drafts[alice] = LineEditor("unsent") }
        store.send(.key(.escape)) { $0.focus = .list }
        store.send(.key(.char("q")), commands: [.quit]) { $0.quitting = true }
    }
}

@Suite("Unsent lines, in words")
struct UnsentLinesWordsTests {
    @Test("one line is a line to Alice; two are lines to Alice and Frank; three Alice, Bob and Frank; names made safe")
    func words() {
        #expect(UnsentLines.kept(["Alice"]) == "your unsent line to Alice is kept in the profile; it will be there next time")
        #expect(UnsentLines.kept(["Alice", "Frank"]) == "your unsent lines to Alice and Frank are kept in the profile; they will be there next time")
        #expect(UnsentLines.names(["Alice", "Bob", "Frank"]) == "Alice, Bob and Frank")
        #expect(UnsentLines.wouldBeLost(["Alice", "Frank"]) == "unsent lines to Alice and Frank would be lost (nothing is kept): press q again to quit")
        #expect(UnsentLines.names(["Mal\u{1B}[2J"]) == "Mal^[[2J")
    }
}
