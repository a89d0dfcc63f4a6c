import ChatUI
import SyncCore
import Testing

/// Issue 15 #1: where you left off — the open conversation, its scroll and every draft come
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
        var s = sampleState()
        for ch in "unsent" { _ = ViewModel.reduce(&s, .key(.char(ch))) }
        _ = ViewModel.reduce(&s, .key(.escape))
        #expect(ViewModel.reduce(&s, .key(.char("q"))).isEmpty)
        #expect(!s.quitting && s.notice == "an unsent line to Alice would be lost (nothing is kept): press q again to quit")
        _ = ViewModel.reduce(&s, .key(.char("j")))
        #expect(ViewModel.reduce(&s, .key(.char("q"))).isEmpty)  // asked again
        #expect(ViewModel.reduce(&s, .key(.char("q"))) == [.quit] && s.quitting)
    }

    @Test("without a profile and with nothing unsent, q quits at once (docs/screen.md, README): it asks only when a line would be lost")
    func quitAtOnce() {
        var s = sampleState()
        _ = ViewModel.reduce(&s, .key(.escape))  // out of the compose line, where q is a letter
        #expect(!s.keepsDrafts)
        #expect(ViewModel.reduce(&s, .key(.char("q"))) == [.quit] && s.quitting)
        var spaces = sampleState()  // a line of spaces is nothing to lose either
        for ch in "x" { _ = ViewModel.reduce(&spaces, .key(.char(ch))) }
        _ = ViewModel.reduce(&spaces, .key(.backspace))
        _ = ViewModel.reduce(&spaces, .key(.escape))
        #expect(ViewModel.reduce(&spaces, .key(.char("q"))) == [.quit])
    }

    @Test("with a profile, q quits at once: the line is kept")
    func quitKeeps() {
        var s = sampleState()
        _ = ViewModel.reduce(&s, .keepsDrafts(true))
        for ch in "unsent" { _ = ViewModel.reduce(&s, .key(.char(ch))) }
        _ = ViewModel.reduce(&s, .key(.escape))
        #expect(ViewModel.reduce(&s, .key(.char("q"))) == [.quit])
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
