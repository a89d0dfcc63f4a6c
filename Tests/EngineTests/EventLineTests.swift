import Simulation
import SyncCore
import SyncEngine
import Testing
import TestSupport

/// A word from the network (a txId, a close reason, a name) never reaches a
/// terminal raw through the log's words: `SyncEvent.line` is the one edge where an event
/// becomes text, and it makes every control visible.
@Suite("The log's words: the network's text made visible")
struct EventLineTests {
    @Test("a txId carrying OSC 52 and a close reason carrying OSC 0 and BEL come out as ^[ and ^G; printable lines stay as they are")
    func escaped() {
        let hostile: [SyncEvent] = [
            .observationHit(txId: "\u{1B}]52;c;cHduZWQ=\u{07}", pushOffset: .seconds(2), via: .realtime),
            .realtime(.offline, reason: "push relay closed (\u{1B}]0;pwned\u{07} \u{9B}2J \u{202E}gnp)"),
            .observationHitSuperseded(txId: "ab\u{1B}[2Jcd", via: .realtime),
        ]
        for e in hostile {
            let line = e.line
            #expect(!line.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || (0x202A...0x202E).contains($0.value) },
                    "\(line.debugDescription)")
            #expect(line.contains("^["), "\(line)")
        }
        #expect(SyncEvent.realtime(.offline, reason: "node unreachable → retry").line == "realtime offline: node unreachable → retry")
    }

    /// The words each topic's lines begin with, as the log reads (docs/simulate.md's event log):
    /// written here from the log, not from `SyncEvent.topic`.
    static let topicWords: [SyncEvent.Topic: String] = [
        .launched: "launched:", .lifecycle: "lifecycle ", .realtime: "realtime ", .pushState: "push ", .observation: "observation ",
        .catchUp: "catch-up ", .message: "message ", .sent: "sent ", .send: "send to ", .outgoing: "outgoing ", .polling: "polling: ",
        .pushCheck: "push check: ", .closingLook: "closing look: ", .pushPath: "push path ", .pushService: "push service: ",
        .backgroundRefresh: "background refresh: ", .pushWatch: "push watch: ", .pushToken: "push token ", .banner: "banner ",
        .error: "error (", .store: "store: ", .world: "world: ", .contact: "contact ", .inspection: "inspection: ",
        .unread: "unread ", .status: "status: ",
    ]

    @Test("an event's topic is what its line names first, over every event of the shipped scenarios under every policy: a typed filter picks what a line's words would")
    func topicsNameTheLine() throws {
        #expect(Set(Self.topicWords.keys) == Set(SyncEvent.Topic.allCases))
        var seen = Set<SyncEvent.Topic>()
        for name in GoldenEventLogTests.scenarios {
            let path = BuiltProducts.packageRoot.appendingPathComponent("Scenarios/\(name).scenario").path
            let scenario = try ScenarioParser.load(path: path, streaming: true)
            for run in try ScenarioRun.side(by: SyncPolicy.all, of: scenario, keepsLog: true) {
                for e in run.log {
                    seen.insert(e.event.topic)
                    let words = try #require(Self.topicWords[e.event.topic])
                    #expect(e.event.line.hasPrefix(words), "\(name): \(e.event.topic) but \(e.event.line.prefix(80))")
                    // No other topic's words fit the line better (a longer prefix that also matches).
                    let better = Self.topicWords.filter { $0.key != e.event.topic && $0.value.count > words.count && e.event.line.hasPrefix($0.value) }
                    #expect(better.isEmpty, "\(name): \(e.event.line.prefix(80)) reads as \(better.keys)")
                }
            }
        }
        #expect(seen.count >= 15, "the shipped scenarios show \(seen.count) topics")
    }
}
