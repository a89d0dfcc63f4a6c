import Directives
import Foundation
import Simulation
import SyncCore
import Testing
import TestSupport

/// One reader of a directive. `Directive(parsing:)` (Directives) reads a line
/// alone — an operator's, a client's — and a scenario file's lines through the same words.
@Suite("Directive(parsing:): one reader of a directive")
struct DirectiveParsingTests {
    @Test("every timed line of every shipped scenario reads the same alone as in its file, and its words read back to it")
    func sameAsTheFile() throws {
        let root = BuiltProducts.packageRoot.appendingPathComponent("Scenarios")
        var checked = 0
        for file in try FileManager.default.contentsOfDirectory(atPath: root.path) where file.hasSuffix(".scenario") {
            let scenario = try ScenarioParser.load(path: root.appendingPathComponent(file).path)
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            for step in scenario.steps {
                let raw = String(lines[step.line - 1])
                let words = raw.split(separator: " ", maxSplits: 2)
                let alone = String(words[2]).components(separatedBy: " #")[0]
                #expect(try Directive(parsing: alone) == step.directive, "\(file):\(step.line): \(alone)")
                #expect(try Directive(parsing: step.directive.scenarioText) == step.directive, "\(file):\(step.line) round trip")
                checked += 1
            }
        }
        #expect(checked >= 50)
    }

    @Test("a line that is not a directive says why in one line; a timed line is refused alone")
    func failures() {
        for (line, says) in [("", "expected a directive"), ("at 5m indexer down", "without its time"), ("indexer sideways", "indexer"),
                             ("receive alice \"unterminated", "unterminated"), ("push drop 250%", "%"),
                             // A line anyone may send a server: these overflowed and stopped it.
                             ("indexer latency 9999999999999999", "too long"), ("indexer latency 999999999d999999999d", "too long"),
                             ("push delay 9223372036854775807s", "duration"), ("indexer latency 3651d", "too long")] {
            #expect {
                try Directive(parsing: line)
            } throws: { error in
                "\(error)".contains(says) && !"\(error)".contains("\n")
            }
        }
    }

    @Test("each directive names who carries it out: the world's faults and contacts, the app's lifecycle and settings, the script's end")
    func targets() throws {
        #expect(try Directive(parsing: "push drop 100%").target == .world)
        #expect(try Directive(parsing: "receive alice \"hi\"").target == .world)
        #expect(try Directive(parsing: "background").target == .app)
        #expect(try Directive(parsing: "mode off").target == .app)
        #expect(try Directive(parsing: "quit").target == .script)
    }
}

/// What a directive leaves in the log, read by a person.
@Suite("A directive in the log: once, and one line")
struct DirectiveLogTests {
    static func worldLines(_ lines: [Directive]) -> [String] {
        let session = AppSession(seed: 3, contacts: 2, trafficPerHour: 0, mode: .remotePush, policy: .adaptive)
        session.start()
        for d in lines {
            session.apply(d)
            session.advance(to: session.scheduler.now + .seconds(1))
        }
        return session.log.map(\.event.line).filter { $0.hasPrefix("world: ") }
    }

    @Test("a mode, a preview, a mute and an unmute are logged once each, in the engine's words (they were logged twice in two wordings)")
    func once() {
        let lines = Self.worldLines([.mode(.off), .preview(.hidden), .mute(handle: "alice"), .unmute(handle: "alice")])
        #expect(lines == ["world: notification mode off", "world: notification preview hidden", "world: muted alice", "world: unmuted alice"])
    }

    @Test("a 16 KiB message is one line of the log: its first 60 characters and its size; a short one is quoted whole")
    func longBodyIsOneLine() {
        let long = String(repeating: "ab\ncd ", count: 16 * 1024 / 6)
        let lines = Self.worldLines([.send(handle: "alice", text: long), .send(handle: "alice", text: "short and sweet")])
        let first = try! #require(lines.first { $0.hasPrefix("world: send alice") })
        #expect(first.count < 120)
        #expect(first.hasSuffix("…\" (\(long.utf8.count) bytes)"))
        #expect(!first.contains("\n"))
        #expect(lines.contains("world: send alice \"short and sweet\""))
        #expect(Directive.send(handle: "a", text: "x").summary == "send a \"x\"")
    }
}
