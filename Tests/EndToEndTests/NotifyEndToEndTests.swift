import Foundation
import Testing

/// Desktop notifications with the real binary in tmux: the bytes it writes (tmux's `pipe-pane`), with
/// focus reported as a terminal reports it (`CSI I`, `CSI O` fed to the pane as input).
@Suite("Desktop notifications, in tmux", .serialized, .timingSensitive)
struct NotifyEndToEndTests {
    /// The OSC 777 notifications in `bytes`, unwrapped from tmux's passthrough (every inner
    /// ESC doubled), as `TITLE|BODY`; nil when a wrapper is not whole.
    static func notifications(_ bytes: String) -> [String]? {
        var out: [String] = []
        var rest = Substring(bytes)
        while let start = rest.range(of: "\u{1B}Ptmux;") {
            guard let end = rest[start.upperBound...].range(of: "\u{1B}\\", options: [], range: nil) else { return nil }
            // The wrapper ends at the first ESC \ whose ESC is not doubled: the inner ST is ESC ESC \.
            var inner = String(rest[start.upperBound..<end.lowerBound])
            var stop = end
            while inner.hasSuffix("\u{1B}") {
                guard let next = rest[stop.upperBound...].range(of: "\u{1B}\\") else { return nil }
                inner = String(rest[start.upperBound..<next.lowerBound])
                stop = next
            }
            rest = rest[stop.upperBound...]
            let unwrapped = inner.replacingOccurrences(of: "\u{1B}\u{1B}", with: "\u{1B}")
            guard unwrapped.hasPrefix("\u{1B}]777;notify;"), unwrapped.hasSuffix("\u{1B}\\") else { return nil }
            let fields = unwrapped.dropFirst("\u{1B}]777;notify;".count).dropLast(2)
            guard !fields.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) else { return nil }
            // The title ends at the first `;` (OSC 777's own separator); the body may hold more.
            guard let cut = fields.firstIndex(of: ";") else { return nil }
            out.append(fields[..<cut] + "|" + fields[fields.index(after: cut)...])
        }
        return out
    }

    @Test("--notify osc777 in tmux: focused, nothing; unfocused, one notification through tmux's passthrough with the contact's name and the text, a hostile body as plain text; a muted contact, none", .timeLimit(.minutes(2)))
    func awayOnly() throws {
        try TmuxSession.requireReady()
        let dir = try TemporaryDirectory("notify-e2e")
        defer { dir.remove() }
        try """
        seed 3
        duration 3m
        contacts 3
        traffic 0/h
        at 1s mute carol
        at 20s receive alice "while you look"
        at 60s receive carol "muted one"
        at 80s receive bob "hi \\u{1B}]52;c;cHduZWQ=\\u{7} there"

        """.write(toFile: dir.file("n.scenario"), atomically: true, encoding: .utf8)
        let t = try TmuxSession(width: 100, height: 30, arguments: "--ephemeral --speed 10 --notify osc777 --scenario \(dir.file("n.scenario"))")
        defer { t.close() }
        try t.tmux(["pipe-pane", "-O", "-t", t.name, "cat > \(dir.file("bytes"))"])
        t.wait(for: "Conversations")
        try t.tmux(["send-keys", "-t", t.name, "-H", "1b", "5b", "49"])  // CSI I: focused
        try t.keys("Enter")  // Alice, open
        t.wait(for: "Alice: while you look")
        try t.tmux(["send-keys", "-t", t.name, "-H", "1b", "5b", "4f"])  // CSI O: away
        func read() -> String { (try? String(contentsOfFile: dir.file("bytes"), encoding: .utf8)) ?? "" }
        let deadline = Date().addingTimeInterval(40)
        while Date() < deadline, !read().contains("777;notify;Bob") { usleep(100_000) }
        try t.keys("Escape", "q")
        let found = try #require(Self.notifications(read()), "a passthrough wrapper not whole")
        #expect(found == ["Bob|hi ^[]52;c;cHduZWQ=^G there"], "exactly one, Bob's, its escapes as plain text: \(found)")
    }

    @Test("a bad --notify, SYNCHAT_NOTIFY or --links is one line and exit 2, naming what is expected", .timeLimit(.minutes(1)))
    func badValues() throws {
        let bad = try runSynchat(["--notify", "desktop"])
        #expect(bad.status == 2 && bad.err == "synchat: --notify desktop: expected auto, osc99, osc777, osc9, bell, off (see synchat --help)\n", "\(bad.err)")
        let env = try TmuxSession.spawn(["env", "SYNCHAT_NOTIFY=\u{1B}]0;x", TmuxSession.binary, "--ephemeral"], captureOutput: true, captureErrors: true)
        #expect(env.status == 2 && env.err.hasPrefix("synchat: SYNCHAT_NOTIFY="), "\(env.err)")
        #expect(!env.err.contains("\u{1B}"), "the terminal gets no raw escape: \(env.err.debugDescription)")
        let links = try runSynchat(["--links", "maybe"])
        #expect(links.status == 2 && links.err == "synchat: --links maybe: expected on or off (see synchat --help)\n", "\(links.err)")
    }
}
