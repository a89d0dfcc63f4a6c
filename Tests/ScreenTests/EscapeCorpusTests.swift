import ChatUI
import Foundation
import Simulation
import SyncCore
import SyncEngine
import Testing

/// Every text of Scenarios/hostile.scenario (bodies and display names), plus what a wire
/// with bytes that are not UTF-8 decodes to.
func escapeCorpus() throws -> [String] {
    let scenario = try ScenarioParser.load(path: "Scenarios/hostile.scenario")
    var texts: [String] = []
    for step in scenario.steps {
        switch step.directive {
        case .receive(_, let text), .contact(_, let text): texts.append(text)
        default: break
        }
    }
    texts.append(String(decoding: [0x62, 0x61, 0x64, 0xFF, 0xC3, 0x28, 0xED, 0xA0, 0x80, 0x21], as: UTF8.self))
    return texts
}

/// Scalars a terminal acts on: C0, DEL, C1, and the bidi controls that reorder a line.
func isControl(_ c: Unicode.Scalar) -> Bool {
    switch c.value {
    case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
    default: return false
    }
}

@Suite("Escape-injection corpus on the grid")
struct EscapeCorpusTests {
    @Test("the corpus covers what the issue lists: every C0 and C1, ESC alone, CSI, SGR, OSC 0/8/52 with BEL and ST, DCS, APC, ESC c, CR, BS, TAB, bidi, ZWJ, combining marks, bad UTF-8")
    func corpusIsComplete() throws {
        let all = try escapeCorpus().joined()
        let scalars = Set(all.unicodeScalars.map(\.value))
        for c in UInt32(0)...0x1F { #expect(scalars.contains(c), "C0 \(c) missing") }
        for c in UInt32(0x80)...0x9F { #expect(scalars.contains(c), "C1 \(c) missing") }
        for needle in ["\u{1B}[6n", "\u{1B}[2J", "\u{1B}[31;1;5m", "\u{1B}]0;", "\u{1B}]8;;", "\u{1B}]52;", "\u{07}", "\u{1B}\\",
                       "\u{1B}P", "\u{1B}_", "\u{1B}c", "\r", "\u{08}", "\t", "\u{202E}", "\u{200D}", "\u{0301}", "\u{FFFD}", "\u{7F}"] {
            #expect(all.contains(needle), "corpus lacks \(needle.debugDescription)")
        }
    }

    @Test("as a message, a sender, a conversation name and a banner: nothing a terminal acts on reaches the grid, and nothing outside the message pane moves")
    func corpusOnTheGrid() throws {
        let mal = Address("kaspa:mal")
        func state(_ text: String, background: Bool) -> ViewState {
            var s = sampleState()
            _ = ViewModel.reduce(&s, .message(alice, MessageRow(txId: "h", outgoing: false, sender: text, text: text, kind: .contextual,
                                                                 blockTime: at(400), channel: .realtime)))
            _ = ViewModel.reduce(&s, .conversations(s.conversations + [ConversationRow(address: mal, name: text, unread: 1, muted: false, lastActivity: at(1))]))
            if background {
                var st = s.status.engine
                st.lifecycle = .background
                _ = ViewModel.reduce(&s, .engineStatus(st))
                _ = ViewModel.reduce(&s, .banner(BannerRow(conversation: mal, title: text, body: text, at: at(401))))
            }
            return s
        }
        let (width, height) = (100, 30)
        for background in [false, true] {
            let baseline = Render.screen(state("x", background: background), width: width, height: height)
            // The message pane: right of the list's border, below the title row, above the sync log.
            let border = try #require((0..<width).first { baseline[$0, 1].character == "│" })
            let paneBottom = try #require(baseline.text.firstIndex { $0.hasPrefix("─ sync log") })
            let malRow = try #require(baseline.text.firstIndex { $0.hasPrefix("  x ") })
            for text in try escapeCorpus() {
                let g = Render.screen(state(text, background: background), width: width, height: height)
                for y in 0..<height {
                    var used = 0
                    for x in 0..<width {
                        #expect(!g[x, y].character.unicodeScalars.contains(where: isControl), "\(text.debugDescription): control at \(x),\(y)")
                        used += Int(g[x, y].width)
                    }
                    #expect(used == width, "\(text.debugDescription): row \(y) is \(used) columns")
                    if y == 0 || y >= paneBottom {
                        // Title, sync log, compose line, status bar: as with a harmless text.
                        #expect(g.lines[y] == baseline.lines[y], "\(text.debugDescription): row \(y) moved:\n\(g.lines[y])\n\(baseline.lines[y])")
                    } else {
                        #expect(g[border, y] == baseline[border, y], "\(text.debugDescription): the list border moved on row \(y)")
                        if y != malRow {
                            for x in 0..<border { #expect(g[x, y] == baseline[x, y], "\(text.debugDescription): list cell \(x),\(y) moved") }
                        }
                    }
                }
            }
        }
    }
}
