import ChatUI
import Foundation
import Testing
import TerminalUI

/// The probe's reading of the terminal's replies, as a pure function of the bytes that came
/// back: whole, a byte at a time, with keys and garbage between them.
@Suite("The terminal probe: replies read from bytes")
struct TerminalProbeTests {
    static func cpr(_ columns: [Int]) -> String { columns.map { "\u{1B}[7;\($0 + 1)R" }.joined() }
    /// What tmux 3.3a answered: no DECRQM, a cursor report after each sample, DA1.
    static let tmux = cpr([2, 2, 4, 2, 1, 1, 2, 1, 4]) + "\u{1B}[?1;2c"
    /// What foot 1.13 answered: mode 2027 not recognised (0), the reports, DA1.
    static let foot = "\u{1B}[?2027;0$y" + cpr([2, 2, 4, 6, 1, 1, 2, 3, 6]) + "\u{1B}[?62;4;22c"

    static func replies(_ chunks: [String]) -> TerminalReplies {
        var r = TerminalReplies()
        for c in chunks { r.feed(Array(c.utf8)) }
        r.finish()
        return r
    }

    @Test("tmux 3.3a's answers: no clustering, widths measured (a joined emoji adds nothing); foot 1.13's: mode 2027 unknown to it, widths summed")
    func judges() {
        let t = TerminalProbe.decide(.auto, Self.replies([Self.tmux]))
        #expect(t.widths == .measured(EmojiAdvances(flag: 2, modifier: 2, joined: true, presentation: 1, keycap: 1, tag: 2)))
        #expect(t.report.contains("mode 2027 not answered") && !t.enableClustering)
        let f = TerminalProbe.decide(.auto, Self.replies([Self.foot]))
        #expect(f.widths == .measured(EmojiAdvances(flag: 2, modifier: 2, joined: false, presentation: 1, keycap: 1, tag: 2)))
        #expect(f.report.contains("mode 2027 answered 0"))
    }

    @Test("a terminal with grapheme clustering: on (1) or always (3) it is used; off (2) it is switched on, and off again at exit")
    func clustering() {
        for (ps, enable) in [(1, false), (3, false), (2, true)] {
            let found = TerminalProbe.decide(.auto, Self.replies(["\u{1B}[?2027;\(ps)$y" + Self.cpr([2, 2, 2, 2, 2, 2, 2, 2, 2]) + "\u{1B}[?65;1c"]))
            #expect(found.widths == .clusters && found.enableClustering == enable, "Ps \(ps)")
        }
        // Always off (4): measured like any other.
        #expect(TerminalProbe.decide(.auto, Self.replies(["\u{1B}[?2027;4$y" + Self.tmux])).widths != .clusters)
    }

    @Test("replies split anywhere, a byte per read, read the same")
    func split() {
        for whole in [Self.tmux, Self.foot] {
            let bytes = Array(whole.utf8)
            var r = TerminalReplies()
            for b in bytes { r.feed([b]) }
            r.finish()
            #expect(r == Self.replies([whole]))
            for cut in stride(from: 1, to: bytes.count, by: 3) {
                var s = TerminalReplies()
                s.feed(bytes[..<cut])
                s.feed(bytes[cut...])
                s.finish()
                #expect(s == r, "cut at \(cut)")
            }
        }
    }

    @Test("keys typed meanwhile are given back as they came (letters, an arrow, Alt-x, a lone Escape); replies are never keys")
    func keysBetween() {
        let first = Self.cpr([2, 2, 4, 2]), rest = Self.cpr([1, 1, 2, 1, 4]) + "\u{1B}[?1;2c"
        let r = Self.replies(["ab\u{1B}[A", first + "\u{1B}x", rest + "q\u{1B}"])
        #expect(r.leftover == Array("ab\u{1B}[A\u{1B}xq\u{1B}".utf8))
        #expect(r.fenced && r.columns == [2, 2, 4, 2, 1, 1, 2, 1, 4])
    }

    @Test("garbage and hostile bytes: a number too big, too many parameters, a reply cut off, controls inside a sequence, no DA1 at all: never a width, never a hang, never a key that was a reply")
    func hostile() {
        let big = Self.replies(["\u{1B}[7;99999999R\u{1B}[?1;2c"])
        #expect(big.columns.isEmpty && big.leftover.isEmpty && big.fenced)
        let long = Self.replies(["\u{1B}[" + String(repeating: "1;", count: 40) + "R" + "\u{1B}[?1;2c"])
        #expect(long.columns.isEmpty && long.fenced)
        #expect(!Self.replies(["\u{1B}[?1;2"]).fenced)  // cut off: no fence, dropped
        #expect(Self.replies(["\u{1B}[?1;2"]).leftover.isEmpty)
        let control = Self.replies(["\u{1B}[7\n;3R"])
        #expect(control.columns.isEmpty)
        #expect(TerminalProbe.decide(.auto, Self.replies([""])).widths == .safe)
        #expect(TerminalProbe.decide(.auto, Self.replies(["\u{1B}[?1;2c"])).widths == .safe)  // fenced, no reports
        #expect(TerminalProbe.decide(.auto, Self.replies([Self.cpr([2, 2, 4, 2, 1, 1, 2, 1, 4])])).widths == .safe)  // no fence
        let noise = Self.replies([String(decoding: (0..<2000).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }, as: UTF8.self)])
        _ = TerminalProbe.decide(.auto, noise)  // any bytes: an answer, never a trap
    }

    @Test("widths the layout does not understand, or that do not add up, keep the safe layout, and say why")
    func notUnderstood() {
        let odd = [
            [1, 2, 4, 2, 1, 1, 2, 1, 4],  // an emoji alone in one column
            [2, 2, 3, 2, 1, 1, 2, 1, 4],  // a skin tone of one column
            [2, 2, 4, 4, 1, 1, 2, 1, 4],  // three joined in four
            [2, 2, 4, 2, 1, 1, 2, 1, 6],  // the check does not add up
        ]
        for columns in odd {
            let found = TerminalProbe.decide(.auto, Self.replies([Self.cpr(columns) + "\u{1B}[?1;2c"]))
            #expect(found.widths == .safe && found.report.contains("not understood"), "\(columns): \(found.report)")
        }
    }

    @Test("--emoji safe asks nothing; --emoji full draws whole in cell pairs whatever the answer")
    func requests() {
        #expect(TerminalProbe.decide(.safe, Self.replies([Self.tmux])).widths == .safe)
        #expect(TerminalProbe.decide(.full, Self.replies([""])).widths == .clusters)
        #expect(TerminalProbe.query(measuring: false) == Array("\u{1B}[?2027$p\u{1B}[c".utf8))
        let q = String(decoding: TerminalProbe.query(measuring: true), as: UTF8.self)
        #expect(q.hasPrefix("\u{1B}[?2027$p") && q.hasSuffix("\r\u{1B}[2K\u{1B}[c"))
        #expect(q.components(separatedBy: "\u{1B}[6n").count - 1 == TerminalProbe.samples.count)
    }

    @Test("what the terminal is: XTVERSION's answer (DCS > | NAME ST) and kitty's answer to the OSC 99 query, ended by ST or BEL, split anywhere; a name with escapes read as plain text; a string reply too long dropped, never keys")
    func identity() {
        let kitty = "\u{1B}P>|kitty(0.26.5)\u{1B}\\" + "\u{1B}]99;i=synchat:p=?;a=focus,report:o=always,unfocused:u=0,1,2\u{1B}\\" + Self.tmux
        let whole = Self.replies([kitty])
        #expect(whole.version == "kitty(0.26.5)" && whole.answersOSC99 && whole.fenced && whole.leftover.isEmpty)
        var bytewise = TerminalReplies()
        for b in Array(kitty.utf8) { bytewise.feed([b]) }
        bytewise.finish()
        #expect(bytewise == whole)
        let foot = Self.replies(["\u{1B}P>|foot(1.13.1)\u{07}x" + Self.foot])
        #expect(foot.version == "foot(1.13.1)" && !foot.answersOSC99 && foot.leftover == Array("x".utf8))
        let hostile = Self.replies(["\u{1B}P>|evil\u{9B}2J\u{1B}[31m\u{1B}\\" + Self.tmux])
        #expect(hostile.version.map { !$0.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) } } == true)
        let long = Self.replies(["\u{1B}]99;i=synchat:p=?;" + String(repeating: "a", count: 5000) + "\u{1B}\\ab" + Self.tmux])
        #expect(!long.answersOSC99 && long.leftover == Array("ab".utf8) && long.fenced)
        #expect(!Self.replies(["\u{1B}]99;i=other:p=?;\u{1B}\\" + Self.tmux]).answersOSC99, "another program's query")
        #expect(TerminalProbe.query(measuring: false, identifying: true).count > TerminalProbe.query(measuring: false).count)
    }
}

/// Keys typed while the probe waited: an arrow stays an arrow, Enter stays
/// Enter, an Alt key is not taken for the start of a reply.
@Suite("Keys typed during the probe")
struct TypedAheadTests {
    @Test("arrows (CSI and SS3), Home, End, PgUp, Delete and Shift-Tab come back as those keys; letters, Enter (CR) and an Alt key as they came")
    func keys() {
        let typed = Array("\u{1B}[A\u{1B}OBjj\r\u{1B}[5~\u{1B}[3~\u{1B}x\u{1B}[Z".utf8)
        #expect(TypedAhead.read(typed) == [.key(.up), .key(.down), .scalar("j"), .scalar("j"), .scalar("\r"), .key(.pageUp), .key(.delete),
                                            .scalar("\u{1B}"), .scalar("x"), .key(.tab)])
    }

    @Test("Alt-P and Alt-] typed while the probe waits are given back, not read as the start of a reply; a real reply after them is still read")
    func altKeysAreNoReplies() {
        var r = TerminalReplies()
        r.feed(Array("\u{1B}pj\u{1B}Pq\u{1B}]x\u{1B}P>|foot(1.13.1)\u{1B}\\".utf8) + Array(TerminalProbeTests.tmux.utf8))
        r.finish()
        #expect(r.leftover == Array("\u{1B}pj\u{1B}Pq\u{1B}]x".utf8), "\(String(decoding: r.leftover, as: UTF8.self).debugDescription)")
        #expect(r.version == "foot(1.13.1)" && r.fenced)
    }
}
