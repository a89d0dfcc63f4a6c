import Foundation
import Testing

/// The README's two-minute tour is played in tmux, with its own keys, at the
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
@Suite("The README's tour, played", .serialized, .ownThread)
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

    /// The tour, played by a person: on a thread of its own, not one of the two the test pool
    /// has, so that its waits (a reader's pace, and the world at x60) hold no test thread and
    /// the screen is still watched ten times a second however busy the pool is. What it
    /// could not see comes back as the failures to record.
    static func playTour(command: String, steps: [Step]) -> [String] {
        var failures: [String] = []
        do {
            // The README's own line, `--` and all: only `swift run` is the built binary here.
            let arguments = String(command.dropFirst("swift run synchat ".count))
            let t = try TmuxSession(width: 140, height: 40, arguments: arguments)
            defer { t.close() }
            func see(_ words: String, step: Int) {
                if !t.poll(seconds: 60, until: { $0.contains(words) }) {
                    failures.append("step \(step): \"\(words)\" not seen within 60 s; screen:\n\(t.screen())")
                }
            }
            see(" foreground │", step: 0)
            usleep(1_000_000)  // the reader looks at the screen before the first key
            for step in steps {
                for key in step.keys {
                    // tmux names: Space is `space` in the README.
                    try t.keys(key.lowercased() == "space" ? "Space" : key)
                    usleep(600_000)  // a person's pace between the keys of a step
                }
                for words in step.see { see(words, step: step.number) }
                usleep(1_500_000)  // reading the step before the next one (at x60: a minute and a half of the world)
            }
            try t.keys("q")
            see("EXIT=0", step: steps.count + 1)
        } catch {
            failures.append("the tour could not be played: \(error)")
        }
        return failures
    }

    @Test("playing the tour as a person reads it shows every word it promises, in order")
    func play() async throws {
        let (command, steps) = try Self.steps()  // here, where a failed #require is this test's
        let failures = await withCheckedContinuation { (done: CheckedContinuation<[String], Never>) in
            let thread = Thread { done.resume(returning: Self.playTour(command: command, steps: steps)) }
            thread.start()
        }
        for f in failures { Issue.record(Comment(rawValue: f)) }
    }
}
