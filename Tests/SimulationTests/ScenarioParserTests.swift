import Directives
import Foundation
import Simulation
import SyncCore
import Testing

@Suite("Scenario files (docs/scenarios.md)")
struct ScenarioParserTests {
    @Test("headers: seed, duration, contacts, traffic, mode, settle; comments and blank lines")
    func headers() throws {
        let s = try ScenarioParser.parse("""
            # a comment
            seed 42          # trailing comment

            duration 1h30m
            contacts 9
            traffic 3/m
            mode background-fetch
            settle 20m
            """, file: "h.scenario")
        #expect(s.seed == 42)
        #expect(s.duration == .minutes(90))
        #expect(s.contacts == 9)
        #expect(s.trafficPerHour == 180)
        #expect(s.mode == .backgroundFetch)
        #expect(s.settle == .minutes(20))
        #expect(s.steps.isEmpty)
    }

    @Test("every verb")
    func everyVerb() throws {
        let lines: [(String, Directive)] = [
            ("foreground", .foreground),
            ("background", .background),
            ("push drop 12.5%", .fault(.pushDrop(percent: 12.5))),
            ("push delay 90s", .fault(.pushDelay(.seconds(90)))),
            ("push down", .fault(.pushDown)),
            ("push up", .fault(.pushUp)),
            ("realtime down", .fault(.realtimeDown)),
            ("realtime up", .fault(.realtimeUp)),
            ("realtime stale", .fault(.realtimeStale)),
            ("realtime flaky 30%", .fault(.realtimeFlaky(percent: 30))),
            ("indexer down", .fault(.indexerDown)),
            ("indexer up", .fault(.indexerUp)),
            ("indexer latency 2s", .fault(.indexerLatency(.seconds(2)))),
            ("token expire", .fault(.tokenExpire)),
            ("token invalidate", .fault(.tokenInvalidate)),
            ("mode off", .mode(.off)),
            ("send alice \"hello\"", .send(handle: "alice", text: "hello")),
            ("receive bob \"hi there\"", .receive(handle: "bob", text: "hi there")),
            ("contact zoe \"Zoë Q\"", .contact(handle: "zoe", displayName: "Zoë Q")),
            ("mute carol", .mute(handle: "carol")),
            ("unmute carol", .unmute(handle: "carol")),
            ("sync", .sync),
            ("add kaspa:qzoe12345678 \"Zoë\"", .add(address: "kaspa:qzoe12345678", displayName: "Zoë")),
            ("preview contact", .preview(.contact)),
            ("preview hidden", .preview(.hidden)),
            ("open alice", .open(handle: "alice")),
            ("retry", .retry),
            ("quit", .quit),
            ("stop", .stop),
        ]
        let text = "contacts 3\n" + lines.enumerated().map { "at \($0.offset)m \($0.element.0)" }.joined(separator: "\n")
        let s = try ScenarioParser.parse(text, file: "v.scenario")
        #expect(s.steps.map(\.directive) == lines.map(\.1))
        #expect(s.steps.map(\.line) == Array(2...(lines.count + 1)))
        #expect(s.steps[3].at == .zero + .minutes(3))
    }

    @Test("every escape in quoted text")
    func escapes() throws {
        let s = try ScenarioParser.parse(#"at 1m receive alice "a\nb\tc\\d\"e\e[2J\x41\u{1F600}\u{7}""#, file: "e.scenario")
        #expect(s.steps[0].directive == .receive(handle: "alice", text: "a\nb\tc\\d\"e\u{1B}[2JA😀\u{07}"))
    }

    @Test("durations: s, m, h, ms, d, sums and bare seconds")
    func durations() throws {
        let fail: (String) -> ScenarioError = { ScenarioError(file: "d", line: 1, message: $0) }
        #expect(try ScenarioParser.parseDuration("90s", fail) == .seconds(90))
        #expect(try ScenarioParser.parseDuration("10m", fail) == .minutes(10))
        #expect(try ScenarioParser.parseDuration("2h", fail) == .hours(2))
        #expect(try ScenarioParser.parseDuration("1h30m15s", fail) == .seconds(5415))
        #expect(try ScenarioParser.parseDuration("250ms", fail) == .milliseconds(250))
        #expect(try ScenarioParser.parseDuration("1d", fail) == .hours(24))
        #expect(try ScenarioParser.parseDuration("45", fail) == .seconds(45))
    }

    @Test("a bad line stops with FILE:LINE: message", arguments: [
        ("at 1m dance", 2, "unknown verb \"dance\""),
        ("at 1x foreground", 2, "bad duration \"1x\""),
        ("at 1m push drop 120%", 2, "bad percentage \"120%\""),
        ("at 1m push drop lots", 2, "bad percentage"),
        ("at 1m send mallory \"hi\"", 2, "unknown contact \"mallory\""),
        ("at 1m send alice hi", 2, "expected quoted text"),
        ("at 1m receive alice \"unterminated", 2, "unterminated quoted text"),
        ("at 1m receive alice \"bad \\q escape\"", 2, "unknown escape \\q"),
        ("at 1m receive alice \"\\u{110000}\"", 2, "not a Unicode scalar"),
        ("at 1m receive alice \"\\xZZ\"", 2, "expected two hex digits"),
        ("at 1m foreground now", 2, "unexpected \"now\""),
        ("at 5h foreground", 2, "after the scenario's duration"),
        ("at 1m mode turbo", 2, "unknown mode \"turbo\""),
        ("at 1m realtime sideways", 2, "unknown realtime fault"),
        ("teleport", 2, "unknown directive \"teleport\""),
        ("traffic fast", 2, "bad traffic rate"),
        ("seed -1", 2, "seed must be a non-negative integer"),
        ("at 10m sync\nat 5m sync", 3, "goes back before the previous step"),
        ("at 1m preview everything", 2, "unknown preview \"everything\""),
        ("at 1m add alice \"A\"", 2, "bad address \"alice\""),
        ("at 1m add kaspa:qzoe12345678 Zoe", 2, "expected quoted text"),
        ("at 1m preview", 2, "expected: preview message|contact|hidden"),
        ("at 1m open mallory", 2, "unknown contact \"mallory\""),
        ("at 1m open", 2, "expected: open NAME"),
        ("at 1m retry now", 2, "unexpected \"now\""),
        ("at 1m stop here", 2, "unexpected \"here\""),
        ("at 1m2s3msx sync", 2, "bad duration"),
    ])
    func badLines(line: String, number: Int, message: String) {
        let text = "duration 2h\n" + line
        #expect {
            try ScenarioParser.parse(text, file: "bad.scenario")
        } throws: { error in
            guard let e = error as? ScenarioError else { return false }
            return e.line == number && e.description.hasPrefix("bad.scenario:\(number): ") && e.message.contains(message)
                && !e.description.contains("\n")
        }
    }

    @Test("send text over the 16 KiB message limit is FILE:LINE: error; receive stays unlimited (it scripts hostile peers)")
    func sendLimit() throws {
        let limit = MessageLimits.maxBodyBytes
        let atLimit = String(repeating: "é", count: limit / 2)  // 2 bytes each: exactly the limit
        let s = try ScenarioParser.parse("duration 2h\nat 1m send alice \"\(atLimit)\"", file: "ok.scenario")
        #expect(s.steps.map(\.directive) == [.send(handle: "alice", text: atLimit)])
        #expect {
            try ScenarioParser.parse("duration 2h\n\nat 1m send alice \"\(atLimit)\\x41\"", file: "long.scenario")
        } throws: { error in
            (error as? ScenarioError)?.description
                == "long.scenario:3: send text is 16385 bytes; a message is at most 16384 bytes (16 KiB)"
        }
        let huge = String(repeating: "z", count: 4 * limit)
        let r = try ScenarioParser.parse("duration 2h\nat 1m receive alice \"\(huge)\"", file: "hostile.scenario")
        #expect(r.steps.map(\.directive) == [.receive(handle: "alice", text: huge)])
    }

    @Test("contacts added by a contact line can be used after it, not before")
    func contactOrder() throws {
        #expect(throws: ScenarioError.self) {
            try ScenarioParser.parse("at 1m send zoe \"x\"\nat 2m contact zoe \"Zoe\"", file: "c.scenario")
        }
        let s = try ScenarioParser.parse("at 1m contact zoe \"Zoe\"\nat 2m send zoe \"x\"", file: "c.scenario")
        #expect(s.steps.count == 2)
    }

    @Test("a shipped scenario with a UTF-8 BOM and CRLF line ends parses to exactly the same scenario as with LF (docs/scenarios.md)")
    func crlfAndBOM() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Scenarios/demo.scenario").path
        let lf = try String(contentsOfFile: path, encoding: .utf8)
        #expect(!lf.contains("\r"))
        let crlf = lf.replacingOccurrences(of: "\n", with: "\r\n")
        let original = try ScenarioParser.parse(lf, file: "demo.scenario")
        #expect(original.steps.count > 3)
        #expect(try ScenarioParser.parse(data: Data([0xEF, 0xBB, 0xBF]) + Data(crlf.utf8), file: "demo.scenario") == original)
        #expect(try ScenarioParser.parse("\u{FEFF}" + crlf, file: "demo.scenario") == original)
        #expect(try ScenarioParser.parse(crlf, file: "demo.scenario") == original)
    }

    @Test("with CRLF line ends an error still names the right line, and quotes no CR")
    func crlfLineNumbers() {
        #expect {
            try ScenarioParser.parse("\u{FEFF}duration 2h\r\nat 1m foreground\r\n\r\n# a comment\r\nat 2m dance\r\nat 3m sync\r\n", file: "w.scenario")
        } throws: { error in
            (error as? ScenarioError)?.description.hasPrefix("w.scenario:5: unknown verb \"dance\" (") == true
        }
    }

    @Test("a CR that is not part of a CRLF is not a line end: it stays in its line")
    func loneCR() throws {
        // A bare CR between two directives is one line with a CR in it: an error there.
        #expect {
            try ScenarioParser.parse("duration 2h\nat 1m foreground\rat 2m sync\n", file: "cr.scenario")
        } throws: { error in
            (error as? ScenarioError).map { $0.line == 2 && $0.description.contains("^M") } == true
        }
        // Only the last CR of a line is its line end: CR CR LF leaves one in the line.
        #expect(throws: ScenarioError.self) { try ScenarioParser.parse("duration 2h\r\r\nat 1m sync\n", file: "cr.scenario") }
        // A CR inside quoted text, raw or written as \x0D, is text.
        let s = try ScenarioParser.parse("duration 2h\r\nat 1m receive alice \"a\rb\\x0Dc\"\r\nat 2m sync\r\n", file: "cr.scenario")
        #expect(s.steps.map(\.directive) == [.receive(handle: "alice", text: "a\rb\rc"), .sync])
        #expect(s.steps.map(\.line) == [2, 3])
    }

    @Test("a missing file is an error naming it")
    func missingFile() {
        #expect {
            try ScenarioParser.load(path: "/nonexistent/x.scenario")
        } throws: { error in
            (error as? ScenarioError)?.description == "/nonexistent/x.scenario: no such file"
        }
    }
}
