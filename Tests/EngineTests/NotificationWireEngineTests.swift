import Foundation
import RunReports
import SimulatedWorld
import Simulation
import SyncCore
import SyncEngine
import Testing

@Suite("Notifications and wire input on the simulated world (rule 15, docs/reliability.md#broken-wire-input)")
struct NotificationWireEngineTests {
    @Test("rule 15: one banner per conversation per second, the badge is the unread count, muted contacts raise none")
    func bannersAndBadge() throws {
        var timings = WorldTimings()
        timings.pushLatency = (.seconds(2), .seconds(2))
        let run = try simulate("""
            duration 10m
            at 1m receive alice "read me"
            at 1m receive bob "me too"
            at 2m mute carol
            at 3m background
            at 4m receive alice "first"
            at 4m receive alice "second, same second"
            at 4m receive bob "other conversation"
            at 5m receive carol "muted"
            """, timings: timings, until: .minutes(6))
        let banners = run.log.compactMap { e -> (Banner, Int)? in
            if case .banner(let b, let badge) = e.event { return (b, badge) } else { return nil }
        }
        #expect(banners.map(\.0.title) == ["Alice", "Bob"])
        #expect(banners.map(\.0.body) == ["first", "other conversation"])
        #expect(banners.map(\.1) == [3, 5])  // 2 unread + the pushes pending in the extension
        let suppressed = run.log.compactMap { e -> String? in
            if case .bannerSuppressed(_, let reason) = e.event { return reason } else { return nil }
        }
        #expect(suppressed == ["rate limit: one per 1s per conversation"])
        #expect(run.world.push.sent == 5)  // carol is muted at the push service too
        #expect(run.driver.badge == 5)
        run.world.os.moveToForeground()
        run.advance(to: t(7))
        #expect(run.storage.unreadCounts().values.reduce(0, +) == run.driver.badge, "the store, written through, agrees with the engine's count")
        #expect(run.driver.badge == 5)
        #expect(run.storage.unreadCounts().values.reduce(0, +) == 5)
        #expect(run.storage.unreadCounts()[run.contact("alice").address] == 3)
        // Carol is muted: no push, and realtime was dead in the background. Push is reliable
        // and the last catch-up is under 10 min old, so the foreground catch-up is skipped
        // (rule 6) and her message waits for the next allowed one — here a manual sync.
        let carol = run.incoming(from: "carol")[0]
        #expect(!run.storage.hasMessage(txId: carol.txId))
        run.driver.syncNow()
        run.advance(to: t(8))
        #expect(run.storage.message(txId: carol.txId)?.via == .fetch)
        #expect(run.driver.badge == 6)
        run.checkInvariants()
        run.checkNothingLost()
    }

    @Test("rule 15: the preview mode decides what a banner shows")
    func previewModes() throws {
        let run = try simulate("""
            duration 10m
            at 1m background
            at 2m receive alice "secret plans"
            """, until: .minutes(5)) { run in
            run.driver.setPreview(.hidden)
        }
        let banner = run.log.compactMap { e -> Banner? in if case .banner(let b, _) = e.event { return b } else { return nil } }
        #expect(banner == [Banner(conversation: run.contact("alice").address, title: "synchat", body: "New message")])
        run.checkInvariants()
    }

    @Test("a malformed push payload is an error event and loses no message")
    func malformedPush() throws {
        let run = try simulate("""
            duration 10m
            at 1m receive alice "payload will be garbage"
            at 2m receive bob "fine"
            """) { run in
            run.world.push.malformedPayloads = 1
        }
        expectDecisions(run, matching: about(.error), [
            "00:01:03.793 error (push): push payload: \"txId\" is not a string; ignored, the message will come by another channel",
        ])
        #expect(run.storage.message(txId: run.incoming(from: "alice")[0].txId)?.via == .realtime)
        run.checkInvariants()
        run.checkNothingLost()
    }

    @Test("a malformed indexer response is an error event, moves no cursor, and loses no message")
    func malformedIndexerReply() throws {
        let run = try simulate("""
            duration 30m
            mode off
            at 1m background
            at 2m receive alice "a"
            at 2m receive bob "b"
            at 2m receive carol "c"
            at 3m foreground
            at 10m sync
            """, until: .minutes(5)) { run in
            run.world.indexer.malformedReplies = 1
        }
        expectDecisions(run, matching: about(.error, .catchUp), [
            "00:00:00.466 catch-up started (subscription-restart): full sync of 9 objects",
            "00:00:00.466 catch-up joined (app-active): rides on the running full subscription-restart sync",
            "00:00:03.555 error (indexer): indexer payments reply: not valid JSON (26 bytes); nothing stored, cursor of payments unchanged",
            "00:00:03.737 catch-up finished (subscription-restart): full, 0 new, 9 requests, 3.2s, 1 failed",
            "00:00:33.737 catch-up started (retry): full sync of 9 objects",
            "00:00:34.022 catch-up finished (retry): full, 0 new, 9 requests, 285ms",
            "00:03:00.409 catch-up started (subscription-restart): full sync of 9 objects",
            "00:03:00.409 catch-up joined (app-active): rides on the running full subscription-restart sync",
            "00:03:03.705 catch-up finished (subscription-restart): full, 3 new, 9 requests, 3.2s",
        ])
        let stored = run.world.ledger.filter { run.storage.hasMessage(txId: $0.txId) }.count
        let missing = run.world.ledger.count - stored
        #expect(missing <= 1)
        run.run()
        run.checkInvariants()
        run.checkNothingLost()
    }

    @Test("wire decoding rejects every malformed shape with a message")
    func wireRejects() throws {
        let me = Address("kaspa:me")
        let bad: [(String, String)] = [
            ("not json", "not valid JSON"),
            ("[1,2]", "not a JSON object"),
            (#"{"synchat": {}}"#, "missing \"aps\""),
            (#"{"aps": {}, "synchat": {"txId": 7}}"#, "\"txId\" is not a string"),
            (#"{"aps": {}, "synchat": {"txId": "t", "sender": "s", "kind": "x", "blockTime": 1, "payload": ""}}"#, "unknown kind"),
            (#"{"aps": {}, "synchat": {"txId": "t", "sender": "s", "kind": "contextual", "blockTime": -1, "payload": ""}}"#, "non-negative integer"),
            (#"{"aps": {}, "synchat": {"txId": "t", "sender": "s", "kind": "contextual", "blockTime": true, "payload": ""}}"#, "non-negative integer"),
            (#"{"aps": {}, "synchat": {"txId": "t", "sender": "kaspa:me", "kind": "contextual", "blockTime": 1, "payload": ""}}"#, "own address"),
        ]
        for (json, message) in bad {
            #expect {
                try PushPayload.decode(Data(json.utf8), me: me)
            } throws: { error in
                (error as? WireError)?.message.contains(message) == true
            }
        }
        let good = #"{"aps": {}, "synchat": {"txId": "t", "sender": "s", "kind": "payment", "blockTime": 5, "payload": "3 KAS"}}"#
        let m = try PushPayload.decode(Data(good.utf8), me: me)
        #expect(m == NetworkMessage(txId: "t", conversation: Address("s"), direction: .incoming, kind: .payment, body: "3 KAS", blockTime: Instant(milliseconds: 5)))

        let call = IndexerCall.contextual(Address("s"), .incoming, since: Instant(milliseconds: 100))
        let replies: [(String, String)] = [
            (#"{"messages": {}}"#, "missing \"messages\" array"),
            (#"{"messages": [], "nextPage": "2"}"#, "nextPage"),
            (#"{"messages": [{"txId": "a", "sender": "s", "recipient": "kaspa:me", "kind": "contextual", "blockTime": 50, "payload": ""}]}"#, "before the requested start"),
            (#"{"messages": [{"txId": "a", "sender": "x", "recipient": "kaspa:me", "kind": "contextual", "blockTime": 150, "payload": ""}]}"#, "not a incoming contextual message of s"),
            (#"{"messages": [{"txId": "a", "sender": "s", "recipient": "y", "kind": "contextual", "blockTime": 150, "payload": ""}]}"#, "neither sender nor recipient"),
            (#"{"messages": [{"txId": "a", "sender": "s", "recipient": "kaspa:me", "kind": "contextual", "blockTime": 150, "payload": ""}, {"txId": "a", "sender": "s", "recipient": "kaspa:me", "kind": "contextual", "blockTime": 160, "payload": ""}]}"#, "duplicate txId"),
        ]
        for (json, message) in replies {
            #expect {
                try IndexerPage.decode(Data(json.utf8), for: call, me: me)
            } throws: { error in
                (error as? WireError)?.message.contains(message) == true
            }
        }
    }
}

@Suite("Determinism and shipped scenarios")
struct DeterminismTests {
    func load(_ name: String) throws -> Scenario {
        try ScenarioParser.load(path: ShippedScenarios.directory.appendingPathComponent(name).path)
    }

    @Test("the same seed and scenario give a byte-identical event log; another seed a different one")
    func sameSeedSameLog() throws {
        let s = try load("push-outage.scenario")
        let a = ScenarioRun(scenario: s), b = ScenarioRun(scenario: s), c = ScenarioRun(scenario: s, seed: s.seed + 1)
        a.run(); b.run(); c.run()
        #expect(a.logLines.count > 100)
        #expect(a.logLines.joined(separator: "\n") == b.logLines.joined(separator: "\n"))
        #expect(a.logLines != c.logLines)
    }

    @Test("the push-outage scenario shows reliable, the outage, three misses, unreliable with a forced catch-up and a re-register, then recovery — in that order")
    func pushOutageStory() throws {
        let run = ScenarioRun(scenario: try load("push-outage.scenario"), policy: .seed)
        run.run()
        #expect(run.logLines.contains { $0.contains("catch-up skipped (app-active)") })
        // Push's story, every decision of it in order: reliable, the outage, three misses,
        // unreliable with a forced catch-up and a re-register at that instant, the misses
        // that follow, then the recovery on the first hit after the outage.
        expectDecisions(run, matching: { pushTopics.contains($0.topic) || $0.isObservationMiss || $0.isCatchUpStarted(.pushUnreliable) || $0.isCatchUpStarted(.pushCheck) || $0.isWorld(startingWith: "push") }, [
            "00:00:00.000 push unknown → disabled: push token is none",
            "00:00:00.000 push token registration: launch: registering for remote push",
            "00:00:00.000 push token new",
            "00:00:01.000 push token registered",
            "00:00:02.000 push token active",
            "00:00:02.000 push disabled → unknown: push operational again (remote-push, permission granted, token active)",
            "00:00:37.605 push unknown → reliable: push for a55fd446 arrived 13ms before its realtime tx",
            "01:00:00.000 world: push drop 100%",
            "01:23:54.483 observation miss 3be025ef (realtime): no push within grace, misses 1/3",
            "01:24:14.723 observation miss 79f6b3f3 (realtime): no push within grace, misses 2/3",
            "01:27:34.800 observation miss e72d4e08 (realtime): no push within grace, misses 3/3",
            "01:27:34.800 push reliable → unreliable: 3 consecutive push-eligible txs without push within 1m (3 seen on realtime)",
            "01:27:34.800 catch-up started (push-unreliable): full sync of 15 objects, forced",
            "01:27:34.800 push token registration: re-register: push unreliable",
            "01:28:49.439 observation miss 7f438ea7 (realtime): no push within grace, 4 consecutive misses",
            "01:29:25.507 observation miss 9fb1412e (realtime): no push within grace, 5 consecutive misses",
            "01:30:58.451 observation miss c012f96f (realtime): no push within grace, 6 consecutive misses",
            "01:32:27.602 observation miss f0900c8c (realtime): no push within grace, 7 consecutive misses",
            "02:00:00.000 world: push drop 0%",
            "02:05:09.522 push unreliable → reliable: push for 67badd60 arrived 2.9s after its realtime tx",
        ])
    }

    @Test("every policy on every shipped scenario: nothing lost, nothing twice; seed and adaptive never overlap",
          arguments: ShippedScenarios.names(), ["naive", "seed", "adaptive"])
    func shippedScenariosHold(name: String, policy: String) throws {
        let run = ScenarioRun(scenario: try load(name), policy: SyncPolicy.named(policy)!)
        run.run()
        let summary = RunSummary(run)
        #expect(summary.messagesSent > 0)
        #expect(summary.messagesLost == 0, "lost \(summary.lostTxIds)")
        #expect(summary.duplicates == 0)
        if policy != "naive" { #expect(summary.overlappingSyncs == 0) }
    }
}

@Suite("Banners from background refresh")
struct RefreshBannerTests {
    @Test("rule 15: a message already bannered by its push is not bannered again when a refresh fetches it")
    func noDoubleBanner() throws {
        let run = try simulate("""
            duration 2h
            at 1m push drop 100%
            at 2m receive alice "a"
            at 2m10s receive bob "b"
            at 2m20s receive carol "c"
            at 5m push drop 0%
            at 6m background
            at 7m receive alice "pushed, then fetched by the refresh"
            """, until: .hours(1))
        #expect(run.driver.reliability.state == .unreliable)  // no hit since: the refresh is the safety net
        let tx = run.incoming(from: "alice")[1]
        #expect(!run.catchUpStarts(kind: .light).isEmpty)
        // Its push reached the extension first: that stays its first channel, with its arrival time.
        let stored = try #require(run.storage.message(txId: tx.txId))
        #expect(stored.via == .push)
        #expect(stored.receivedAt < tx.blockTime + .seconds(10))
        expectDecisions(run, from: t(6), matching: about(.banner), [
            "00:07:02.579 banner [Alice] pushed, then fetched by the refresh (badge 4)",
        ])
        run.checkInvariants()
    }
}

@Suite("World wire encoding")
struct WorldWireTests {
    static let hostile = #"quote \" backslash \\ nl \n esc \e bel \x07 nul \x00 emoji 🎉 cjk 漢字"#

    @Test("hostile text survives the round trip through the push service's JSON and the client's decoder")
    func pushRoundTrip() throws {
        var timings = WorldTimings()
        timings.realtimeDelay = (.seconds(10), .seconds(10))  // the push arrives first
        let run = try simulate("duration 5m\nat 1m receive alice \"\(Self.hostile)\"", timings: timings)
        let sent = run.incoming(from: "alice")[0]
        let stored = try #require(run.storage.message(txId: sent.txId))
        #expect(stored.via == .push)
        #expect(stored.message.body == sent.body)
        #expect(sent.body.unicodeScalars.contains { $0.value == 0 })
        #expect(!run.log.contains { if case .error = $0.event { return true } else { return false } })
    }

    @Test("hostile text survives the round trip through the indexer's JSON and the client's decoder")
    func indexerRoundTrip() throws {
        let run = try simulate("duration 5m\nmode off\nat 1m background\nat 2m receive alice \"\(Self.hostile)\"\nat 3m foreground")
        let sent = run.incoming(from: "alice")[0]
        let stored = try #require(run.storage.message(txId: sent.txId))
        #expect(stored.via == .fetch)
        #expect(stored.message.body == sent.body)
        #expect(!run.log.contains { if case .error = $0.event { return true } else { return false } })
    }
}

@Suite("Fetch by id")
struct FetchByIdWireTests {
    @Test("a reply by id must carry the txId asked for")
    func wrongId() throws {
        let me = Address("kaspa:me")
        let reply = #"{"messages": [{"txId": "other", "sender": "s", "recipient": "kaspa:me", "kind": "payment", "blockTime": 5, "payload": "1 KAS"}]}"#
        #expect {
            try IndexerPage.decode(Data(reply.utf8), for: .messageById("wanted"), me: me)
        } throws: { error in
            (error as? WireError)?.message.contains("asked for wanted, got other") ?? false
        }
        let ok = reply.replacingOccurrences(of: "\"other\"", with: "\"wanted\"")
        #expect(try IndexerPage.decode(Data(ok.utf8), for: .messageById("wanted"), me: me).messages.first?.kind == .payment)
    }

    @Test("rule 15: leaving remote-push unregisters the token, so no push banner comes in background-fetch or off; entering it registers again")
    func leavingRemotePushStopsPushes() throws {
        let run = try simulate("""
            duration 40m
            at 1m receive alice "pushed"
            at 2m background
            at 3m mode background-fetch
            at 4m receive alice "no push for this one"
            at 5m mode off
            at 6m receive bob "nor this"
            at 7m mode remote-push
            at 8m receive carol "pushed again"
            at 39m foreground
            """)
        let pushedBodies = run.world.ledger.filter { run.world.push.delivered($0.txId) }.map(\.body)
        #expect(pushedBodies == ["pushed", "pushed again"])
        // The two unpushed messages are bannered only when a background refresh finds them.
        let firstGrant = try #require(run.world.os.grants.first)
        let banners = run.log.compactMap { e -> (Instant, String)? in if case .banner(let b, _) = e.event { return (e.at, b.body) } else { return nil } }
        #expect(banners.filter { ["no push for this one", "nor this"].contains($0.1) }.allSatisfy { $0.0 >= firstGrant })
        #expect(banners.contains { $0.1 == "pushed again" && $0.0 < t(9) })
        expectDecisions(run, from: t(2), matching: about(.pushToken), [
            "00:03:00.000 push token registration: unregister: mode background-fetch: no more pushes",
            "00:03:00.000 push token none",
            "00:07:00.000 push token registration: mode remote-push: registering for remote push",
            "00:07:00.000 push token new",
            "00:07:01.000 push token registered",
            "00:07:02.000 push token active",
        ])
        #expect(run.world.push.tokenStatus == .active)
        run.checkNothingLost()
        run.checkInvariants()
    }
}
