import ChatUI
import Testing

/// What synchat draws for each kind of grapheme cluster, and at what width. The width corpus in
/// tmux (`WidthEndToEndTests`, `synchat-bench widths`) is the judge of whether terminals agree;
/// these pin the decisions, one per class of the corpus.
@Suite("Text width: what each grapheme cluster is drawn as")
struct TextWidthTests {
    init() { _ = TextWidth.localeReady }

    func drawn(_ s: String) -> [String] { s.flatMap { TextWidth.cells($0) }.map(\.text) }
    func widths(_ s: String) -> [Int] { s.flatMap { TextWidth.cells($0) }.map(\.width) }

    @Test("a ZWJ sequence is drawn as its emoji one by one, without the joiners (tmux 3.3a joins what follows a ZWJ, ncursesw does not)")
    func zwj() {
        #expect(drawn("👨\u{200D}👩\u{200D}👧") == ["👨", "👩", "👧"])
        #expect(TextWidth.of("👨\u{200D}👩\u{200D}👧") == 6)
        #expect(drawn("🏳\u{FE0F}\u{200D}🌈") == ["🏳", "🌈"])
        #expect(drawn("👩🏽\u{200D}💻") == ["👩", "💻"])
    }

    @Test("a skin tone, VS15, VS16, keycap or tag sequence is drawn as its base alone")
    func sequences() {
        #expect(drawn("👍🏽") == ["👍"] && TextWidth.of("👍🏽") == 2)
        #expect(drawn("❤\u{FE0F}") == ["❤"] && TextWidth.of("❤\u{FE0F}") == 1)
        #expect(drawn("⌚\u{FE0E}") == ["⌚"] && TextWidth.of("⌚\u{FE0E}") == 2)
        #expect(drawn("#\u{FE0F}\u{20E3}") == ["#"])
        #expect(drawn("🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}") == ["🏴"])
    }

    @Test("a flag is drawn as its two region letters; a lone regional indicator as its letter")
    func flags() {
        #expect(drawn("🇺🇸") == ["U", "S"] && TextWidth.of("🇺🇸") == 2)
        #expect(drawn("🇬") == ["G"])
    }

    @Test("Indic text: one cell per spacing scalar, virama and signs riding in the cell before (as ncursesw and tmux lay it out)")
    func indic() {
        #expect(drawn("क्षि") == ["क्", "ष", "ि"] && widths("क्षि") == [1, 1, 1])
        #expect(TextWidth.of("నిజ్ఞా") == 3)
        #expect(TextWidth.of("ｶﾟ") == 2)
        // A cluster drawn in several cells is where terminals that lay text out by cluster differ:
        // the adapter writes each of its cells on its own, the cursor re-placed after it.
        let split = "क्षि".flatMap { TextWidth.cells($0) }, whole = "के👨\u{200D}👩🇺🇸e\u{0301}".flatMap { TextWidth.cells($0) }
        #expect(split.allSatisfy { $0.isolated })
        #expect(!whole.contains { $0.isolated })
    }

    @Test("format characters, separators and lone selectors are not drawn; a lone mark sits on ◌; unprintable code points are �")
    func invisible() {
        for s in ["\u{200B}", "\u{200C}", "\u{2060}", "\u{FEFF}", "\u{00AD}", "\u{E0001}", "\u{2028}", "\u{2029}", "\u{FE0F}"] {
            #expect(drawn(s).isEmpty, "\(s.unicodeScalars.first!.value)")
        }
        #expect(drawn("a\u{200B}b") == ["a", "b"])
        #expect(drawn("\u{0301}") == ["\u{25CC}\u{0301}"])
        #expect(drawn("\u{0378}") == ["\u{FFFD}"] && drawn("\u{FFFF}") == ["\u{FFFD}"])
        #expect(drawn("\u{E000}") == ["\u{E000}"])
    }

    @Test("Hangul: conjoining jamo stay one cell; a lone vowel or final rides on the fillers (Unicode §3.12)")
    func hangul() {
        #expect(drawn("\u{1100}\u{1161}") == ["\u{1100}\u{1161}"] && TextWidth.of("\u{1100}\u{1161}") == 2)
        #expect(drawn("\u{1161}") == ["\u{115F}\u{1161}"] && TextWidth.of("\u{1161}") == 2)
        #expect(drawn("\u{11A8}") == ["\u{115F}\u{1160}\u{11A8}"])
    }

    @Test("a cell holds at most four marks (ncursesw's CCHARW_MAX is five)")
    func zalgo() {
        let z = "Z" + String(repeating: "\u{0335}", count: 12)
        #expect(drawn(z) == ["Z\u{0335}\u{0335}\u{0335}\u{0335}"] && TextWidth.of(z) == 1)
    }

    @Test("wrap and truncate use the drawn width: a ZWJ family takes six columns")
    func wrapTruncate() {
        let family = "👨\u{200D}👩\u{200D}👧"
        #expect(TextWidth.truncate("ab" + family, to: 6) == "ab…")
        #expect(TextWidth.wrap("x " + family + " y", width: 7) == ["x", family, "y"])
        #expect(TextWidth.wrap("x " + family + " y", width: 8) == ["x " + family, "y"])
    }

    @Test("every cell of a grid holds one spacing scalar of its width and at most four zero-width ones, whatever the text")
    func gridCells() {
        let texts = ["👨\u{200D}👩\u{200D}👧", "🇺🇸🇬", "क्षि", "\u{0301}x", "a\u{2028}b", "\u{1161}", "❤\u{FE0F}", "Z\u{0335}\u{0336}\u{0337}\u{0338}\u{0339}"]
        var g = Grid(width: 40, height: 1)
        for t in texts {
            g = Grid(width: 40, height: 1)
            let end = g.put(t, x: 0, y: 0, role: .normal)
            #expect(end == TextWidth.of(t))
            for x in 0..<g.width where g[x, 0].width != 0 {
                let cells = TextWidth.cells(g[x, 0].character)
                #expect(cells.count == 1 && cells[0].width == Int(g[x, 0].width) && cells[0].text == String(g[x, 0].character), "\(t.debugDescription) at \(x)")
            }
        }
    }
}
