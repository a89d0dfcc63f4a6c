import Foundation
import SyncCore
import SyncEngine
import Testing

/// The sans-IO engine fed inputs directly: no world, no scheduler, no ports. Each test plays
/// the network by hand and reads the effects and events that come out.
@Suite("The sans-IO engine, fed inputs directly (no world)")
struct SansIOEngineTests {
    static let me = Address("kaspa:qme")
    static let alice = Contact(address: Address("kaspa:qalice"), handle: "alice", displayName: "Alice")

    /// An engine on an empty in-memory store, with one contact.
    final class Harness {
        let engine: Engine
        let storage: InMemoryChatStorage
        var now: Instant
        var requests: [Int: IndexerCall] = [:]

        /// `storage`: a profile kept from an earlier run (a relaunch), at `now`.
        init(policy: SyncPolicy = .seed, mode: NotificationMode = .remotePush, storage: InMemoryChatStorage = InMemoryChatStorage(), now: Instant = .zero) {
            self.storage = storage
            self.now = now
            try? storage.upsertContact(SansIOEngineTests.alice)
            engine = Engine(policy: policy, me: SansIOEngineTests.me, storage: storage, initialMode: mode, now: now)
        }

        /// Handles an input at `now` and returns the effects it asked for.
        @discardableResult
        func send(_ input: EngineInput, at t: Instant? = nil) -> [Effect] {
            if let t { now = t }
            engine.handle(input, now: now)
            var out: [Effect] = []
            while let e = engine.pollEffect() {
                switch e {
                case .write(let id, let w):
                    // The store is local: written at once, as the runner does.
                    writes.append(w)
                    var failure: String?
                    do { try perform(w) } catch { failure = "\(error)" }
                    engine.handle(.written(id: id, failure: failure), now: now)
                case .retryWorldWrites:
                    engine.handle(.worldWritesRetried(nil), now: now)  // no world here
                case .indexer(let id, let call):
                    requests[id] = call
                    out.append(e)
                default:
                    out.append(e)
                }
            }
            return out
        }

        /// Every write the engine asked of the store, in order.
        var writes: [StoreWrite] = []

        /// While true, every write fails as on a full disk.
        var diskFull = false

        func perform(_ w: StoreWrite) throws {
            if diskFull { throw StorageError("database or disk is full") }
            try storage.apply(w)
        }

        func events() -> [SyncEvent] {
            var out: [SyncEvent] = []
            while let e = engine.pollEvent() { out.append(e.event) }
            return out
        }

        /// Answers every indexer request in flight with an empty page.
        func answerAllEmpty() {
            for id in requests.keys.sorted() {
                send(.indexerReplied(id: id, .success(Data(#"{"messages": [], "nextPage": null}"#.utf8))))
            }
            requests.removeAll()
        }

        /// Hands the engine every deadline up to `t`, as a healthy network would answer:
        /// keepalive pings are answered and indexer calls get empty pages. Returns the effects.
        @discardableResult
        func advance(to t: Instant) -> [Effect] {
            var all: [Effect] = []
            while let next = engine.nextDeadline, next <= t {
                let effects = send(.deadline, at: next)
                all += effects
                for case .ping(_, let ping) in effects { send(.pingAnswered(ping: ping)) }
                answerAllEmpty()
            }
            now = t
            return all
        }

        /// A realtime sighting at `t0 + 1 s` and its push at `t0 + 2 s`: one hit (rules 2–3).
        func hit(_ txId: String, landedAt t0: Instant, connection: Int = 1) {
            send(.realtimeTx(connection: connection, SansIOEngineTests.tx(txId, at: t0)), at: t0 + .seconds(1))
            send(.pushDelivered(SansIOEngineTests.push(txId, blockTime: t0)), at: t0 + .seconds(2))
        }

        /// The app comes to the foreground at `t` and connection `id` goes live a second later.
        func foreground(connection id: Int, at t: Instant) {
            send(.becameActive, at: t)
            send(.connectionOpened(id))
            send(.connected(id), at: t + .seconds(1))
        }

        /// Launch, foreground, token active, subscription live, first catch-up asked for (and,
        /// unless told otherwise, answered with empty pages).
        func launchedAndLive(answering: Bool = true) {
            send(.launched)
            send(.tokenStatus(.active))
            send(.becameActive)
            send(.connectionOpened(1))
            send(.connected(1), at: now + .milliseconds(400))
            let due: Instant = try! #require(engine.nextDeadline)  // unwrapped: a deadline must be set
            send(.deadline, at: due)  // the catch-up waits 3 s for the indexer
            if answering { answerAllEmpty() }
        }
    }

    static func push(_ txId: String, blockTime: Instant) -> Data {
        Data(#"{"aps": {"alert": {"title": "Alice", "body": "hi"}}, "synchat": {"txId": "\#(txId)", "sender": "kaspa:qalice", "kind": "contextual", "blockTime": \#(blockTime.milliseconds), "payload": "hi"}}"#.utf8)
    }

    static func tx(_ txId: String, at t: Instant) -> NetworkMessage {
        NetworkMessage(txId: txId, conversation: alice.address, direction: .incoming, kind: .contextual, body: "hi", blockTime: t)
    }

    @Test("rules 10–11: a cold start connects unforced and registers the token; the catch-up asks the indexer 3 s after the subscription, for every sync object")
    func launchEffects() throws {
        let h = Harness()
        #expect(h.send(.launched) == [.registerToken])
        #expect(h.send(.becameActive) == [.connect(forced: false)])
        h.send(.connectionOpened(1))
        #expect(h.send(.connected(1), at: .zero + .milliseconds(400)).isEmpty)  // waits for the indexer
        #expect(h.engine.nextDeadline == .zero + .milliseconds(3_400))
        #expect(h.send(.deadline, at: .zero + .milliseconds(3_399)).isEmpty)  // spurious: nothing
        let calls = h.send(.deadline, at: .zero + .milliseconds(3_400))
        #expect(calls.count == 5)  // handshakes in/out, alice in/out, payments
        #expect(calls.allSatisfy { if case .indexer = $0 { true } else { false } })
        h.answerAllEmpty()
        expectDecisions(h.events(), [
            "launched: 0 stored messages, push unknown, mode remote-push",
            "push unknown → disabled: push token is none",
            "push token registration: launch: registering for remote push",
            "lifecycle foreground: first launch",
            "realtime connecting: cold start",
            "realtime live: subscribed",
            "catch-up started (subscription-restart): full sync of 5 objects",
            "catch-up joined (app-active): rides on the running full subscription-restart sync",
            "catch-up finished (subscription-restart): full, 0 new, 5 requests, 3s",
        ])
        #expect(h.engine.gate.lastFinishedAt == .zero + .milliseconds(3_400))
    }

    @Test("rules 2–4: a push in time is a hit (reliable); three sightings without push make it unreliable at the third grace, forcing a catch-up and re-registering")
    func reliabilityFromInputs() throws {
        let h = Harness()
        h.launchedAndLive()
        let t0 = h.now + .seconds(10)
        h.send(.realtimeTx(connection: 1, Self.tx("a", at: t0)), at: t0 + .seconds(1))
        h.send(.pushDelivered(Self.push("a", blockTime: t0)), at: t0 + .seconds(3))
        #expect(h.engine.reliability.state == .reliable)
        for (i, id) in ["b", "c", "d"].enumerated() {
            let t = t0 + .seconds(100 + Int64(i))
            h.send(.realtimeTx(connection: 1, Self.tx(id, at: t)), at: t + .seconds(1))
        }
        _ = h.events()
        // The graces end 60 s after each sighting: at 161, 162 and 163 s.
        h.advance(to: t0 + .seconds(162))
        #expect(h.engine.reliability.state == .reliable)
        #expect(h.engine.reliability.consecutiveMisses == 2)
        _ = h.events()
        let third = h.send(.deadline, at: t0 + .seconds(163))
        #expect(h.engine.reliability.state == .unreliable)
        // The keepalive's ping falls due at the same instant.
        #expect(third.filter { if case .indexer = $0 { false } else { true } } == [.registerToken, .ping(connection: 1, ping: 3)])
        #expect(third.filter { if case .indexer = $0 { true } else { false } }.count == 5)  // forced: no debounce
        expectDecisions(h.events(), [
            "observation miss d (realtime): no push within grace, misses 3/3",
            "push reliable → unreliable: 3 consecutive push-eligible txs without push within 1m (3 seen on realtime)",
            "catch-up started (push-unreliable): full sync of 5 objects, forced",
            "push token registration: re-register: push unreliable",
        ])
    }

    @Test("rule 10: a foreground after a background forces the reconnect; isConnected is not trusted")
    func foregroundForcesReconnect() throws {
        let h = Harness()
        h.launchedAndLive()
        h.send(.enteredBackground, at: h.now + .minutes(1))
        _ = h.events()
        let effects = h.send(.becameActive, at: h.now + .minutes(2))
        #expect(effects == [.cancelBackgroundRefresh, .connect(forced: true)])
        expectDecisions(h.events(), [
            "lifecycle foreground: after 2m in background",
            "background refresh: request withdrawn: app in foreground",
            "realtime connecting: forced reconnect, after background: isConnected=true is not trusted",
        ])
    }

    @Test("publish gets a reply: send asks for .publish, and the reply stores the message as sent")
    func publishReply() throws {
        let h = Harness()
        h.launchedAndLive()
        _ = h.events()
        let effects = h.send(.send(to: Self.alice.address, text: "hello"))
        guard case .publish(let id, let to, let body, _)? = effects.first else { Issue.record("no publish: \(effects)"); return }
        #expect(to == Self.alice.address && body == "hello")
        #expect(h.storage.messageCount() == 0)  // nothing stored before the network took it
        let sent = NetworkMessage(txId: "out1", conversation: Self.alice.address, direction: .outgoing, kind: .contextual, body: "hello",
                                  blockTime: h.now + .seconds(1))
        h.send(.published(id: id, .success(Publication(message: sent, spent: []))))
        #expect(h.storage.message(txId: "out1")?.via == .sent)
        // The store is written through an effect: the message, with no cursor (not a fetch).
        #expect(h.writes.contains(.messages([StoredMessage(message: sent, receivedAt: h.now, via: .sent)], cursor: nil)))
        let stored = StoredMessage(message: sent, receivedAt: h.now, via: .sent)
        #expect(h.events().filter(\.isDecision) == [.messageSent(txId: "out1", to: "alice"), .messageStored(stored, contact: Self.alice)])
        h.send(.published(id: id, .success(Publication(message: sent, spent: []))))  // a duplicate reply changes nothing
        #expect(h.events().filter(\.isDecision).isEmpty)
    }

    @Test("rule 13: with realtime down in mode off, the engine polls 60 s after each completed sync, never overlapping")
    func pollingFromInputs() throws {
        let h = Harness(mode: .off)
        h.send(.launched)
        h.send(.becameActive)
        h.send(.connectionOpened(1))
        h.send(.connectFailed(1, error: "node unreachable"), at: .zero + .milliseconds(300))
        h.send(.deadline, at: .zero + .seconds(3))  // rule 11's fallback runs the catch-up
        #expect(!h.requests.isEmpty)
        h.answerAllEmpty()
        let completed = h.now
        var polled = false
        while let next = h.engine.nextDeadline, next <= completed + .seconds(60) {
            let effects = h.send(.deadline, at: next)
            if effects.contains(where: { if case .indexer = $0 { true } else { false } }) {
                polled = true
                #expect(next == completed + .seconds(60))
                break
            }
            h.answerAllEmpty()
            if case .connect = effects.first { h.send(.connectionOpened(2)); h.send(.connectFailed(2, error: "down")) }
        }
        #expect(polled)
        let events = h.events()
        expectDecisions(events, matching: about(.catchUp, .polling), [
            "catch-up started (app-active): full sync of 5 objects",
            "polling: started (realtime unavailable, mode off; next poll 1m after the running sync completes), first poll in 1m",
            "catch-up finished (app-active): full, 0 new, 5 requests, 0ms",
            "polling: next poll in 1m (1m after the last sync completed)",
            "catch-up started (poll): full sync of 5 objects",
        ])
        // The status bar's word for it comes from the engine: polling, not the socket's offline.
        let words = events.compactMap { if case .status(let s) = $0 { s.realtime } else { nil } }
        #expect(words.contains(.polling))
        #expect(h.engine.status.realtime == .polling)
    }

    @Test("the store is written through effects: a failed write keeps the message in memory and shown, moves no cursor, says so once, and a retry 5 s later writes it")
    func writesFailAndRetry() throws {
        let h = Harness()
        h.launchedAndLive()
        _ = h.events()
        h.diskFull = true
        let t0 = h.now + .seconds(10)
        h.send(.realtimeTx(connection: 1, Self.tx("kept", at: t0)), at: t0 + .seconds(1))
        expectDecisions(h.events(), [
            "message kept from alice (contextual) via realtime",
            "store: cannot write (disk full); the chat goes on in memory (1 unsaved), retrying every 5s",
        ])  // shown at once, the trouble said once
        #expect(!h.storage.hasMessage(txId: "kept"))
        #expect(h.engine.message(txId: "kept") != nil)
        #expect(h.engine.status.storeTrouble == "disk full" && h.engine.status.unsaved == 1)
        h.diskFull = false
        let retry = try #require(h.engine.nextDeadline)
        #expect(retry <= t0 + .seconds(6))
        h.advance(to: t0 + .seconds(7))
        #expect(h.storage.message(txId: "kept")?.via == .realtime)
        #expect(h.engine.status.storeTrouble == nil)
        expectDecisions(h.events(), [
            "store: writing again; the 1 change kept in memory meanwhile is saved",
        ])
    }

    @Test("unread counts are the engine's, one event per change of an input: what is kept in memory counts, a read kept in memory is a read; after the retry the store agrees")
    func unreadThroughTrouble() throws {
        let h = Harness()
        h.launchedAndLive()
        _ = h.events()
        func unread(_ events: [SyncEvent]) -> [Int] {
            events.compactMap { if case .unread(let a, let n) = $0, a == Self.alice.address { n } else { nil } }
        }
        let t0 = h.now + .seconds(10)
        h.send(.realtimeTx(connection: 1, Self.tx("stored", at: t0)), at: t0 + .seconds(1))
        #expect(unread(h.events()) == [1])
        h.diskFull = true
        h.send(.realtimeTx(connection: 1, Self.tx("kept", at: t0 + .seconds(5))), at: t0 + .seconds(6))
        #expect(unread(h.events()) == [2])  // 1 stored, 1 kept: the list says 2 as the badge does
        #expect(h.storage.unreadCounts()[Self.alice.address] == 1, "the store has the one it could write")
        h.send(.markRead(Self.alice.address), at: t0 + .seconds(7))
        #expect(unread(h.events()) == [0])  // read, though the store has not heard of it yet
        h.diskFull = false
        h.advance(to: t0 + .seconds(20))
        #expect(unread(h.events()).isEmpty, "nothing changed: no event")
        #expect(h.engine.unreadCounts.isEmpty && h.storage.unreadCounts().isEmpty)
        #expect(h.storage.hasMessage(txId: "kept"))
    }

    @Test("rule 6: while reliable, a foreground soon after the last catch-up is skipped with the time left; rule 14: no refresh is asked for while reliable push covers the background, one as soon as the mode needs it")
    func debounceAndRefresh() throws {
        let h = Harness()
        h.launchedAndLive()
        let t0 = h.now + .seconds(5)
        h.hit("a", landedAt: t0)
        #expect(h.engine.reliability.state == .reliable)
        #expect(h.send(.enteredBackground, at: t0 + .seconds(60)) == [])
        #expect(h.send(.setMode(.backgroundFetch), at: t0 + .seconds(90)) == [.requestBackgroundRefresh(earliest: t0 + .seconds(90) + .minutes(15)),
                                                                               .unregisterToken])
        h.send(.setMode(.remotePush), at: t0 + .seconds(95))
        h.send(.tokenStatus(.active), at: t0 + .seconds(96))
        // The mode changes made push disabled, then unknown: not reliable, so no skip now (rule 7) …
        #expect(h.engine.reliability.state == .unknown)
        // … so it is made reliable again first, and then the app comes back within the debounce.
        let t1 = t0 + .seconds(100)
        h.foreground(connection: 2, at: t1)
        h.advance(to: t1 + .seconds(5))
        h.hit("b", landedAt: t1 + .seconds(10), connection: 2)
        #expect(h.engine.reliability.state == .reliable)
        h.send(.enteredBackground, at: t1 + .seconds(30))
        _ = h.events()
        h.foreground(connection: 3, at: t1 + .seconds(60))
        // One foreground, both its triggers skipped with the time left.
        expectDecisions(h.events(), [
            "lifecycle foreground: after 30s in background",
            "realtime connecting: forced reconnect, after background: isConnected=true is not trusted",
            "realtime live: subscribed",
            "catch-up skipped (subscription-restart): push reliable, last catch-up 57s ago, next allowed in 9m03s",
            "catch-up skipped (app-active): push reliable, last catch-up 57s ago, next allowed in 9m03s",
        ])
    }

    /// Reliable, then three realtime sightings whose pushes never come, the app going to the
    /// background before their graces end; it comes back 5 min later, and the misses are judged
    /// as it resumes. Returns the catch-up lines from that foreground on.
    func resumedUnreliable(_ policy: SyncPolicy, reconnects: Bool) -> [String] {
        let h = Harness(policy: policy)
        h.launchedAndLive()
        let t0 = h.now + .seconds(10)
        h.hit("a", landedAt: t0)
        for (i, id) in ["b", "c", "d"].enumerated() {
            h.send(.realtimeTx(connection: 1, Self.tx(id, at: t0 + .seconds(20 + Int64(i)))), at: t0 + .seconds(21 + Int64(i)))
        }
        h.send(.enteredBackground, at: t0 + .seconds(30))
        _ = h.events()
        h.send(.becameActive, at: t0 + .minutes(5))
        #expect(h.engine.reliability.state == .unreliable)
        h.send(.connectionOpened(2))
        if reconnects {
            h.send(.connected(2), at: h.now + .milliseconds(300))
        } else {
            h.send(.connectFailed(2, error: "refused"), at: h.now + .milliseconds(300))
        }
        h.advance(to: t0 + .minutes(6))
        return h.events().map(\.line).filter { $0.hasPrefix("catch-up") }
    }

    @Test("(g): rule 4's catch-up called for as the app resumes is owed to the foreground's recovery: one full sync, forced, at the reconnect (or rule 11's fallback 3 s later), not one before realtime is live and another at it; seed runs it at once")
    func forcedCatchUpOwedToRecovery() {
        let deferred = "catch-up deferred (push-unreliable): forced, owed to the foreground's reconnect: one full sync once realtime is live, or at the fallback within 3s"
        #expect(resumedUnreliable(.adaptive, reconnects: true) == [
            deferred,
            "catch-up started (subscription-restart): full sync of 5 objects, forced",
            "catch-up joined (app-active): rides on the running full subscription-restart sync",
            "catch-up finished (subscription-restart): full, 0 new, 5 requests, 3s",
        ])
        #expect(resumedUnreliable(.adaptive, reconnects: false) == [
            deferred,
            "catch-up started (app-active): full sync of 5 objects, forced",
            "catch-up finished (app-active): full, 0 new, 5 requests, 0ms",
        ])
        let seed = resumedUnreliable(.seed, reconnects: true)
        #expect(seed.first == "catch-up started (push-unreliable): full sync of 5 objects, forced")
        #expect(!seed.contains { $0.hasPrefix("catch-up deferred") })
    }

    /// Live since launch; a manual full sync at 1 min proves everything to 57 s; optionally a
    /// reconnect after it; then three realtime sightings without push. The catch-up line rule 4's
    /// entering `unreliable` gives.
    func forcedLine(_ policy: SyncPolicy, reconnectAfterProof: Bool) -> String? {
        let h = Harness(policy: policy)
        h.launchedAndLive()
        h.hit("a", landedAt: h.now + .seconds(10))
        h.send(.syncNow, at: .zero + .minutes(1))
        h.answerAllEmpty()
        var connection = 1
        if reconnectAfterProof {
            h.send(.disconnected(1, error: "reset"), at: .zero + .minutes(2))
            h.advance(to: .zero + .minutes(2) + .seconds(1))
            let due = h.engine.nextDeadline
            h.send(.deadline, at: due ?? h.now)  // the reconnect attempt
            h.send(.connectionOpened(2))
            h.send(.connected(2), at: h.now + .milliseconds(200))
            h.advance(to: .zero + .minutes(3))
            connection = 2
        }
        _ = h.events()
        let t0 = Instant.zero + .minutes(4)
        for (i, id) in ["b", "c", "d"].enumerated() {
            h.send(.realtimeTx(connection: connection, Self.tx(id, at: t0 + .seconds(Int64(i)))), at: t0 + .seconds(1 + Int64(i)))
        }
        h.advance(to: t0 + .seconds(70))
        return h.events().map(\.line).first { $0.hasPrefix("catch-up started (push-unreliable)") }
    }

    @Test("(g): rule 4's forced catch-up while realtime has been live in the foreground since the app's last proof is a targeted one, proven from the UTXO set (what push failed to bring, realtime brought); after a reconnect since the proof, or under seed, a full sync")
    func forcedCatchUpProvenWhileRealtimeCovers() {
        #expect(forcedLine(.adaptive, reconnectAfterProof: false) == "catch-up started (push-unreliable): targeted sync of 1 object, forced")
        #expect(forcedLine(.adaptive, reconnectAfterProof: true) == "catch-up started (push-unreliable): full sync of 5 objects, forced")
        #expect(forcedLine(.seed, reconnectAfterProof: false) == "catch-up started (push-unreliable): full sync of 5 objects, forced")
    }

    @Test("rule 12: pushes the extension stored in the background are stored on foreground as push deliveries; rule 15: the extension raised one banner each, with the badge")
    func pendingPushesAndBanners() throws {
        let h = Harness()
        h.launchedAndLive()
        let t0 = h.now + .seconds(5)
        h.send(.enteredBackground, at: t0)
        _ = h.events()
        h.send(.extensionReceived(Self.push("p1", blockTime: t0 + .seconds(10))), at: t0 + .seconds(12))
        h.send(.extensionReceived(Self.push("p2", blockTime: t0 + .seconds(20))), at: t0 + .seconds(22))
        expectDecisions(h.events(), [
            "banner [Alice] hi (badge 1)",
            "banner [Alice] hi (badge 2)",
        ])
        #expect(h.storage.pendingPushes().count == 2)
        #expect(!h.storage.hasMessage(txId: "p1"))
        h.send(.becameActive, at: t0 + .minutes(5))
        expectDecisions(h.events(), [
            "lifecycle foreground: after 5m in background",
            "background refresh: request withdrawn: app in foreground",
            "message p1 from alice (contextual) via push",
            "message p2 from alice (contextual) via push",
            "realtime connecting: forced reconnect, after background: isConnected=true is not trusted",
        ])
        #expect(h.storage.message(txId: "p1")?.via == .push)
        #expect(h.storage.message(txId: "p1")?.receivedAt == t0 + .seconds(12))  // when it really arrived
        #expect(h.storage.pendingPushes().isEmpty)
    }

    @Test("rule 9: a reply's messages and its object's cursor are one write; a reply that fails to decode writes nothing and moves no cursor")
    func cursorMovesWithItsMessages() throws {
        let h = Harness()
        h.launchedAndLive(answering: false)
        let object = SyncObject.contextual(Self.alice.address, .incoming)
        func aliceIn() throws -> Int {
            try #require(h.requests.first { if case .contextual(_, .incoming, _, _) = $0.value { true } else { false } }).key
        }
        h.writes.removeAll()
        let broken = try aliceIn()
        h.requests[broken] = nil
        h.send(.indexerReplied(id: broken, .success(Data("{\"messages\": [".utf8))), at: .zero + .seconds(4))
        #expect(!h.writes.contains { if case .messages = $0 { true } else { false } })
        #expect(h.storage.cursor(object).lastFetchedBlockTime == nil)
        h.answerAllEmpty()
        // The catch-up is owed: its retry 30 s later asks again, and this time the reply is good.
        h.send(.deadline, at: .zero + .seconds(34))
        let body = #"{"messages": [{"txId": "m1", "sender": "kaspa:qalice", "recipient": "kaspa:qme", "kind": "contextual", "blockTime": 1000, "payload": "hi"}], "nextPage": null}"#
        h.writes.removeAll()
        h.send(.indexerReplied(id: try aliceIn(), .success(Data(body.utf8))))
        #expect(h.writes.count == 1)
        let write = try #require(h.writes.first)
        guard case .messages(let messages, let cursor?) = write else { Issue.record("not one write with a cursor: \(write)"); return }
        #expect(messages.map(\.txId) == ["m1"] && cursor.object == object)
        #expect(h.storage.hasMessage(txId: "m1"))
        #expect(h.storage.cursor(object) == cursor.cursor)
    }
}
