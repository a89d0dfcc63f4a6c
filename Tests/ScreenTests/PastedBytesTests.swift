import Testing
import TerminalUI

/// A bracketed paste read from the terminal's bytes (docs/keys.md): every byte kept, a byte
/// that is not UTF-8 as U+FFFD and counted, the end mark taken out wherever a read cut it.
@Suite("A paste's bytes")
struct PastedBytesTests {
    static func read(_ bytes: [UInt8], cutEvery step: Int, limit: Int = 65_536) -> (String, replaced: Int, ended: Bool) {
        var p = PastedBytes(limit: limit)
        for start in stride(from: 0, to: bytes.count, by: step) { p.take(bytes[start..<min(start + step, bytes.count)]) }
        let (text, replaced) = p.text
        return (text, replaced, p.ended)
    }

    @Test("a bad byte in the middle: the rest is kept, one U+FFFD, counted; the end mark found whatever the reads' cuts", arguments: [1, 2, 3, 7, 1000])
    func badByte(cut: Int) {
        let bytes: [UInt8] = Array("abc".utf8) + [0xFF] + Array("def\nghi é\u{1B}[201~".utf8)
        let (text, replaced, ended) = Self.read(bytes, cutEvery: cut)
        #expect(text == "abc\u{FFFD}def\nghi é" && replaced == 1 && ended)
    }

    @Test("U+FFFD sent as itself is text, not a bad byte; a truncated sequence and a lone continuation byte are each one")
    func counting() {
        #expect(Self.read(Array("a\u{FFFD}b".utf8), cutEvery: 1).replaced == 0)
        let (text, replaced, ended) = Self.read([0x61, 0xE2, 0x82, 0x62, 0x80, 0x63], cutEvery: 2)
        #expect(text == "a\u{FFFD}b\u{FFFD}c" && replaced == 2 && !ended)
    }

    @Test("an ESC that does not begin a mark, and a half mark at the end, are text; a start mark inside is nothing; what follows the end is kept",
          arguments: [1, 3, 100])
    func marks(cut: Int) {
        let (text, _, ended) = Self.read(Array("x\u{1B}[A\u{1B}[20\u{1B}[202~\u{1B}[200~\u{1B}[201~y\u{1B}[201".utf8), cutEvery: cut)
        #expect(text == "x\u{1B}[A\u{1B}[20\u{1B}[202~y\u{1B}[201" && ended, "\(text.debugDescription)")
    }

    @Test("past the limit the rest is dropped, and a sequence the limit cut in two is left out whole")
    func limit() {
        let (text, replaced, _) = Self.read(Array("ab".utf8) + Array("é".utf8) + Array("zzzz".utf8), cutEvery: 5, limit: 3)
        #expect(text == "ab" && replaced == 0, "\(text.debugDescription)")
    }
}
