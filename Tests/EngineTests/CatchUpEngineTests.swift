import SimWorld
import Simulation
import SyncCore
import SyncEngine
import Testing

@Suite("Catch-up gate and lifecycle on the simulated world (rules 6–11)")
struct CatchUpEngineTests {
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
        let first = try #require(run.catchUpStarts().first)
        #expect(first < t(0, 1))
        let skips = run.log.filter { if case .catchUpSkipped = $0.event { return true } else { return false } }
        #expect(skips.count == 2)  // subscription-restart and the deferred app-active of one foreground
        #expect(skips.allSatisfy { $0.at > t(5) && $0.at < t(5, 2) })
        let skip = try #require(skips.first)
        guard case .catchUpSkipped(_, let ago, let left) = skip.event else { Issue.record("not a skip"); return }
        #expect(ago + left == .minutes(10))
        #expect(left > .minutes(4) && left < .minutes(6))
        #expect(skip.event.line.contains("next allowed in"))
        let starts = run.catchUpStarts()
        #expect(starts.contains { $0 > t(11, 30) && $0 < t(11, 32) })  // 11.5 min after: runs
        #expect(run.catchUpStarts(trigger: .manual) == [t(12)])        // 30 s after, forced
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
        let during = run.catchUpStarts().filter { $0 >= t(5) && $0 < t(6) }
        #expect(during.count == 1)
        let joined = run.log.filter { $0.at >= t(5) && $0.at < t(6) }.compactMap { e -> CatchUpTrigger? in
            if case .catchUpJoined(let tr, _) = e.event { return tr } else { return nil }
        }
        let started = run.log.first { if case .catchUpStarted = $0.event { return $0.at >= t(5) } else { return false } }
        #expect(started?.event.line.contains("(subscription-restart)") == true)
        #expect(joined == [.appActive])
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
        #expect(run.catchUpStarts(trigger: .manual) == [t(2)])
        let joins = run.times { if case .catchUpJoined(.manual, _) = $0 { return true } else { return false } }
        #expect(joins == [t(2, 5), t(2, 10)])
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
        let starts = run.catchUpStarts().filter { $0 >= t(3) }
        #expect(starts.first == t(3, 3))
        expectEvent(run, at: t(3, 3), containing: "catch-up started (app-active)")
        // Polling took over only after the fallback: its first poll is 60 s after that sync completed.
        let done = try #require(run.times { if case .catchUpFinished = $0 { return true } else { return false } }.first { $0 >= t(3, 3) })
        #expect(run.catchUpStarts(trigger: .poll).first.map { $0 - done } == .seconds(60))
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
                if case .contextual(let a, .incoming, _) = call { return a == alice }
                return false
            }
        }
        let alice = run.contact("alice").address, bob = run.contact("bob").address
        let a = run.incoming(from: "alice")[0], b = run.incoming(from: "bob")[0]
        #expect(run.storage.message(txId: b.txId)?.via == .fetch)
        #expect(run.storage.cursor(.contextual(bob, .incoming)).lastFetchedBlockTime == b.blockTime)
        #expect(!run.storage.hasMessage(txId: a.txId))
        #expect(run.storage.cursor(.contextual(alice, .incoming)).lastFetchedBlockTime == nil)
        #expect(run.log.contains { if case .error(let s, let m) = $0.event { return s == "indexer" && m.contains("contextual_in") } else { return false } })

        run.world.indexer.failingCalls = nil
        run.run()
        #expect(run.storage.message(txId: a.txId)?.via == .fetch)  // the next sync asked again: nothing lost
        #expect(run.storage.cursor(.contextual(alice, .incoming)).lastFetchedBlockTime == a.blockTime)
        // Rule 9: that request started 600 s before bob's recent cursor.
        let rewound = run.world.indexer.calls.filter { $0.at == t(16) }.compactMap { entry -> Instant? in
            if case .contextual(let addr, .incoming, let since) = entry.call, addr == bob { return since } else { return nil }
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
        let start = try #require(run.catchUpStarts(trigger: .subscriptionRestart).last)
        #expect(start == live)
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
            if case .contextual(let addr, .incoming, let since) = entry.call, addr == alice { return (entry.at, since) } else { return nil }
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
        #expect(polls.count >= 4)
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
        let start = try #require(run.catchUpStarts(kind: .light).first)
        let stop = run.log.first { if case .catchUpFinished(_, .light, _, _, _, _, let by) = $0.event { return by != nil } else { return false } }
        #expect(stop?.at == start + .seconds(8))
        #expect(stop?.event.line.contains("stopped: budget of 8s used up") == true)
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
        let manual = run.log.first { if case .catchUpFinished(.manual, _, _, _, let failed, _, _) = $0.event { return failed > 0 } else { return false } }
        #expect(manual != nil)
        let retries = run.log.filter { if case .catchUpStarted(.retry, .full, true, _) = $0.event { return true } else { return false } }
        // 30 s after the manual one failed, then 60 s after the first retry failed.
        #expect(retries.count == 2)
        #expect(retries.first.map { $0.at > t(4) && $0.at < t(4, 2) } == true)
        #expect(retries.last.map { $0.at > t(5) && $0.at < t(5, 3) } == true)
        let skippedRetry = run.log.contains { if case .catchUpSkipped(.retry, _, _) = $0.event { return true } else { return false } }
        #expect(!skippedRetry)
        let ok = run.log.last { if case .catchUpFinished(.retry, .full, _, _, 0, _, nil) = $0.event { return true } else { return false } }
        #expect(ok?.at ?? .zero > t(5))
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
        func requests(_ r: ScenarioRun) -> [TimedEvent] {
            r.log.filter { if case .backgroundRefresh(let s) = $0.event { return s.hasPrefix("requested") } else { return false } }
        }
        #expect(requests(run).first?.at == t(3))
        #expect(requests(run).first?.event.line.contains("safety net: push disabled") == true)
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
        #expect(requests(byMode).map(\.at) == [t(3)])
        expectEvent(byMode, at: t(10), containing: "request withdrawn: notification mode is off")
        #expect(byMode.world.os.grants.isEmpty)
        run.checkInvariants()
        byMode.checkInvariants()
    }
}
