import Fuzzing
import Simulation
import SyncCore
import Testing
import TestSupport

/// The scenario half of the shrinker: ddmin over timed lines, the header, 1-minimal, the
/// healing tail pinned, and the same file whatever the number of runs at once.
@Suite("Scenario shrinker")
struct ScenarioShrinkerTests {
    /// A small session with a push outage (Scenarios/sessions/small-outage.scenario, shared with
    /// the other shrinker suite).
    static let outage = (try? String(contentsOf: BuiltProducts.packageRoot.appendingPathComponent("Scenarios/sessions/small-outage.scenario"), encoding: .utf8)) ?? ""

    static func timedLines(_ text: String) -> [String] { text.split(separator: "\n").map(String.init).filter { $0.hasPrefix("at ") } }

    @Test("an event line: the push outage alone is left, the duration ends just past the line, one contact; every line kept is needed")
    func eventLine() throws {
        let shrinker = try ScenarioShrinker(text: Self.outage, file: "outage.scenario", keepsComments: false)
        let property = ScenarioShrinker.eventLine(containing: "reliable → unreliable", policy: .adaptive)
        let result = try #require(shrinker.shrink(width: 2, holds: property))
        #expect(Self.timedLines(result.text) == ["at 15m push drop 100%"])
        #expect(result.timedBefore == 10 && result.timedAfter == 1 && result.runs > 0)
        #expect(!result.text.contains("#"))
        let shrunk = try ScenarioParser.parse(result.text, file: "shrunk.scenario")
        let witness = try #require(property(shrunk)?.at)
        #expect(shrunk.duration == Interval.seconds((witness.milliseconds + 1000) / 1000))
        #expect(shrunk.contacts < 3)
        // 1-minimal, checked from outside: without any one of its timed lines the line is gone.
        let lines = result.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for (i, line) in lines.enumerated() where line.hasPrefix("at ") {
            let less = lines.enumerated().filter { $0.offset != i }.map(\.element).joined(separator: "\n")
            #expect(property(try ScenarioParser.parse(less, file: "less.scenario")) == nil, "\(line) is not needed")
        }
    }

    @Test("a file with a byte order mark and CRLF line ends shrinks to the same LF file")
    func crlf() throws {
        let property = ScenarioShrinker.eventLine(containing: "reliable → unreliable", policy: .adaptive)
        let lf = try #require(try ScenarioShrinker(text: Self.outage, file: "lf.scenario").shrink(holds: property))
        let crlfText = "\u{FEFF}" + Self.outage.replacingOccurrences(of: "\n", with: "\r\n")
        let crlf = try #require(try ScenarioShrinker(text: crlfText, file: "crlf.scenario").shrink(holds: property))
        #expect(crlf.text == lf.text && crlf.timedBefore == 10)
    }

    @Test("the same file whether candidates run one at a time or four at once")
    func widthChangesNothing() throws {
        let shrinker = try ScenarioShrinker(text: Self.outage, file: "outage.scenario")
        let property = ScenarioShrinker.eventLine(containing: "catch-up skipped", policy: .seed)
        let one = try #require(shrinker.shrink(width: 1, holds: property))
        let four = try #require(shrinker.shrink(width: 4, holds: property))
        #expect(one.text == four.text)
        #expect(one.text.hasPrefix("# a small session with a push outage: "))  // comments kept unless asked
    }

    @Test("a property the file does not show: nil, after one run")
    func doesNotHold() throws {
        let shrinker = try ScenarioShrinker(text: Self.outage, file: "outage.scenario")
        #expect(shrinker.shrink(holds: ScenarioShrinker.eventLine(containing: "no such line", policy: .adaptive)) == nil)
    }

    @Test("a fuzz case's healing tail stays, moved to the shorter duration's end; lines the property needs stay, the rest go")
    func healingTailPinned() throws {
        var fuzz = FuzzScenario.generate(seed: 7)
        fuzz.steps.insert(.init(at: 60, directive: .fault(.indexerLatency(.seconds(99)))), at: 0)  // a latency the generator never draws
        #expect(fuzz.steps.count > 5)
        let shrinker = try ScenarioShrinker(text: fuzz.text, file: "fuzz.scenario", pinned: ScenarioShrinker.healingTail)
        let result = try #require(shrinker.shrink { scenario in
            scenario.steps.contains { $0.directive.summary == "indexer latency 1m39s" } ? Witness() : nil
        })
        let lines = Self.timedLines(result.text)
        #expect(lines == ["at 60s indexer latency 1m39s"] + FuzzScenario.healing.map { "at 1m \($0.scenarioText)" })
        #expect(result.text.contains("duration 1m\n") && result.text.contains("traffic 0/h\n") && result.text.contains("contacts 0\n"))
    }

    @Test("a regression's key lines: catch-ups by trigger and kind, push changes, messages by contact, kind and channel; no times, ids or counts")
    func keyLines() {
        let log = [
            "00:00:00.253 catch-up started (subscription-restart): full sync of 7 objects",
            "00:00:00.253 catch-up joined (app-active): rides on the running full subscription-restart sync",
            "00:00:03.000 message d324d5bf to bob (contextual) via sent",
            "00:00:03.503 catch-up finished (subscription-restart): full, 0 new, 7 requests, 3.2s",
            "00:00:24.646 push unknown → reliable: push for 3dde9a5c arrived 1.9s after its realtime tx",
            "00:00:24.646 push token registration: re-register: push unreliable",
            "00:08:26.936 catch-up skipped (rpc-restored): push reliable, last catch-up 8m23s ago, next allowed in 1m36s",
            "00:21:55.826 message cece2f0b from alice (payment) via fetch",
            "00:45:05.464 catch-up started (push-unreliable): full sync of 15 objects, forced",
            "00:45:05.464 realtime live: subscribed",
        ]
        #expect(ScenarioShrinker.keyLines(log) == [
            "catch-up started (subscription-restart): full",
            "message to bob (contextual) via sent",
            "catch-up finished (subscription-restart): full",
            "push unknown → reliable",
            "catch-up skipped (rpc-restored)",
            "message from alice (payment) via fetch",
            "catch-up started (push-unreliable): full, forced",
        ])
    }
}
