import SyncCore
import SyncEngine
import Testing

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
}
