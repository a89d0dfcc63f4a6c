import Foundation
import RunReports
import Simulation
import SyncCore
import SyncEngine
import Testing

/// A message the network cannot take is kept (sending → failed, retried with a
/// growing wait, or at once on "retry now"), survives a relaunch, and is sent exactly once.
@Suite("Outgoing messages: sending, failed, sent")
struct OutboxEngineTests {
    typealias H = SansIOEngineTests.Harness
    static let alice = SansIOEngineTests.alice

    static func outgoing(_ events: [SyncEvent]) -> [OutgoingMessage] {
        events.compactMap { if case .outgoing(let m) = $0 { m } else { nil } }
    }

    static func publishId(_ effects: [Effect]) -> Int? {
        for case .publish(let id, _, _, _) in effects { return id }
        return nil
    }

    static func sent(_ txId: String, at t: Instant) -> Publication {
        Publication(message: NetworkMessage(txId: txId, conversation: alice.address, direction: .outgoing, kind: .contextual, body: "hello",
                                            blockTime: t), spent: [])
    }

    /// The waits between tries, as the log says them.
    static let words = ["5s", "15s", "30s", "1m", "1m"]

    @Test("a refused send is failed with its retry time, tried again after 5 s, 15 s, 30 s, then every minute, and sent once")
    func backoffThenSent() throws {
        let h = H()
        h.launchedAndLive()
        _ = h.events()
        var id = try #require(Self.publishId(h.send(.send(to: Self.alice.address, text: "hello"))))
        #expect(Self.outgoing(h.events()).map(\.state) == [.sending])
        var waits: [Interval] = []
        for _ in 0..<5 {
            let failedAt = h.now
            h.send(.published(id: id, .failure(TransportError("node unreachable"))))
            let events = h.events()
            let m = try #require(Self.outgoing(events).last)
            guard case .failed(let reason, let retryAt) = m.state else { Issue.record("not failed: \(m.state)"); return }
            #expect(reason == "node unreachable")
            expectDecisions(events, ["send to alice failed: node unreachable; retry in \(Self.words[waits.count]) (\(waits.count + 1) failed)"])
            waits.append(retryAt - failedAt)
            // Nothing goes before its time (the keepalive goes on meanwhile, answered).
            #expect(Self.publishId(h.advance(to: retryAt - .milliseconds(1))) == nil)
            #expect(h.engine.nextDeadline == retryAt)
            id = try #require(Self.publishId(h.send(.deadline, at: retryAt)))
        }
        #expect(waits == [.seconds(5), .seconds(15), .seconds(30), .seconds(60), .seconds(60)])
        h.send(.published(id: id, .success(Self.sent("tx-out", at: h.now))))
        let m = try #require(Self.outgoing(h.events()).last)
        #expect(m.state == .sent(txId: "tx-out") && m.failures == 5)
        #expect(h.engine.outbox.isEmpty)
        #expect(h.storage.outbox().isEmpty)
        #expect(h.storage.message(txId: "tx-out")?.via == .sent)
        h.send(.published(id: id, .success(Self.sent("tx-out", at: h.now))))  // a late duplicate reply changes nothing
        #expect(h.storage.messageCount() == 1)
    }

    @Test("retry now (.retrySends) sends the failed messages at once, not those already on their way")
    func retryNow() throws {
        let h = H()
        h.launchedAndLive()
        let first = try #require(Self.publishId(h.send(.send(to: Self.alice.address, text: "one"))))
        h.send(.published(id: first, .failure(TransportError("node unreachable"))))
        _ = try #require(Self.publishId(h.send(.send(to: Self.alice.address, text: "two"))))  // in flight
        let again = h.send(.retrySends)
        #expect(again.count == 1)
        #expect(again.allSatisfy { if case .publish(_, _, "one", _) = $0 { true } else { false } })
    }

    @Test("the outbox is kept in the store: a message the network never took goes out at the next launch")
    func survivesRelaunch() throws {
        let h = H()
        h.launchedAndLive()
        let id = try #require(Self.publishId(h.send(.send(to: Self.alice.address, text: "written offline"))))
        h.send(.published(id: id, .failure(TransportError("node unreachable"))))
        #expect(h.storage.outbox().map(\.body) == ["written offline"])
        // A new app process on the same store.
        let engine = Engine(policy: .seed, me: SansIOEngineTests.me, storage: h.storage, now: h.now + .minutes(5))
        engine.handle(.launched, now: h.now + .minutes(5))
        var effects: [Effect] = []
        while let e = engine.pollEffect() { effects.append(e) }
        #expect(effects.filter { if case .publish = $0 { true } else { false } }.count == 1)
        #expect(effects.contains { if case .publish(_, SansIOEngineTests.alice.address, "written offline", _) = $0 { true } else { false } })
    }

    @Test("in the world: a send while the node is down fails, is retried, and lands once the node is back; nothing lost")
    func worldNodeDown() throws {
        let scenario = try ScenarioParser.parse("""
            seed 3
            duration 10m
            contacts 2
            traffic 0/h
            at 0m foreground
            at 1m realtime down
            at 2m send alice "while the node is down"
            at 3m realtime up
            """, file: "outbox")
        let run = ScenarioRun(scenario: scenario, policy: .adaptive)
        run.run()
        expectDecisions(run.session.log, matching: about(.send, .sent), [
            "00:02:00.000 send to alice failed: node unreachable; retry in 5s (1 failed)",
            "00:02:05.000 send to alice failed: node unreachable; retry in 15s (2 failed)",
            "00:02:20.000 send to alice failed: node unreachable; retry in 30s (3 failed)",
            "00:02:50.000 send to alice failed: node unreachable; retry in 1m (4 failed)",
            "00:03:50.000 sent e190dc31 to alice",
        ])
        #expect(run.storage.allMessages().filter { $0.message.body == "while the node is down" }.count == 1)
        #expect(run.session.driver.engine.outbox.isEmpty)
        #expect(RunSummary(run).messagesLost == 0)
    }
}
