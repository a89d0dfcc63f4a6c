import SimulatedWorld
import Simulation
import SyncCore
import SyncEngine
import Testing

/// Push is reliable; a muted contact's message lands a second before the foreground, too
/// early for the new subscription and without a push.
let justBeforeForeground = """
    duration 40m
    at 1m receive alice "hit"
    at 2m mute bob
    at 3m background
    at 19m59s receive bob "just before"
    at 20m foreground
    """

/// Improvement (b) proves the gap from the node's UTXO set. These pin what makes that proof
/// sound; each was found by the scenario fuzzer losing a message under `adaptive`.
@Suite("Proven gap (b): what the UTXO set cannot show")
struct ProvenGapTests {
    @Test("(b) a send that spends the output of a message the app never saw: the proven gap fetches it by id")
    func spentOutputIsFetched() throws {
        let run = try simulate("""
            duration 40m
            at 1m receive alice "hit"
            at 2m background
            at 3m push drop 100%
            at 4m receive bob "unseen"
            at 5m push drop 0%
            at 6m send carol "one"
            at 7m send carol "two"
            at 20m foreground
            """, policy: SyncPolicy.adaptive.without("f"))  // (f)'s refresh would find it in the background
        let unseen = try #require(run.world.ledger.first { $0.body == "unseen" })
        // Neither realtime nor push brought it, and the two sends spent it: the UTXO set no longer shows it.
        #expect(!run.world.node.delivered(unseen.txId) && !run.world.push.delivered(unseen.txId))
        #expect(!run.world.utxos.contains(unseen.txId))
        let targeted = try #require(run.catchUpStarts(kind: .targeted).first { $0 >= t(20) })
        // A targeted catch-up, no full sync after the foreground.
        expectDecisions(run, from: t(20), matching: about(.catchUp), [
            "00:20:00.409 catch-up started (subscription-restart): targeted sync of 1 object",
            "00:20:00.409 catch-up joined (app-active): rides on the running targeted subscription-restart sync",
            "00:20:03.853 catch-up finished (subscription-restart): targeted, 1 new, 2 requests, 3.4s",
        ])
        let stored = try #require(run.storage.message(txId: unseen.txId))
        #expect(stored.via == .fetch && stored.receivedAt >= targeted && stored.receivedAt < targeted + .seconds(10))
        #expect(run.world.indexer.calls.contains { $0.call == .messageById(unseen.txId) })
        run.checkInvariants()
        run.checkNothingLost()
    }

    @Test("(b) a targeted catch-up right after subscribing asks once the indexer has caught up")
    func targetedWaitsForTheIndexer() throws {
        let run = try simulate(justBeforeForeground, policy: .adaptive)
        let live = try #require(run.times { if case .realtime(.live, _) = $0 { return true } else { return false } }.last)
        // The targeted catch-up starts as the subscription goes live; the deferred app-active
        // joins it, and the log names the sync it joined rightly.
        expectDecisions(run, from: t(19), matching: { if case .realtime(.live, _) = $0 { true } else { $0.topic == .catchUp } }, [
            "00:20:00.409 realtime live: subscribed",
            "00:20:00.409 catch-up started (subscription-restart): targeted sync of 1 object",
            "00:20:00.409 catch-up joined (app-active): rides on the running targeted subscription-restart sync",
            "00:20:03.664 catch-up finished (subscription-restart): targeted, 1 new, 2 requests, 3.2s",
        ])
        let asked = try #require(run.world.indexer.calls.first { $0.at > t(19) })
        #expect(asked.at >= live + .seconds(3))
        let m = try #require(run.world.ledger.first { $0.body == "just before" })
        #expect(run.storage.message(txId: m.txId)?.via == .fetch)
        #expect(!run.log.contains { if case .error = $0.event { return true } else { return false } })
        run.checkInvariants()
        run.checkNothingLost()
    }

    @Test("(b) a txId the indexer has not indexed yet leaves the gap open: an error, and the retry fetches it")
    func notIndexedYetIsRetried() throws {
        var slow = WorldTimings()
        slow.indexingLag = (low: .seconds(8), high: .seconds(9))  // longer than the client allows for
        let run = try simulate(justBeforeForeground, policy: .adaptive, timings: slow)
        let m = try #require(run.world.ledger.first { $0.body == "just before" })
        // The gap's message is not indexed yet: an error, the targeted catch-up fails, and its
        // retry 30 s later fetches it.
        expectDecisions(run, from: t(19), matching: about(.catchUp, .error), [
            "00:20:00.409 catch-up started (subscription-restart): targeted sync of 1 object",
            "00:20:00.409 catch-up joined (app-active): rides on the running targeted subscription-restart sync",
            "00:20:03.664 error (indexer): message_by_id 0d4663be: not indexed yet; the catch-up is incomplete",
            "00:20:03.664 catch-up finished (subscription-restart): targeted, 0 new, 2 requests, 3.2s, 1 failed",
            "00:20:33.664 catch-up started (retry): targeted sync of 1 object",
            "00:20:34.148 catch-up finished (retry): targeted, 1 new, 2 requests, 484ms",
        ])
        let retry = try #require(run.catchUpStarts(trigger: .retry, kind: .targeted).first)
        let stored = try #require(run.storage.message(txId: m.txId))
        #expect(stored.via == .fetch && stored.receivedAt >= retry)
        run.checkInvariants()
    }
}
