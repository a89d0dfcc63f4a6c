import ChatUI
import Foundation
import SyncCore
import Testing

/// Advances measured on the two judges with cursor position reports (a `printf` of each
/// sequence, then `CSI 6n`), and the parts the probe reads from them.
enum Measured {
    /// tmux 3.3a: what follows a joiner joins the cell before; a skin tone is drawn beside.
    static let tmux = EmojiAdvances(flag: 2, modifier: 2, joined: true, presentation: 1, keycap: 1, tag: 2)
    /// foot 1.13: the sum of every code point's width.
    static let foot = EmojiAdvances(flag: 2, modifier: 2, joined: false, presentation: 1, keycap: 1, tag: 2)
    /// (sequence, tmux 3.3a's advance, foot 1.13's advance), as the terminals answered.
    static let answers: [(String, Int, Int)] = [
        ("🇩🇪", 2, 2), ("👍🏽", 4, 4), ("👨\u{200D}👩\u{200D}👧", 2, 6), ("❤\u{FE0F}", 1, 1),
        ("🏳\u{FE0F}\u{200D}🌈", 1, 3), ("🧑🏾\u{200D}💻", 4, 6), ("1\u{FE0F}\u{20E3}", 1, 1),
        ("🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}", 2, 2), ("👩\u{200D}❤\u{FE0F}\u{200D}👨", 2, 5),
        ("☺\u{FE0F}", 1, 1), ("👋🏿", 4, 4), ("🫶🏽", 4, 4), ("👩🏻\u{200D}❤\u{FE0F}\u{200D}💋\u{200D}👨🏼", 6, 11),
        ("🧑🏾\u{200D}💻\u{200D}🧑🏾\u{200D}💻", 6, 12), ("👨\u{200D}👩\u{200D}👧\u{200D}👦\u{200D}👨\u{200D}👩\u{200D}👧\u{200D}👦", 2, 16),
    ]
}

@Suite("Emoji sequences drawn whole, at the widths the terminal was found to use")
struct EmojiWidthsTests {
    @Test("measured: each sequence is one cell of the columns tmux 3.3a and foot 1.13 advanced for it (their cursor reports)")
    func measuredAsTheJudgesAnswered() {
        _ = TextWidth.localeReady
        for (text, tmux, foot) in Measured.answers {
            let ch = Character(text)
            for (widths, want) in [(EmojiWidths.measured(Measured.tmux), tmux), (.measured(Measured.foot), foot)] {
                let cells = TextWidth.cells(ch, emoji: widths)
                #expect(cells.count == 1 && cells[0].whole && cells[0].text == text, "\(text.debugDescription): \(cells)")
                #expect(TextWidth.of(ch, emoji: widths) == want, "\(text.debugDescription) in \(widths)")
            }
        }
    }

    @Test("clustering (mode 2027): one cell pair a sequence, one cell for a keycap without VS16 or an emoji with VS15")
    func clusters() {
        for (text, _, _) in Measured.answers { #expect(TextWidth.of(Character(text), emoji: .clusters) == 2, "\(text.debugDescription)") }
        #expect(TextWidth.of(Character("1\u{20E3}"), emoji: .clusters) == 1)
        #expect(TextWidth.of(Character("❤\u{FE0E}"), emoji: .clusters) == 1)
    }

    @Test("safe: every sequence split as before, whatever it is (the layout of a terminal that answered nothing)")
    func safeIsSplit() {
        for (text, _, _) in Measured.answers {
            #expect(!TextWidth.cells(Character(text), emoji: .safe).contains { $0.whole })
        }
        #expect(TextWidth.cells(Character("🇩🇪")).map(\.text) == ["D", "E"])
        #expect(TextWidth.cells(Character("👨\u{200D}👩\u{200D}👧")).map(\.text) == ["👨", "👩", "👧"])
    }

    @Test("what terminals do not agree on is no sequence, drawn split in every mode: a joiner at an end or twice, before a letter or a skin tone, two skin tones, a skin tone on a letter, nine emoji joined, a tag flood, a lone regional indicator")
    func notSequences() {
        let odd = ["👍\u{200D}", "\u{200D}👍", "👍\u{200D}a", "a\u{200D}👍", "👨\u{200D}\u{200D}👩", "👨\u{200D}🏽", "👍🏽🏽", "a🏽",
                   Array(repeating: "👨", count: 9).joined(separator: "\u{200D}"),
                   "🏴" + String(repeating: "\u{E0061}", count: 40) + "\u{E007F}", "🇩", "❤\u{FE0F}\u{FE0F}", "1\u{20E3}\u{20E3}"]
        for text in odd {
            for ch in text {
                for widths in [EmojiWidths.clusters, .measured(Measured.tmux), .measured(Measured.foot)] {
                    #expect(!TextWidth.cells(ch, emoji: widths).contains { $0.whole }, "\(String(ch).debugDescription) drawn whole in \(widths)")
                }
            }
        }
    }

    @Test("a cell of N columns: N-1 continuations; writing over any part of it leaves blanks, never part of a sequence")
    func gridCells() {
        var g = Grid(width: 20, height: 1, emoji: .measured(Measured.foot))
        let family = "👨\u{200D}👩\u{200D}👧"
        #expect(g.put("a" + family + "b", x: 0, y: 0, role: .normal) == 8)
        #expect(g[1, 0].width == 6 && g[1, 0].whole && String(g[1, 0].character) == family)
        #expect((2..<7).allSatisfy { g[$0, 0].width == 0 })
        #expect(g.text[0] == "a" + family + "b")
        g.put("x", x: 4, y: 0, role: .normal)  // in the middle of it
        #expect(g.text[0] == "a   x  b")
        #expect((0..<20).map { Int(g[$0, 0].width) }.reduce(0, +) == 20)
    }
}

@Suite("Emoji whole on the screen")
struct EmojiScreenTests {
    static let modes: [EmojiWidths] = [.safe, .clusters, .measured(Measured.tmux), .measured(Measured.foot)]

    /// Hostile text around emoji sequences: escapes inside and beside them, a joiner to a
    /// control, a name that is one long family.
    static let hostileEmoji = [
        "👍\u{1B}[31m🏽 split by an escape", "👨\u{200D}\u{1B}]0;TITLE\u{07}👩", "🇩\u{9B}2J🇪", "❤\u{FE0F}\r\u{1B}[2K gone?",
        "🏳\u{FE0F}\u{200D}🌈\u{202E}reversed", "👩\u{200D}❤\u{FE0F}\u{200D}👨 " + String(repeating: "🧑🏾\u{200D}💻", count: 30),
    ]

    @Test("in every mode, the hostile corpus and emoji with escapes as a message, a sender and a name: nothing a terminal acts on reaches the grid, and every row is the screen's width", arguments: modes)
    func hostile(widths: EmojiWidths) throws {
        let mal = Address("kaspa:mal")
        for text in try escapeCorpus() + Self.hostileEmoji + Measured.answers.map(\.0) {
            var s = sampleState()
            _ = ViewModel.reduce(&s, .emojiWidths(widths))
            _ = ViewModel.reduce(&s, .message(alice, MessageRow(txId: "h", outgoing: false, sender: text, text: text,
                                                                 kind: .contextual, blockTime: at(400), channel: .realtime)))
            _ = ViewModel.reduce(&s, .conversations(s.conversations + [ConversationRow(address: mal, name: text, unread: 1, muted: false, lastActivity: at(1))]))
            let g = Render.screen(s, width: 100, height: 30)
            let border = (0..<100).first { g[$0, 1].character == "│" }
            for y in 0..<30 {
                var used = 0
                for x in 0..<100 {
                    #expect(!g[x, y].character.unicodeScalars.contains(where: isControl), "\(text.debugDescription): control at \(x),\(y)")
                    used += Int(g[x, y].width)
                }
                #expect(used == 100, "\(text.debugDescription) in \(widths): row \(y) is \(used) columns")
                if let border, y > 0, y < 18 { #expect(g[border, y].character == "│", "\(text.debugDescription) in \(widths): border moved on row \(y)") }
            }
        }
    }

    @Test("the message pane wraps by the widths in force: thirty families take more rows where each is six columns (foot) than where each is two (tmux)")
    func wrapsByTheMode() {
        func rows(_ widths: EmojiWidths) -> Int {
            var s = sampleState()
            _ = ViewModel.reduce(&s, .emojiWidths(widths))
            let family = "👨\u{200D}👩\u{200D}👧"
            _ = ViewModel.reduce(&s, .message(alice, MessageRow(txId: "f", outgoing: false, sender: "Alice", text: Array(repeating: family, count: 30).joined(separator: " "),
                                                                 kind: .contextual, blockTime: at(400), channel: .realtime)))
            return Render.screen(s, width: 100, height: 40).text.filter { $0.contains("👨\u{200D}👩\u{200D}👧") }.count
        }
        #expect(rows(.measured(Measured.foot)) > rows(.measured(Measured.tmux)))
        #expect(rows(.measured(Measured.tmux)) == rows(.clusters))
    }
}

@Suite("The compose line edits by grapheme cluster")
struct ClusterEditingTests {
    /// The scalars of `text` typed one key each, as the terminal delivers them.
    static func typed(_ text: String, maxBytes: Int = .max) -> LineEditor {
        var line = LineEditor()
        for scalar in text.unicodeScalars { line.insert(Character(scalar), maxBytes: maxBytes) }
        return line
    }

    @Test("a sequence typed a scalar at a time is one character: ← moves over it, Backspace deletes it whole")
    func wholeClusters() {
        var line = Self.typed("a👍🏽b")
        #expect(line.count == 3 && line.string == "a👍🏽b")
        line.left()
        line.backspace()
        #expect(line.string == "ab" && line.cursor == 1)
        var family = Self.typed("x👨\u{200D}👩\u{200D}👧")
        #expect(family.count == 2)
        family.backspace()
        #expect(family.string == "x")
        var flags = Self.typed("🇩🇪🇩")
        #expect(flags.count == 2 && flags[0] == "🇩🇪")
        flags.killWord()
        #expect(flags.isEmpty)
    }

    @Test("a joiner typed between two emoji joins them into one")
    func joinerBetween() {
        var line = Self.typed("👨👩")
        line.left()
        line.insert("\u{200D}")
        #expect(line.count == 1 && line.string == "👨\u{200D}👩" && line.cursor == 1)
    }

    @Test("the message limit never cuts a cluster: a skin tone that does not fit takes its emoji with it")
    func cutNeverSplits() {
        // 👍 is 4 bytes and 🏽 4 more: with room for 6, the thumb alone would fit.
        let line = Self.typed("ab👍🏽", maxBytes: 6)
        #expect(line.string == "ab")
        var more = line
        more.insert("c", maxBytes: 6)
        #expect(more.string == "ab", "after a cut, the rest of the paste is refused too")
    }
}
