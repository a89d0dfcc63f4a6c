import Foundation
import Testing

/// Issue 30 #17: the README's two-minute tour is played in tmux, with its own keys, at the
/// pace of a person reading it, and every "you will see X" is held against the screen. Each
/// step carries its keys and the words to see in a comment a reader does not see
/// (`<!-- tour: KEYS | WORDS | WORDS -->`); the words must also stand in the step's visible
/// text, so the README cannot promise one thing and test another. A change to the program's
/// words, or to the README's, that makes the two disagree fails here.
///
/// It runs beside the other suites, not under their one-at-a-time lock (`.timingSensitive`):
/// each promise is waited for up to a minute, and the one that hangs on the pace (step 2's
/// `S b f` inside the 10-minute debounce) has minutes of the world to spare at x60 — and it
/// takes 25 s, which in the chain of locked suites would put `swift test` over its budget.
@Suite("The README's tour, played", .serialized)
struct TourTests {
    init() throws { try TmuxSession.requireReady() }

    struct Step {
        var number: Int
        var text: String
        var keys: [String]
        var see: [String]
    }

    /// The tour's numbered steps, as the README has them.
    static func steps() throws -> (command: String, steps: [Step]) {
        let readme = try String(contentsOf: TmuxSession.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let tour = try #require(readme.components(separatedBy: "## A two-minute tour").dropFirst().first?.components(separatedBy: "\n## ").first)
        let command = try #require(tour.components(separatedBy: "```sh\n").dropFirst().first?.components(separatedBy: "\n```").first)
        var steps: [Step] = []
        var current: (Int, String)?
        func close() throws {
            guard let (n, text) = current else { return }
            let note = try #require(text.components(separatedBy: "<!-- tour:").dropFirst().first?.components(separatedBy: "-->").first,
                                    "step \(n) of the tour has no <!-- tour: … --> note")
            let parts = note.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            steps.append(Step(number: n, text: text.components(separatedBy: "<!--")[0],
                              keys: parts[0].split(separator: " ").map(String.init), see: Array(parts.dropFirst())))
        }
        for line in tour.split(separator: "\n", omittingEmptySubsequences: false) {
            if let match = line.firstMatch(of: /^(\d+)\. (.*)$/) {
                try close()
                current = (Int(match.1)!, String(match.2))
            } else if current != nil, line.hasPrefix("   ") {
                current!.1 += " " + line.trimmingCharacters(in: .whitespaces)
            } else if current != nil, line.isEmpty || !line.hasPrefix(" ") {
                try close()
                current = nil
            }
        }
        try close()
        return (command, steps)
    }

    @Test("the tour's notes agree with its text: each word to see and each key stands in the step a reader reads")
    func notesAgreeWithText() throws {
        let (command, steps) = try Self.steps()
        #expect(command == "swift run synchat -- --ephemeral")
        #expect(steps.map(\.number) == Array(1...steps.count) && steps.count >= 4)
        for step in steps {
            #expect(!step.see.isEmpty, "step \(step.number) promises nothing")
            for words in step.see { #expect(step.text.contains("`\(words)`"), "step \(step.number): \"\(words)\" is not in its text") }
            for key in step.keys {
                #expect(step.text.localizedCaseInsensitiveContains("`\(key)`"), "step \(step.number): key \(key) is not in its text")
            }
        }
    }

    /// Waits without holding a thread (the test is async): while the reader reads, the
    /// other suites' tests run on the two threads of the pool.
    static func pause(_ seconds: Double) async throws { try await Task.sleep(for: .milliseconds(Int(seconds * 1000))) }

    static func see(_ words: String, on t: TmuxSession, step: Int, within seconds: Double = 60) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        var last = ""
        while Date() < deadline {
            last = t.screen()
            if last.contains(words) { return }
            try await pause(0.1)
        }
        Issue.record("step \(step): timed out after \(seconds)s waiting for \"\(words)\"; screen:\n\(last)")
    }

    @Test("playing the tour as a person reads it shows every word it promises, in order")
    func play() async throws {
        let (command, steps) = try Self.steps()
        let arguments = command.components(separatedBy: "swift run synchat -- ").last!
        let t = try TmuxSession(width: 140, height: 40, arguments: arguments)
        defer { t.close() }
        try await Self.see(" foreground │", on: t, step: 0)
        try await Self.pause(1)  // the reader looks at the screen before the first key
        for step in steps {
            for key in step.keys {
                // tmux names: Space is `space` in the README.
                try t.keys(key.lowercased() == "space" ? "Space" : key)
                try await Self.pause(0.6)  // a person's pace between the keys of a step
            }
            for words in step.see { try await Self.see(words, on: t, step: step.number) }
            try await Self.pause(1.5)  // reading the step before the next one (at x60: a minute and a half of the world)
        }
        try t.keys("q")
        try await Self.see("EXIT=0", on: t, step: steps.count + 1)
    }
}
