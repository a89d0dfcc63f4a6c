import SimulatedWorld
import Simulation
import SyncCore
import SyncEngine
import Testing

@Suite("Catch-up gate and lifecycle on the simulated world (rules 6–11)")
struct CatchUpEngineTests {
    @Test("rule 8: a background refresh whose look is answered while a manual sync runs does not start its light sync beside it: the grant goes unused (fuzz case 7166)")
    func refreshLookJoinsNothing() throws {
        let (run, s) = try measure("""
            seed 7166
            duration 51m57s
            contacts 1
            traffic 30/h
            mode background-fetch
            at 210s indexer latency 6s
            at 245s background
            at 1005s foreground
            at 2047s background
            at 3057s sync
            """, .adaptive, file: "7166.scenario")
        #expect(s.overlappingSyncs == 0)
        let from = Instant.zero + .minutes(50) + .seconds(54)
        expectDecisions(run, from: from, through: from + .seconds(7), matching: about(.catchUp, .backgroundRefresh), [
            "00:50:54.786 background refresh: granted by the OS",
            "00:50:54.786 background refresh: looking first: the indexer's tips for the 5 objects (push disabled)",
            "00:50:57.000 catch-up started (manual): full sync of 5 objects, forced",
            "00:51:00.786 background refresh: 2 objects moved past their cursors",
            "00:51:00.786 background refresh: skipped: a full sync (manual) is running",
            "00:51:00.786 background refresh: requested, earliest in 15m (next refresh)",
        ])
    }

    @Test("rule 6: while reliable, a foreground 5 min after the last catch-up is skipped with the time left; 11 min after, it runs; forced triggers ignore the debounce")
    func debounce() throws {
        let run = try simulate("""
            duration 20m
            at 1m receive alice "hit"
            at 2m background
            at 5m foreground
            at 6m background
            at 11m30s foreground
            at 12m sync
            """)
        // The launch's catch-up; at 5m the subscription-restart and the deferred app-active of
        // one foreground are both skipped with the time left; at 11m30s, over 10 min after
        // the last one, it runs; the manual one 30 s later is forced.
        expectDecisions(run, matching: about(.catchUp), [
            "00:00:00.466 catch-up started (subscription-restart): full sync of 9 objects",
            "00:00:00.466 catch-up joined (app-active): rides on the running full subscription-restart sync",
            "00:00:03.737 catch-up finished (subscription-restart): full, 0 new, 9 requests, 3.2s",
            "00:05:00.409 catch-up skipped (subscription-restart): push reliable, last catch-up 4m56s ago, next allowed in 5m03s",
            "00:05:00.409 catch-up skipped (app-active): push reliable, last catch-up 4m56s ago, next allowed in 5m03s",
            "00:11:30.258 catch-up started (subscription-restart): full sync of 9 objects",
            "00:11:30.258 catch-up joined (app-active): rides on the running full subscription-restart sync",
            "00:11:33.543 catch-up finished (subscription-restart): full, 0 new, 9 requests, 3.2s",
            "00:12:00.000 catch-up started (manual): full sync of 9 objects, forced",
            "00:12:00.296 catch-up finished (manual): full, 0 new, 9 requests, 296ms",
        ])
        let skip = try #require(run.log.first { if case .catchUpSkipped = $0.event { true } else { false } })
        guard case .catchUpSkipped(_, let ago, let left) = skip.event else { return }
        #expect(ago + left == .minutes(10))  // the line rounds each to the second
        run.checkInvariants()
    }

    @Test("rules 8, 11: while not reliable one foreground gives exactly one catch-up although app-active and subscription-restart both fire")
    func oneForegroundOneCatchUp() throws {
        let run = try simulate("""
            duration 10m
            mode background-fetch
            at 1m background
            at 5m foreground
            """)
        // One catch-up, started by the subscription's restart; the deferred app-active joins it.
        expectDecisions(run, from: t(5), through: t(6), matching: about(.catchUp), [
            "00:05:00.409 catch-up started (subscription-restart): full sync of 9 objects",
            "00:05:00.409 catch-up joined (app-active): rides on the running full subscription-restart sync",
            "00:05:03.694 catch-up finished (subscription-restart): full, 0 new, 9 requests, 3.2s",
        ])
        #expect(run.driver.reliability.state == .disabled)
        run.checkInvariants()
    }

    @Test("rule 8: a trigger during a running catch-up joins it")
    func triggerJoins() throws {
        let run = try simulate("""
            duration 10m
            at 1m indexer latency 20s
            at 2m sync
            at 2m05s sync
            at 2m10s sync
            """)
        expectDecisions(run, from: t(2), through: t(3), matching: about(.catchUp), [
            "00:02:00.000 catch-up started (manual): full sync of 9 objects, forced",
            "00:02:05.000 catch-up joined (manual): rides on the running full manual sync",
            "00:02:10.000 catch-up joined (manual): rides on the running full manual sync",
            "00:02:20.000 catch-up finished (manual): full, 0 new, 9 requests, 20s",
        ])
        run.checkInvariants()
    }

    @Test("rule 10: background then foreground forces a reconnect although isConnected was still true; the first launch does not")
    func forcedReconnect() throws {
        let run = try simulate("""
            duration 10m
            at 1m background
            at 2m receive alice "while away"
            at 3m foreground
            """)
        let connects = run.log.compactMap { e -> String? in
            if case .realtime(.connecting, let reason) = e.event { return reason } else { return nil }
        }
        #expect(connects == ["cold start", "forced reconnect, after background: isConnected=true is not trusted"])
        #expect(run.world.node.connectsServed == 2)
        // The socket had died silently: realtime never delivered the message sent while away.
        let tx = run.incoming(from: "alice")[0]
        #expect(run.storage.message(txId: tx.txId)?.via != .realtime)
        run.checkInvariants()
        run.checkNothingLost()
    }

    @Test("rule 11: with realtime down, the fallback runs the catch-up 3 s after app-active")
    func fallbackWhenRealtimeDown() throws {
        let run = try simulate("""
            duration 10m
            mode background-fetch
            at 1m background
            at 2m realtime down
            at 3m foreground
            """, until: .minutes(5))
        // The fallback runs it 3 s after app-active; polling takes over only after it: its
        // first poll is 60 s after that sync completed.
        expectDecisions(run, from: t(3), through: t(4, 10), matching: about(.catchUp, .polling), [
            "00:03:03.000 catch-up started (app-active): full sync of 9 objects",
            "00:03:03.000 polling: started (realtime unavailable, mode background-fetch; next poll 1m after the running sync completes), first poll in 1m",
            "00:03:03.285 catch-up finished (app-active): full, 0 new, 9 requests, 285ms",
            "00:03:03.285 polling: next poll in 1m (1m after the last sync completed)",
            "00:04:03.285 catch-up started (poll): full sync of 9 objects",
            "00:04:03.581 catch-up finished (poll): full, 0 new, 9 requests, 296ms",
            "00:04:03.581 polling: next poll in 1m (1m after the last sync completed)",
        ])
        run.checkInvariants()
    }

    @Test("rule 9: an indexer failure mid-sync advances no cursor of an object whose messages were not stored")
    func cursorOnlyAfterStore() throws {
        let run = try simulate("""
            duration 30m
            mode off
            at 11m background
            at 12m receive alice "a"
            at 12m receive bob "b"
            at 13m foreground
            at 16m sync
            """, until: .minutes(15)) { run in
            let alice = run.contact("alice").address
            run.world.indexer.failingCalls = { call in
                if case .contextual(let a, .incoming, _, _) = call { return a == alice }
                return false
            }
        }
        let alice = run.contact("alice").address, bob = run.contact("bob").address
        let a = run.incoming(from: "alice")[0], b = run.incoming(from: "bob")[0]
        #expect(run.storage.message(txId: b.txId)?.via == .fetch)
        #expect(run.storage.cursor(.contextual(bob, .incoming)).lastFetchedBlockTime == b.blockTime)
        #expect(!run.storage.hasMessage(txId: a.txId))
        #expect(run.storage.cursor(.contextual(alice, .incoming)).lastFetchedBlockTime == nil)
        expectDecisions(run, from: t(13), matching: about(.catchUp, .error), [
            "00:13:00.409 catch-up started (subscription-restart): full sync of 9 objects",
            "00:13:00.409 catch-up joined (app-active): rides on the running full subscription-restart sync",
            "00:13:03.640 error (indexer): contextual_in: indexer internal error (500); cursor of contextual/kaspa:q508b2abb65a03907/in unchanged",
            "00:13:03.692 catch-up finished (subscription-restart): full, 1 new, 9 requests, 3.2s, 1 failed",
            "00:13:33.692 catch-up started (retry): full sync of 9 objects",
            "00:13:33.917 error (indexer): contextual_in: indexer internal error (500); cursor of contextual/kaspa:q508b2abb65a03907/in unchanged",
            "00:13:33.959 catch-up finished (retry): full, 0 new, 9 requests, 267ms, 1 failed",
            "00:14:03.959 catch-up started (retry): full sync of 9 objects",
            "00:14:04.181 error (indexer): contextual_in: indexer internal error (500); cursor of contextual/kaspa:q508b2abb65a03907/in unchanged",
            "00:14:04.238 catch-up finished (retry): full, 0 new, 9 requests, 279ms, 1 failed",
            "00:14:34.238 catch-up started (retry): full sync of 9 objects",
            "00:14:34.528 error (indexer): contextual_in: indexer internal error (500); cursor of contextual/kaspa:q508b2abb65a03907/in unchanged",
            "00:14:34.528 catch-up finished (retry): full, 0 new, 9 requests, 290ms, 1 failed",
        ])

        run.world.indexer.failingCalls = nil
        run.run()
        #expect(run.storage.message(txId: a.txId)?.via == .fetch)  // the next sync asked again: nothing lost
        #expect(run.storage.cursor(.contextual(alice, .incoming)).lastFetchedBlockTime == a.blockTime)
        // Rule 9: that request started 600 s before bob's recent cursor.
        let rewound = run.world.indexer.calls.filter { $0.at == t(16) }.compactMap { entry -> Instant? in
            if case .contextual(let addr, .incoming, let since, _) = entry.call, addr == bob { return since } else { return nil }
        }
        #expect(rewound == [b.blockTime - .seconds(600)])
        run.checkInvariants()
        run.checkNothingLost()
    }
}

@Suite("Catch-up right after subscribing")
struct IndexerLagEngineTests {
    @Test("rule 9: a message that lands just before the subscription goes live is fetched: the catch-up waits for the indexer's lag (a fuzzer finding)")
    func messageJustBeforeSubscription() throws {
        let run = try simulate("""
            duration 10m
            settle 2m
            mode off
            at 1m background
            at 4m58s receive alice "a"
            at 4m58500ms receive bob "b"
            at 4m59s receive carol "c"
            at 4m59500ms receive alice "d"
            at 5m foreground
            """)
        let live = try #require(run.times { if case .realtime(.live, _) = $0 { return true } else { return false } }.last)
        expectDecisions(run, from: t(5), through: t(5, 30), matching: about(.catchUp, .realtime), [
            "00:05:00.000 realtime connecting: forced reconnect, after background: isConnected=true is not trusted",
            "00:05:00.409 realtime live: subscribed",
            "00:05:00.409 catch-up started (subscription-restart): full sync of 9 objects",
            "00:05:00.409 catch-up joined (app-active): rides on the running full subscription-restart sync",
            "00:05:03.694 catch-up finished (subscription-restart): full, 3 new, 9 requests, 3.2s",
        ])
        let asked = run.world.indexer.calls.filter { $0.at > t(4) }.map(\.at)
        #expect(!asked.isEmpty && asked.allSatisfy { $0 >= live + .seconds(3) })
        run.checkInvariants()
        run.checkNothingLost()
    }
}

extension IndexerLagEngineTests {
    @Test("rule 9: a reply covers no more than was surely indexed when it was asked, so a catch-up 15 min later still asks for that block time (a fuzzer finding)")
    func cursorStopsShortOfTheIndexingLag() throws {
        var timings = WorldTimings()
        timings.indexingLag = (low: .seconds(1), high: .seconds(1))
        let run = try simulate("""
            duration 30m
            at 5m receive alice "a"
            at 5m2s sync
            at 20m sync
            """, timings: timings)
        let a = try #require(run.incoming(from: "alice").first)
        let alice = run.contact("alice").address
        let calls = run.world.indexer.calls.compactMap { entry -> (Instant, Instant)? in
            if case .contextual(let addr, .incoming, let since, _) = entry.call, addr == alice { return (entry.at, since) } else { return nil }
        }
        // The reply at 5m02s held the message (indexed at 5m01s), yet the cursor stops 3 s
        // before the request: a message of the same block time may still have been indexing.
        let late = try #require(calls.first { $0.0 == t(20) })
        #expect(late.1 <= a.blockTime)
        #expect(late.1 > a.blockTime - .seconds(4))
        run.checkInvariants()
    }
}

@Suite("Fallback polling and background refresh on the simulated world (rules 13–14)")
struct PollingRefreshEngineTests {
    @Test("rule 13: each poll starts 60 s after the previous sync completed (90 s apart with 30 s latency), never overlapping, and stops when realtime is back")
    func pollingCadence() throws {
        let run = try simulate("""
            duration 12m
            mode off
            at 0m indexer latency 30s
            at 1m realtime down
            at 8m realtime up
            """)
        let polls = run.catchUpStarts(trigger: .poll)
        expectDecisions(run, matching: about(.catchUp, .polling), [
            "00:00:00.466 catch-up started (subscription-restart): full sync of 9 objects",
            "00:00:00.466 catch-up joined (app-active): rides on the running full subscription-restart sync",
            "00:00:33.466 catch-up finished (subscription-restart): full, 0 new, 9 requests, 33s",
            "00:01:00.000 polling: started (realtime unavailable, mode off), first poll in 33.4s",
            "00:01:33.466 catch-up started (poll): full sync of 9 objects",
            "00:02:03.466 catch-up finished (poll): full, 0 new, 9 requests, 30s",
            "00:02:03.466 polling: next poll in 1m (1m after the last sync completed)",
            "00:03:03.466 catch-up started (poll): full sync of 9 objects",
            "00:03:33.466 catch-up finished (poll): full, 0 new, 9 requests, 30s",
            "00:03:33.466 polling: next poll in 1m (1m after the last sync completed)",
            "00:04:33.466 catch-up started (poll): full sync of 9 objects",
            "00:05:03.466 catch-up finished (poll): full, 0 new, 9 requests, 30s",
            "00:05:03.466 polling: next poll in 1m (1m after the last sync completed)",
            "00:06:03.466 catch-up started (poll): full sync of 9 objects",
            "00:06:33.466 catch-up finished (poll): full, 0 new, 9 requests, 30s",
            "00:06:33.466 polling: next poll in 1m (1m after the last sync completed)",
            "00:07:33.466 catch-up started (poll): full sync of 9 objects",
            "00:08:03.466 catch-up finished (poll): full, 0 new, 9 requests, 30s",
            "00:08:03.466 polling: next poll in 1m (1m after the last sync completed)",
            "00:08:06.432 catch-up started (rpc-restored): full sync of 9 objects",
            "00:08:06.432 polling: stopped: realtime is back",
            "00:08:39.432 catch-up finished (rpc-restored): full, 0 new, 9 requests, 33s",
        ])
        let launchDone = try #require(run.times { if case .catchUpFinished = $0 { return true } else { return false } }.first)
        #expect(launchDone - run.catchUpStarts().first! == .seconds(33))  // 3 s for the indexer to catch up with the subscription, 30 s latency
        #expect(polls.first == launchDone + .seconds(60))  // realtime went down at 1m: 60 s after that sync completed
        for (a, b) in zip(polls, polls.dropFirst()) { #expect(b - a == .seconds(90)) }
        #expect(polls.allSatisfy { $0 < t(8, 30) })
        expectEvent(run, containing: "polling: stopped: realtime is back")
        #expect(run.catchUpStarts(trigger: .rpcRestored).count == 1)
        run.checkInvariants()
    }

    @Test("rule 13: no polling in remote-push")
    func noPollingInRemotePush() throws {
        let run = try simulate("""
            duration 12m
            at 1m realtime down
            """)
        #expect(run.catchUpStarts(trigger: .poll).isEmpty)
        expectNoEvent(run, matching: { if case .polling = $0 { true } else { false } })
        run.checkInvariants()
    }

    @Test("rule 14: a light sync asks only for contextual messages of at most 8 conversations; the OS grants no more often than every 15 min")
    func lightSyncScope() throws {
        let run = try simulate("""
            duration 4h
            contacts 12
            traffic 40/h
            mode background-fetch
            at 1m background
            """, until: .hours(3))
        // Loose on purpose: random traffic over three hours and the OS's jittered grants; the
        // exact sequence would be the golden log's, not this rule's.
        let starts = run.catchUpStarts(kind: .light)
        #expect(starts.count >= 8)
        for start in starts {
            let calls = run.world.indexer.calls.filter { $0.at == start }
            #expect(calls.count == 8)
            #expect(calls.allSatisfy { $0.call.kind == "contextual_in" })
        }
        let grants = run.world.os.grants
        #expect(grants.first! >= t(16))
        for (a, b) in zip(grants, grants.dropFirst()) { #expect(b - a >= .minutes(15)) }
        #expect(run.storage.allMessages().contains { $0.via == .background })
        run.checkInvariants()
    }

    @Test("rule 14: a light sync stops at its 8 s budget and its late replies are dropped")
    func lightSyncBudget() throws {
        let run = try simulate("""
            duration 1h
            mode background-fetch
            at 1m background
            at 2m receive alice "x"
            at 3m indexer latency 20s
            """, until: .minutes(40))
        // Each light sync stops 8 s after it started, its budget used up, and asks for the next refresh.
        expectDecisions(run, matching: about(.catchUp, .backgroundRefresh), [
            "00:00:00.466 catch-up started (subscription-restart): full sync of 9 objects",
            "00:00:00.466 catch-up joined (app-active): rides on the running full subscription-restart sync",
            "00:00:03.737 catch-up finished (subscription-restart): full, 0 new, 9 requests, 3.2s",
            "00:01:00.000 background refresh: requested, earliest in 15m (mode background-fetch)",
            "00:16:21.113 background refresh: granted by the OS",
            "00:16:21.113 catch-up started (background-refresh): light sync of 3 objects",
            "00:16:29.113 catch-up finished (background-refresh): light, 0 new, 3 requests, 8s, stopped: budget of 8s used up",
            "00:16:29.113 background refresh: requested, earliest in 15m (next refresh)",
            "00:32:16.506 background refresh: granted by the OS",
            "00:32:16.506 catch-up started (background-refresh): light sync of 3 objects",
            "00:32:24.506 catch-up finished (background-refresh): light, 0 new, 3 requests, 8s, stopped: budget of 8s used up",
            "00:32:24.506 background refresh: requested, earliest in 15m (next refresh)",
        ])
        #expect(!run.storage.allMessages().contains { $0.via == .background })
        run.checkInvariants()
    }

    @Test("rule 14: no refresh is asked for while reliable push covers the background")
    func coveredByReliablePush() throws {
        let run = try simulate("""
            duration 2h
            at 1m receive alice "hit"
            at 2m background
            """, until: .hours(1))
        #expect(run.driver.reliability.state == .reliable)
        #expect(!run.log.contains { if case .backgroundRefresh = $0.event { return true } else { return false } })
        #expect(run.world.os.grants.isEmpty)
        run.checkInvariants()
    }

    @Test("rule 14: a failed forced catch-up is retried, forced, until a complete full one has run; no debounce swallows it")
    func failedForcedCatchUpIsRetried() throws {
        let run = try simulate("""
            duration 12m
            at 1m receive alice "makes push reliable"
            at 2m background
            at 2m30s indexer down
            at 3m foreground
            at 3m30s sync
            at 4m10s indexer up
            """)
        #expect(run.pushTransitions.last?.to == .reliable)
        // The manual one fails; a retry, forced, 30 s after, fails too; the next, 60 s after
        // that, completes. No retry is skipped.
        expectDecisions(run, from: t(3), matching: about(.catchUp), [
            "00:03:00.409 catch-up skipped (subscription-restart): push reliable, last catch-up 2m56s ago, next allowed in 7m03s",
            "00:03:00.409 catch-up skipped (app-active): push reliable, last catch-up 2m56s ago, next allowed in 7m03s",
            "00:03:30.000 catch-up started (manual): full sync of 9 objects, forced",
            "00:03:30.285 catch-up finished (manual): full, 0 new, 9 requests, 285ms, 9 failed",
            "00:04:00.285 catch-up started (retry): full sync of 9 objects, forced",
            "00:04:00.581 catch-up finished (retry): full, 0 new, 9 requests, 296ms, 9 failed",
            "00:05:00.581 catch-up started (retry): full sync of 9 objects, forced",
            "00:05:00.850 catch-up finished (retry): full, 0 new, 9 requests, 269ms",
        ])
        #expect(run.driver.gate.owed == nil)
        #expect(run.driver.gate.retryDue == nil)  // paid: no retry is due any more
        run.checkInvariants()
    }

    @Test("rule 14: push breaking in the background (token expired, mode changed) asks for the safety-net refresh at once")
    func pushBreaksInBackground() throws {
        let run = try simulate("""
            duration 40m
            at 1m receive alice "makes push reliable"
            at 2m background
            at 3m token expire
            at 39m foreground
            """)
        expectDecisions(run, from: t(2), through: t(38), matching: about(.backgroundRefresh, .catchUp), [
            "00:03:00.000 background refresh: requested, earliest in 15m (safety net: push disabled)",
            "00:18:21.113 background refresh: granted by the OS",
            "00:18:21.113 catch-up started (background-refresh): light sync of 3 objects",
            "00:18:21.398 catch-up finished (background-refresh): light, 0 new, 3 requests, 285ms",
            "00:18:21.398 background refresh: requested, earliest in 15m (next refresh)",
            "00:34:08.791 background refresh: granted by the OS",
            "00:34:08.791 catch-up started (background-refresh): light sync of 3 objects",
            "00:34:09.039 catch-up finished (background-refresh): light, 0 new, 3 requests, 248ms",
            "00:34:09.039 background refresh: requested, earliest in 15m (next refresh)",
        ])
        #expect(run.world.os.grants.contains { $0 > t(18) && $0 < t(22) })  // the OS granted it 15–18 min later
        let light = run.catchUpStarts(trigger: .backgroundRefresh, kind: .light)
        #expect(!light.isEmpty)
        let byMode = try simulate("""
            duration 40m
            at 1m receive alice "makes push reliable"
            at 2m background
            at 3m mode background-fetch
            at 10m mode off
            at 39m foreground
            """)
        expectDecisions(byMode, from: t(2), through: t(38), matching: about(.backgroundRefresh, .catchUp), [
            "00:03:00.000 background refresh: requested, earliest in 15m (mode background-fetch)",
            "00:10:00.000 background refresh: request withdrawn: notification mode is off",
        ])
        #expect(byMode.world.os.grants.isEmpty)
        run.checkInvariants()
        byMode.checkInvariants()
    }
}
