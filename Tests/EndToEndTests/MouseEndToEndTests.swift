import Foundation
import Testing

/// The mouse in a real terminal: an SGR mouse click (what xterm and tmux send) opens the
/// conversation under it, the wheel scrolls the log under it; `--no-mouse` never asks the
/// terminal for mouse reports, so its own selection works.
@Suite("End to end: the mouse in tmux", .serialized, .timingSensitive)
struct MouseEndToEndTests {
    init() throws { try TmuxSession.requireReady() }

    /// A press and release of the first button at a 0-based cell, as SGR (1006) reports it.
    static func click(_ x: Int, _ y: Int) -> String { "\u{1B}[<0;\(x + 1);\(y + 1)M\u{1B}[<0;\(x + 1);\(y + 1)m" }
    static func wheelUp(_ x: Int, _ y: Int) -> String { "\u{1B}[<64;\(x + 1);\(y + 1)M" }

    @Test("a click on the third conversation opens it; the wheel over the log scrolls it back")
    func clickAndWheel() throws {
        let t = try TmuxSession(width: 120, height: 36, arguments: "--ephemeral --seed 1 --speed 30")
        defer { t.close() }
        let screen = t.wait(for: " foreground │", seconds: 60)
        #expect(try t.tmux(["display-message", "-p", "-t", t.name, "#{mouse_any_flag}#{mouse_button_flag}#{mouse_standard_flag}"], output: true).contains("1"))
        let third = screen.split(separator: "\n")[3].dropFirst(2).split(separator: " ").first.map(String.init) ?? ""
        try t.type(Self.click(4, 3))
        t.wait("the third conversation open") { $0.split(separator: "\n").first?.contains(" \(third)") == true && $0.contains("to \(third)>") }
        let rows = t.screen().split(separator: "\n", omittingEmptySubsequences: false)
        let logRow = try #require(rows.firstIndex { $0.hasPrefix("─ sync log") }) + 2
        for _ in 0..<3 { try t.type(Self.wheelUp(40, logRow)) }
        t.wait(for: "scrolled back")
        try t.keys("Escape", "q")
        t.wait(for: "EXIT=0")
    }

    @Test("--no-mouse: the terminal is never asked for mouse reports")
    func noMouse() throws {
        let t = try TmuxSession(width: 120, height: 36, arguments: "--ephemeral --no-mouse --speed 30")
        defer { t.close() }
        t.wait(for: " foreground │", seconds: 60)
        let flags = try t.tmux(["display-message", "-p", "-t", t.name, "#{mouse_any_flag}#{mouse_button_flag}#{mouse_standard_flag}"], output: true)
        #expect(flags.trimmingCharacters(in: .whitespacesAndNewlines) == "000")
        try t.keys("q")
        t.wait(for: "EXIT=0")
    }
}
