import Testing
import TerminalUI

/// What `synchat --cast` puts back when its chat is killed or stopped: the modes the chat's
/// output left set, read from that output (docs/screen.md#recording-a-cast).
@Suite("The modes a program left set, read from its output")
struct TerminalModesTests {
    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test("a full-screen program killed mid-run: everything it set is reset, the alternate screen left last; one that cleaned up: nothing written")
    func killedAndClean() {
        var m = TerminalModes()
        // What ncurses and synchat write at start (smcup, smkx, the mouse, focus, paste), in reads cut mid-sequence.
        let start = Array("\u{1B}[?1049h\u{1B}[22;0;0t\u{1B}[?1h\u{1B}=\u{1B}[?1000;1006h\u{1B}[?1004h\u{1B}[?2004h\u{1B}[?25l".utf8)
        for chunk in stride(from: 0, to: start.count, by: 3) { m.read(start[chunk..<min(chunk + 3, start.count)]) }
        let reset = Self.text(m.resetBytes)
        #expect(reset == "\u{1B}[?1l\u{1B}[?25h\u{1B}[?1000l\u{1B}[?1006l\u{1B}[?1004l\u{1B}[?2004l\u{1B}>\u{1B}[0m\u{1B}[?1049l")
        #expect(Self.text(m.restoreBytes) == "\u{1B}[?1049h\u{1B}[?1h\u{1B}[?25l\u{1B}[?1000h\u{1B}[?1006h\u{1B}[?1004h\u{1B}[?2004h\u{1B}=")
        // And what it writes at a clean end (rmkx, the mouse off, rmcup, the cursor back).
        m.read(Array("\u{1B}[?1l\u{1B}>\u{1B}[?1000l\u{1B}[?1006l\u{1B}[?1004l\u{1B}[?2004l\u{1B}[?1049l\u{1B}[?25h".utf8))
        #expect(m.resetBytes.isEmpty, "a program that cleaned up leaves nothing to write: \(Self.text(m.resetBytes).debugDescription)")
        #expect(m.restoreBytes.isEmpty)
    }

    @Test("text that looks like a mode inside an OSC, a DCS or a plain line is not one; nor is a CSI without '?', or one with an intermediate")
    func notModes() {
        var m = TerminalModes()
        m.read(Array("\u{1B}]0;\u{1B}[?1049h title\u{07}".utf8))  // an OSC ended by BEL: its text is a title
        m.read(Array("\u{1B}P+q\u{1B}[?1000h\u{1B}\\".utf8))  // a DCS: its inner ESC [ is text
        m.read(Array("[?1049h ?1000h".utf8))  // no ESC
        m.read(Array("\u{1B}[1049h\u{1B}[?1000$h\u{1B}[?\u{18}1049h".utf8))  // no '?', an intermediate, CAN
        #expect(m.resetBytes.isEmpty, "\(Self.text(m.resetBytes).debugDescription)")
        m.read(Array("\u{1B}[?1003h".utf8))  // after all that, a real one is still read
        #expect(Self.text(m.resetBytes) == "\u{1B}[?1003l\u{1B}[0m")
    }

    @Test("hostile output: a parameter list without end, and any bytes at all, never crash and never make an untracked mode")
    func hostile() {
        var m = TerminalModes()
        m.read([0x1B, UInt8(ascii: "["), UInt8(ascii: "?")] + Array(repeating: UInt8(ascii: "9"), count: 100_000) + [UInt8(ascii: "h")])
        #expect(m.modes.isEmpty)
        var random = SystemRandomNumberGenerator()
        for _ in 0..<200 { m.read((0..<64).map { _ in UInt8.random(in: 0...255, using: &random) }) }
        let untracked = m.modes.keys.filter { mode in ![1, 25, 47, 1047, 1049, 1000, 1002, 1003, 1006, 1015, 1004, 2004].contains(mode) }
        #expect(untracked.isEmpty)
    }
}
