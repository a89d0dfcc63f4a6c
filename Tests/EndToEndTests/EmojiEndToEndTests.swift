import Foundation
import Testing
import WidthCorpus

/// Emoji sequences whole in tmux 3.3a: the probe's finding, what the pane holds (judged by what
/// a raw `printf` of the same sequences leaves in the same tmux), the layout on every row, the
/// compose line by clusters, and nothing of the probe left behind.
@Suite("End to end: emoji sequences whole in tmux", .serialized, .timingSensitive)
struct EmojiEndToEndTests {
    init() throws { try TmuxSession.requireReady() }

    /// The sequences docs/screen.md names, and a few more: flags, skin tones, families, VS16,
    /// keycaps, a tag flag, a kiss with two skin tones (longer than a tmux cell holds).
    static let sequences = ["🇩🇪", "👍🏽", "👨\u{200D}👩\u{200D}👧", "❤\u{FE0F}", "🏳\u{FE0F}\u{200D}🌈", "🧑🏾\u{200D}💻", "1\u{FE0F}\u{20E3}",
                            "🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}", "🧑🏾\u{200D}❤\u{FE0F}\u{200D}💋\u{200D}🧑🏽"]

    static func scenario(_ dir: TemporaryDirectory) throws -> String {
        var lines = ["seed 1", "duration 10m", "contacts 2", "traffic 0/h"]
        for (i, s) in sequences.enumerated() { lines.append("at \(5 + i)s receive alice \"[\(i)|a \(s) b|\(i)]\"") }
        lines.append("at 20s contact bob \"Bob \(sequences[5])\"")
        lines.append("at 21s receive bob \"[\(sequences.count)|all \(sequences.joined(separator: " "))|\(sequences.count)]\"")
        lines.append("at 22s open alice")
        let path = dir.file("emoji.scenario")
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("auto in tmux: the probe finds no clustering and measures (the log says so); the pane holds each sequence as a raw printf leaves it, the layout holds on every row, and the compose line deletes a whole cluster", .timeLimit(.minutes(2)))
    func wholeInTmux() throws {
        let dir = try TemporaryDirectory("emoji-e2e")
        defer { dir.remove() }
        let log = dir.file("log.txt")
        let t = try TmuxSession(width: 100, height: 30, arguments: "--ephemeral --speed 20 --log \(log) --scenario \(try Self.scenario(dir))")
        defer { t.close() }
        let last = "Alice: [\(Self.sequences.count - 1)|"
        let screen = t.wait("every sequence shown", seconds: 40) { $0.contains(last) && $0.contains("Bob ") }
        let head = (try? String(contentsOfFile: log, encoding: .utf8))?.split(separator: "\n").first.map(String.init) ?? ""
        #expect(head.hasPrefix("# terminal: no grapheme clustering (mode 2027 not answered), widths measured"), "\(head)")
        #expect(head.contains("after a joiner joined"))
        // What a raw printf of each sequence leaves in the same tmux is what the pane holds.
        let held = try TerminalProbe.heldInTmux(Self.sequences)
        for (s, h) in zip(Self.sequences, held) {
            #expect(screen.contains("a " + h + " b"), "the pane lacks \(s.debugDescription) as tmux holds it: \(h.debugDescription)\n\(screen)")
        }
        // The layout, judged by the columns tmux advances for each sequence printed raw.
        var judge = ScreenJudge(width: 100, height: 30, advance: [:], expected: [:])
        judge.joinersAllowed = true
        try judge.measure([screen], originals: Self.sequences + ["Bob " + Self.sequences[5]], probe: WidthEndToEndTests.probe)
        #expect(judge.judge(screen).problems.isEmpty, "\(judge.judge(screen).problems)\n\(screen)")
        // The compose line: a👍🏽b, ← and Backspace take the whole thumb, skin tone and all.
        try t.keys("Enter")
        t.wait(for: "to Alice>")
        try t.type("a👍🏽b")
        try t.keys("Left")
        try t.keys("BSpace")
        t.wait("the thumb deleted whole") { $0.contains("to Alice> ab") }
        try t.keys("End")
        try t.keys("C-u")
        try t.keys("Escape")
        try t.keys("q")
        t.wait(for: "EXIT=0")
        // Nothing of the probe stays on the shell's screen: no sample, no reply.
        let after = t.screen()
        for s in TerminalProbeSamples.all { #expect(!after.contains(s), "\(s.debugDescription) left on screen:\n\(after)") }
        #expect(after.range(of: #"\d+;\d+R|2027|\?1;2c"#, options: .regularExpression) == nil, "\(after)")
    }

    /// `--emoji safe` in tmux is the width corpus's run at 80×24 (`WidthEndToEndTests`), whose
    /// judge refuses any joiner that reaches tmux.
    @Test("a bad --emoji or SYNCHAT_EMOJI is one line and exit 2", .timeLimit(.minutes(1)))
    func badValues() throws {
        let bad = try runSynchat(["--emoji", "wide"])
        #expect(bad.status == 2 && bad.err == "synchat: --emoji wide: expected auto, full or safe (see synchat --help)\n", "\(bad.err)")
        let env = try TmuxSession.spawn(["env", "SYNCHAT_EMOJI=wide", TmuxSession.binary, "--ephemeral"], captureOutput: true, captureErrors: true)
        #expect(env.status == 2 && env.err.hasPrefix("synchat: SYNCHAT_EMOJI=wide: expected auto, full or safe"), "\(env.err)")
    }
}

/// The probe's test sequences, as the judge looks for them on a screen.
enum TerminalProbeSamples {
    static let all = ["🇩🇪", "👍🏽", "👨\u{200D}👩\u{200D}👧", "❤\u{FE0F}", "1\u{FE0F}\u{20E3}", "🏳\u{FE0F}\u{200D}🌈", "🧑🏾\u{200D}💻"]
}
