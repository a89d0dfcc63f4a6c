import SimulatedWorld
import Simulation
import SyncCore
import SyncEngine
import Testing

@Suite("One rejected item cannot block a cursor forever")
struct RejectedItemTests {
    /// A scenario with a body over the wire's 64 KiB limit from alice while the app is away
    /// (realtime cannot carry it; its push is rejected too), then a normal message after it.
    func oversized(policy: SyncPolicy) throws -> ScenarioRun {
        var s = try scenario("""
            duration 40m
            at 1m background
            at 3m foreground
            at 20m background
            at 21m receive alice "after the big one"
            at 22m foreground
            """)
        s.steps.append(.init(at: t(2), directive: .receive(handle: "alice", text: String(repeating: "x", count: 70_000)), line: 0))
        s.steps.sort { $0.at < $1.at }
        let run = ScenarioRun(scenario: s, policy: policy)
        run.run()
        return run
    }

    @Test("rule 9: a body over 64 KiB is rejected, retried, then skipped for good with an error event; the cursor moves and later catch-ups complete", arguments: [SyncPolicy.seed, .adaptive])
    func oversizedBodyIsSkipped(policy: SyncPolicy) throws {
        let run = try oversized(policy: policy)
        let big = try #require(run.world.ledger.first { $0.body.utf8.count == 70_000 })
        let after = try #require(run.world.ledger.first { $0.body == "after the big one" })
        #expect(!run.storage.hasMessage(txId: big.txId))
        #expect(run.storage.hasMessage(txId: after.txId))
        let skipped = run.log.filter { $0.event.line.contains("message \(big.txId.prefix(8)) rejected 3 times in a row") }
        // Its push is refused by the extension; the indexer's reply is rejected at the catch-up and
        // its two retries, then the item is skipped for good, said once.
        expectDecisions(run, matching: about(.error), [
            "00:02:03.793 error (notification extension): push payload: \"payload\" is longer than 64 KiB; ignored, the message will come by another channel",
            "00:03:03.657 error (indexer): indexer contextual_in reply messages[0]: \"payload\" is longer than 64 KiB (rejected 1 of 3 times before it is skipped); nothing stored, cursor of contextual/kaspa:q508b2abb65a03907/in unchanged",
            "00:03:33.941 error (indexer): indexer contextual_in reply messages[0]: \"payload\" is longer than 64 KiB (rejected 2 of 3 times before it is skipped); nothing stored, cursor of contextual/kaspa:q508b2abb65a03907/in unchanged",
            "00:04:04.202 error (indexer): message 437a813d rejected 3 times in a row (indexer contextual_in reply messages[0]: \"payload\" is longer than 64 KiB); skipped for good, the sync moves on",
        ])
        // The object's cursor moved past the big one's block time.
        let cursor = run.storage.cursor(.contextual(run.contact("alice").address, .incoming)).lastFetchedBlockTime
        #expect(cursor.map { $0 >= big.blockTime } == true)
        // Every full catch-up after the skip completed.
        let skipAt = try #require(skipped.first?.at)
        let laterFailures = run.log.filter {
            if case .catchUpFinished(_, _, _, _, let failed, _, _) = $0.event { return $0.at > skipAt && failed > 0 } else { return false }
        }
        #expect(laterFailures.isEmpty)
        #expect(run.driver.gate.owed == nil)
        run.checkInvariants()
    }

    @Test("the same item rejected for different reasons, or a broken item once, is retried, not skipped")
    func transientIsRetried() {
        var r = RejectedItems(attempts: 3)
        let a = IndexerPage.RejectedItem(key: "tx1", txId: "tx1", blockTime: nil, reason: "too long")
        let b = IndexerPage.RejectedItem(key: "tx1", txId: "tx1", blockTime: nil, reason: "wrong kind")
        #expect(r.judge([a]) == .retry(reason: "too long", strikes: 1))
        #expect(r.judge([b]) == .retry(reason: "wrong kind", strikes: 1))  // another reason starts over
        #expect(r.judge([b]) == .retry(reason: "wrong kind", strikes: 2))
        #expect(r.judge([b]) == .skip(newlySkipped: [b]))
        #expect(r.judge([b]) == .skip(newlySkipped: []))  // already skipped: said once
        #expect(r.skipped == ["tx1"])
    }

    @Test("a message over the limit is not sent: an error event, nothing published")
    func sendOverLimit() throws {
        let run = try simulate("duration 2m", until: .minutes(1))
        let before = run.world.ledger.count
        #expect(run.driver.send(to: run.contact("bob").address, text: String(repeating: "é", count: MessageLimits.maxBodyBytes / 2 + 1)) == nil)
        #expect(run.world.ledger.count == before)
        #expect(run.log.last?.event.line.hasSuffix("a message of 16386 bytes is over the limit of 16384; not sent") == true)
        #expect(run.driver.send(to: run.contact("bob").address, text: String(repeating: "é", count: MessageLimits.maxBodyBytes / 2)) != nil)
    }
}
