import ClientRuntime
import ChatUI
import SyncCore
import SyncEngine
import Testing

@Suite("Screens rendered to a grid")
struct ScreenTests {
    @Test("the whole screen at 100x24")
    func wholeScreen() {
        let g = Render.screen(sampleState(), width: 100, height: 24)
        let t = g.text
        #expect(t[0].hasPrefix(" Conversations           │ Alice   ") && t[0].hasSuffix("? help"))
        #expect(t[1] == "› Alice                  │")  // open, so read
        #expect(t[2] == "  Bob                  ∅ │")
        #expect(t[9].hasSuffix("── day 1 ──"))
        #expect(t[10].hasSuffix("── new ──"))  // Alice had two unread when the sample opened her
        #expect(t[11] == "                         │ 08:01 r Alice: hi there")
        #expect(t[12] == "                         │ 08:02 › you: hello!")
        #expect(t[13] == "                         │ 08:05 p Alice: see you at 7")
        #expect(t[14].hasPrefix("─ sync log · decisions (L) · l hides ──"))
        #expect(t[15].hasPrefix("08:05:11 catch-up skipped (app-active): push reliable"))
        #expect(t[16] == "         7m50s")  // wrapped, never cut, indented under the text
        #expect(t[21] == "to Alice>")
        #expect(t[22] == " foreground │ live │ push: reliable 0/3 │ token active")
        #expect(t[23] == " catch-up 2m10s ago, next 7m50s │ req 42 this launch │ remote-push │ d1 08:05:11 x30")
        #expect(g.roles(row: 21)[10] == .composeCursor)  // the cursor sits after the prompt
    }

    @Test("a NUL in a message shows as ^@ and the text after it stays")
    func nulInAMessage() {
        var s = sampleState()
        _ = ViewModel.reduce(&s, .message(alice, MessageRow(txId: "n", outgoing: false, sender: "Alice", text: "before\u{0}after",
                                                            kind: .contextual, blockTime: at(400), channel: .fetch)))
        _ = ViewModel.reduce(&s, .message(alice, MessageRow(txId: "o", outgoing: true, sender: "Alice", text: "mine\u{0}tail",
                                                            kind: .contextual, blockTime: at(410), channel: .sent)))
        let t = Render.screen(s, width: 100, height: 24).text
        #expect(t[12] == "                         │ 08:06 f Alice: before^@after")
        #expect(t[13] == "                         │ 08:06 › you: mine^@tail")
    }

    @Test("the status bar says each push state with its misses: up to the threshold m/3, past it the count the log gives (4 misses, not 3/3)", arguments: PushState.allCases)
    func statusPushStates(state: PushState) {
        var s = sampleState()
        var st = s.status.engine
        st.push = state
        st.misses = state == .unreliable ? 4 : 1
        _ = ViewModel.reduce(&s, .engineStatus(st))
        let g = Render.screen(s, width: 140, height: 24)
        let bar = g.text[22]  // the state row (the status bar has two rows at any width)
        let misses = state == .unreliable ? "4 misses" : "1/3"
        #expect(bar.contains("push: \(state.rawValue) \(misses)"))
        let x = bar.distance(from: bar.startIndex, to: bar.range(of: "push:")!.lowerBound)
        let expected: Role = [.reliable: .statusPushReliable, .unknown: .statusPushUnknown,
                              .unreliable: .statusPushUnreliable, .disabled: .statusPushDisabled][state]!
        #expect(g.roles(row: 22)[x] == expected)
    }

    @Test("the status bar says each realtime state", arguments: ["live", "connecting", "polling", "stale", "offline"])
    func statusRealtimeStates(word: String) {
        var s = sampleState()
        var st = s.status.engine
        st.realtime = EngineStatus.Realtime(rawValue: word)!
        _ = ViewModel.reduce(&s, .engineStatus(st))
        let rows = Render.screen(s, width: 140, height: 24).text
        #expect(rows[22] == " foreground │ \(word) │ push: reliable 0/3 │ token active")
        #expect(rows[23].hasPrefix(" catch-up"))
    }

    @Test("the status bar shows the store's trouble in the warning role, and a played script's progress")
    func statusStoreAndScript() {
        var s = sampleState()
        var st = s.status.engine
        st.storeTrouble = "disk full"
        st.unsaved = 3
        _ = ViewModel.reduce(&s, .engineStatus(st))
        _ = ViewModel.reduce(&s, .script(.live))
        let g = Render.screen(s, width: 100, height: 24)
        let rows = [g.text[22], g.text[23]]
        let row = rows.firstIndex { $0.contains("store: disk full, 3 unsaved") }
        #expect(row != nil)
        #expect(rows.contains { $0.contains("script over: live") })
        if let row {
            let bar = rows[row]
            let x = bar.distance(from: bar.startIndex, to: bar.range(of: "store:")!.lowerBound)
            #expect(g.roles(row: 22 + row)[x] == .warning)
        }
        st.storeTrouble = nil
        _ = ViewModel.reduce(&s, .engineStatus(st))
        #expect(!Render.screen(s, width: 100, height: 24).text.contains { $0.contains("store:") })
    }

    @Test("the status bar shows the world's active faults in words, in the warning role")
    func statusFaults() {
        var s = sampleState()
        _ = ViewModel.reduce(&s, .truth(WorldTruth(faults: WorldFaults(push: .init(dropPercent: 100), indexer: .init(down: true)))))
        let g = Render.screen(s, width: 120, height: 24)
        let rows = [g.text[22], g.text[23]]
        let row = rows.firstIndex { $0.contains("fault: push drop 100%, indexer down") }
        #expect(row != nil)
        if let row {
            let bar = rows[row]
            let x = bar.distance(from: bar.startIndex, to: bar.range(of: "fault:")!.lowerBound)
            #expect(g.roles(row: 22 + row)[x] == .warning)
        }
        _ = ViewModel.reduce(&s, .truth(WorldTruth()))
        #expect(!Render.screen(s, width: 120, height: 24).text.contains { $0.contains("fault:") })
    }

    @Test("backgrounded: the message pane is dimmed and banners show with the badge")
    func backgroundBanners() {
        let g = Render.screen(backgroundedSampleState(), width: 100, height: 24)
        #expect(g.text[1].contains("background · badge 3 · f: foreground · o: open the latest notification"))
        #expect(g.text[2].contains("🔔 Bob: are you there?"))
        #expect(g.text[22].hasPrefix(" background │ stale │"))
        let row13 = g.roles(row: 13)  // "08:05 p Alice: see you at 7"
        #expect(g.text[13].hasSuffix("see you at 7"))
        #expect(row13[26...].contains(.messageDimmed))
        #expect(!row13.contains(.messageIncoming) && !row13.contains(.messageMeta))
    }

    @Test("the help overlay lists the key table")
    func helpOverlay() {
        var s = sampleState()
        s.focus = .list
        _ = ViewModel.reduce(&s, .key(.char("?")))
        let text = Render.screen(s, width: 100, height: 60).text.joined(separator: "\n")  // tall enough for every key outside the compose line
        for binding in KeyTable.global where !binding.label.isEmpty {
            #expect(text.contains(binding.help), "help lacks \(binding.label)")
        }
        #expect(text.range(of: #"p +push fault: ok → drop all → delay 90s → ok"#, options: .regularExpression) != nil)
        // The compose line's keys follow below, by scrolling (HelpOverlayTests).
    }

    @Test("CJK and emoji wrap at their real width")
    func wideWrapping() {
        var s = sampleState()
        let cjk = String(repeating: "漢字", count: 40)
        let emoji = String(repeating: "🎉", count: 40)
        _ = ViewModel.reduce(&s, .message(alice, MessageRow(txId: "w1", outgoing: false, sender: "Alice", text: cjk, kind: .contextual, blockTime: at(400), channel: .fetch)))
        _ = ViewModel.reduce(&s, .message(alice, MessageRow(txId: "w2", outgoing: false, sender: "Alice", text: emoji, kind: .contextual, blockTime: at(500), channel: .background)))
        let g = Render.screen(s, width: 100, height: 30)
        // The pane starts at column 26; text at 35; the last column is 99.
        let textWidth = 100 - 26 - 1 - 9
        for y in 1..<(g.height - 2) {
            let line = g.lines[y]
            #expect(TextWidth.of(line) == 100, "row \(y) is \(TextWidth.of(line)) columns")
        }
        let pane = g.text.filter { $0.contains("漢") || $0.contains("🎉") }
        #expect(pane.count >= 4)
        for line in pane {
            let text = String(line.drop { $0 != "漢" && $0 != "🎉" && $0 != "A" })
            #expect(TextWidth.of(text) <= textWidth)
        }
        #expect(TextWidth.of("漢") == 2 && TextWidth.of("🎉") == 2 && TextWidth.of("é") == 1)
    }

    @Test("below 60x16 a clear line replaces the screen, wrapped by words when narrow", arguments: [(59, 24), (100, 15), (20, 5)])
    func tooSmall(width: Int, height: Int) {
        let g = Render.screen(sampleState(), width: width, height: height)
        let said = "synchat needs 60x16; terminal too small (\(width)x\(height))"
        let shown = g.text.filter { !$0.isEmpty }
        #expect(shown.joined(separator: " ") == said)
        #expect(shown.allSatisfy { $0.count <= width })
        #expect(g.text.prefix(shown.count) == shown[...], "the lines are at the top")
    }

    @Test("two rows too few for the whole message: the first rows of it, nothing past the screen")
    func tooSmallAndShort() {
        let g = Render.screen(sampleState(), width: 12, height: 2)
        #expect(g.text == ["synchat", "needs 60x16;"])
    }

    @Test("60x16 still shows every pane")
    func minimum() {
        let t = Render.screen(sampleState(), width: 60, height: 16).text
        #expect(t[0].contains("Conversations"))
        #expect(t.contains { $0.contains("see you at 7") })
        #expect(t[14].hasPrefix(" foreground │ live │ push: reliable 0/3"))
        #expect(t[15].hasPrefix(" catch-up 2m10s ago"))
    }

    @Test("hostile text shows as visible escapes and never as control characters")
    func hostileText() {
        var s = sampleState()
        let evil = "\u{1B}]0;pwned\u{07} \u{1B}[2J x\ry\u{08}z"
        _ = ViewModel.reduce(&s, .message(alice, MessageRow(txId: "e", outgoing: false, sender: "Mal\u{1B}[31m", text: evil, kind: .contextual, blockTime: at(400), channel: .realtime)))
        _ = ViewModel.reduce(&s, .conversations(s.conversations + [ConversationRow(address: Address("kaspa:mal"), name: "\u{1B}]0;title\u{07}", unread: 1, muted: false, lastActivity: at(1))]))
        let g = Render.screen(s, width: 120, height: 24)
        let all = g.lines.joined()
        #expect(all.contains("Mal^[[31m: ^[]0;pwned^G ^[[2J x^My^Hz"))
        #expect(all.contains("^[]0;title^G"))
        #expect(!all.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
    }

    @Test("scrolling back shows older lines and a hint on a row of its own, covering no text, at 100×24 and at the smallest screen; End returns to the newest")
    func scrollback() {
        var s = sampleState()
        for i in 0..<50 {
            _ = ViewModel.reduce(&s, .message(alice, MessageRow(txId: "m\(i)", outgoing: false, sender: "Alice", text: "line \(i)", kind: .contextual, blockTime: at(400 + Int64(i)), channel: .realtime)))
        }
        var t = Render.screen(s, width: 100, height: 24).text
        #expect(t[13].hasSuffix("line 49"))
        s.focus = .list
        _ = ViewModel.reduce(&s, .key(.pageUp))
        t = Render.screen(s, width: 100, height: 24).text
        #expect(t[12].hasSuffix("Alice: line 39"))  // whole: the hint is below it
        #expect(t[13].contains("↓ 10 lines below · End") && !t[13].contains("Alice"))
        // 60×16, the smallest screen, with a line long enough to reach the hint's columns.
        _ = ViewModel.reduce(&s, .message(alice, MessageRow(txId: "long", outgoing: false, sender: "Alice", text: "the words of a line that reaches the right edge",
                                                             kind: .contextual, blockTime: at(500), channel: .realtime)))
        _ = ViewModel.reduce(&s, .message(alice, MessageRow(txId: "last", outgoing: false, sender: "Alice", text: "newest", kind: .contextual,
                                                             blockTime: at(501), channel: .realtime)))
        s.scroll = 1
        let small = Render.screen(s, width: 60, height: 16).text
        let hintRow = try! #require(small.firstIndex { $0.contains("↓ 1 line below · End") })
        #expect(!small[hintRow].contains("Alice"))
        #expect(small[hintRow - 1].contains("edge"))  // the long line's last words, whole above the hint
        // As far back as it goes, the oldest line (the first day's separator) is in view above the hint.
        s.scroll = 10_000
        let top = Render.screen(s, width: 100, height: 24).text
        #expect(top.contains { $0.contains("── day 1 ──") }, "\(top.joined(separator: "\n"))")
        _ = ViewModel.reduce(&s, .key(.end))
        #expect(Render.screen(s, width: 100, height: 24).text[13].hasSuffix("Alice: newest"))
    }
}
