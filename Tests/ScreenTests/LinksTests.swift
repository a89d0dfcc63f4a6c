import ChatUI
import Foundation
import SyncCore
import SyncEngine
import Testing
import WidthCorpus

/// URLs in messages as OSC 8 hyperlinks whose visible text is the URL itself,
/// one id across a wrap; the screen's text the same with or without them.
@Suite("Links in messages")
struct LinksTests {
    static func urls(_ text: String) -> [String] { Links.find(Array(text)).map(\.url) }

    @Test("http, https and mailto URLs, found as a reader sees them: the sentence's punctuation and an unopened bracket left out, a bracket the URL opened kept, nothing glued to a word before it, a mailto without @ and a bare scheme not linked")
    func found() {
        #expect(Self.urls("see https://example.com/a?b=c&d=e#f.") == ["https://example.com/a?b=c&d=e#f"])
        #expect(Self.urls("(http://en.wikipedia.org/wiki/Thing_(x)), and https://a.b/c]") == ["http://en.wikipedia.org/wiki/Thing_(x)", "https://a.b/c"])
        #expect(Self.urls("mail mailto:ana@example.org! or mailto:nobody") == ["mailto:ana@example.org"])
        #expect(Self.urls("xhttps://evil.com https:// http://") == [])
        #expect(Self.urls("\"https://a.b/q\" <https://c.d/e>") == ["https://a.b/q", "https://c.d/e"])
        #expect(Self.urls("ftp://a.b javascript:alert(1) file:///etc/passwd") == [])
        // The URL ends where a character that is not printable ASCII comes: what the link opens is
        // what the screen shows, no hidden character inside it.
        #expect(Self.urls("https://bank.example\u{200B}.evil.com/x") == ["https://bank.example"])
        #expect(Self.urls("https://a.b/\u{202E}gpj.exe") == ["https://a.b/"])
        #expect(Self.urls("https://a.b/caf\u{E9}") == ["https://a.b/caf"])
        #expect(Self.urls("https://x.y/" + String(repeating: "a", count: 3000)).isEmpty, "past the longest link")
    }

    /// Alice's conversation with one message, drawn at `width`.
    static func screen(_ body: String, width: Int = 80, height: Int = 20, links: Bool = true) -> Grid {
        var s = sampleState()
        s.linksEnabled = links
        _ = ViewModel.reduce(&s, .message(alice, MessageRow(txId: "ab12cd", outgoing: false, sender: "Alice", text: body, kind: .contextual,
                                                            blockTime: at(400), channel: .realtime)))
        return Render.screen(s, width: width, height: height)
    }

    /// The characters under each link id, row after row, as the terminal's link would open.
    static func targets(_ g: Grid) -> [String: String] {
        var out: [String: String] = [:]
        for link in g.links.sorted(by: { ($0.y, $0.x) < ($1.y, $1.x) }) {
            let text = (link.x..<(link.x + link.width)).map { String(g[$0, link.y].character) }.joined()
            out[link.id, default: ""] += text
            #expect(link.url.hasPrefix(out[link.id]!), "the cells under \(link.id) read \(out[link.id]!), not a beginning of \(link.url)")
        }
        return out
    }

    @Test("a URL that fits is on one row, whole; one longer than the pane is cut only where it must and is one link (one id) over its rows, its cells reading the URL; the screen's text the same with --links off")
    func wrapped() {
        let short = "lunch menu: https://example.com/menu?day=friday ok"
        let g = Self.screen(short)
        #expect(g.links.count == 1 && Self.targets(g) == ["ab12cd-0": "https://example.com/menu?day=friday"])
        let long = "the doc https://example.com/" + String(repeating: "abcdefghij/", count: 14) + "end.html and https://b.c"
        let wide = Self.screen(long, width: 80)
        let ids = Set(wide.links.map(\.id))
        #expect(ids == ["ab12cd-0", "ab12cd-1"])
        #expect(Set(wide.links.filter { $0.id == "ab12cd-0" }.map(\.y)).count >= 2, "wrapped over rows")
        #expect(Self.targets(wide) == ["ab12cd-0": "https://example.com/" + String(repeating: "abcdefghij/", count: 14) + "end.html", "ab12cd-1": "https://b.c"])
        let off = Self.screen(long, width: 80, links: false)
        #expect(off.links.isEmpty && off.text == wide.text)
    }

    @Test("the escape corpus and the public width corpus as message bodies, and each glued to a URL: every link is printable ASCII, the cells under it read it, and the screen's text is the same as without links")
    func hostile() throws {
        var bodies = try escapeCorpus()
        let corpus = try Corpus.load(path: Corpus.defaultPath(packageRoot: BuiltProducts.packageRoot.path))
        bodies += Corpus.sample(corpus, count: 60).map(\.text)
        for body in bodies {
            for text in [body, "https://a.example/" + body, body + " https://b.example/x?" + body + " end"] {
                let g = Self.screen(text)
                for link in g.links {
                    #expect(link.url.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F }, "\(link.url.debugDescription)")
                }
                _ = Self.targets(g)
                #expect(g.text == Self.screen(text, links: false).text)
            }
        }
    }

    @Test("a cast (ANSIScreen) holds each link between OSC 8's opening with its id and its closing, over the URL's text; without links, none")
    func cast() {
        var screen = ANSIScreen(sgr: [:])
        let bytes = screen.frame(Self.screen("see https://example.com/x now"))
        let open = "\u{1B}]8;id=ab12cd-0;https://example.com/x\u{1B}\\"
        guard let a = bytes.range(of: open), let b = bytes.range(of: "\u{1B}]8;;\u{1B}\\", range: a.upperBound..<bytes.endIndex) else {
            Issue.record("no OSC 8 link in the cast's bytes")
            return
        }
        #expect(bytes[a.upperBound..<b.lowerBound].contains("https://example.com/x"))
        var plain = ANSIScreen(sgr: [:])
        #expect(!plain.frame(Self.screen("see https://example.com/x now", links: false)).contains("\u{1B}]8;"))
    }
}
