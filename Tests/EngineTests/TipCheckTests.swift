import Foundation
import SimWorld
import Simulation
import SyncCore
import SyncEngine
import Testing

/// Adaptive's (d) (SPEC §4, issue 16): with realtime down and push not reliable, a poll asks
/// the indexer's tip first and syncs only when it moved past what the last complete full sync
/// covered; a full sync still runs at least every 6 h. Judged against the world's ground
/// truth (its ledger and the indexer's own count of calls), not the engine's view.
@Suite("Adaptive (d): the tip before a poll")
struct TipCheckTests {
    /// Nine hours with realtime down from the 5th minute, push off: polling all along.
    static let offline = """
        seed 41
        duration 9h
        contacts 5
        traffic 4/h
        mode background-fetch
        at 0m foreground
        at 5m realtime down
        """

    @Test("polls that find nothing cost one tip, not a full sync; every message still arrives, as soon as with seed")
    func fewerRequestsSameMessages() throws {
        let (withTip, tipped) = try measure(Self.offline, .adaptive)
        let (_, plain) = try measure(Self.offline, SyncPolicy.adaptive.without("d"))
        #expect(tipped.messagesLost == 0 && plain.messagesLost == 0)
        #expect(tipped.messagesDelivered == plain.messagesDelivered)
        let tips = withTip.world.indexer.requestsByKind["tip"] ?? 0
        #expect(tips > 100)  // a poll a minute, most of them quiet
        #expect(tipped.catchUpFull * 3 < plain.catchUpFull)
        #expect(tipped.backendRequests * 3 < plain.backendRequests)
        // Not slower: each message lands in the store by the poll after it is indexed.
        #expect((tipped.latencyMax ?? .infinity) <= (plain.latencyMax ?? 0) + 61)
    }

    @Test("a sync runs exactly when the tip moved past what the last full sync covered, and at least every 6 h")
    func syncsWhenTheTipMoves() throws {
        let (run, _) = try measure(Self.offline, .adaptive)
        let lines = run.log.map(\.line)
        var answers = 0
        for (i, e) in run.log.enumerated() {
            guard e.line.contains("polling: tip ") else { continue }
            answers += 1
            // The next decision after a tip answer: a sync, or none.
            let synced = lines[i].contains("syncing")
            let next = run.log[(i + 1)...].first { if case .catchUpStarted = $0.event { true } else { false } }
            if synced {
                #expect(next?.at == e.at, "\(lines[i]): the sync starts at once")
            } else {
                #expect(next.map { $0.at > e.at } ?? true, "\(lines[i]): no sync")
            }
        }
        #expect(answers > 100)
        // Each message the indexer had when a quiet tip answered was already stored: the
        // tip said "nothing new" only when nothing was new (ground truth: the ledger).
        for (i, e) in run.log.enumerated() where e.line.contains("nothing new, no sync") {
            let landedBefore = run.world.ledger.filter { $0.direction == .incoming && $0.blockTime + .seconds(3) < e.at }
            let storedBy = Set(run.storage.allMessages().filter { $0.receivedAt <= e.at }.map(\.txId))
            for m in landedBefore where m.blockTime > .zero + .minutes(5) {
                #expect(storedBy.contains(m.txId), "line \(i): \(m.txId.prefix(8)) landed at \(m.blockTime) and was not stored when the tip said nothing new")
            }
        }
        // Full syncs at least every 6 h (plus a minute for the poll that runs it).
        let fulls = run.log.compactMap { e -> Instant? in if case .catchUpStarted(_, .full, _, _) = e.event { e.at } else { nil } }
        for (a, b) in zip(fulls, fulls.dropFirst()) { #expect(b - a <= .hours(6) + .minutes(2)) }
    }

    @Test("without (d), or with push reliable, no tip is asked")
    func onlyWhenItApplies() throws {
        let (plain, _) = try measure(Self.offline, SyncPolicy.adaptive.without("d"))
        #expect(plain.world.indexer.requestsByKind["tip"] == nil)
        let (seed, _) = try measure(Self.offline, .seed)
        #expect(seed.world.indexer.requestsByKind["tip"] == nil)
        let healthy = """
            seed 41
            duration 2h
            contacts 5
            traffic 20/h
            at 0m foreground
            at 10m realtime down
            """
        let (run, _) = try measure(healthy, .adaptive)
        // Push turns reliable early; from then on polls run plain syncs.
        let reliableAt = run.log.first { if case .pushState(_, .reliable, _) = $0.event { true } else { false } }?.at
        #expect(reliableAt != nil)
        let tipsAfter = run.log.filter { $0.line.contains("asking the indexer's tip") && $0.at > reliableAt! }
        #expect(tipsAfter.isEmpty)
    }

    @Test("the tip reply is read strictly: a number of milliseconds or null, never in the future")
    func tipWire() throws {
        #expect(try IndexerTip.read(Data(#"{"tip": 1500}"#.utf8), now: Instant(milliseconds: 2000)) == Instant(milliseconds: 1500))
        #expect(try IndexerTip.read(Data(#"{"tip": null}"#.utf8), now: nil) == nil)
        for bad in [#"{"tip": "12"}"#, #"{"tip": -1}"#, #"{"tip": true}"#, #"{}"#, #"[1]"#, #"{"tip": 99999999}"#, "not json"] {
            #expect(throws: WireError.self, "\(bad)") { try IndexerTip.read(Data(bad.utf8), now: Instant(milliseconds: 2000)) }
        }
    }
}
