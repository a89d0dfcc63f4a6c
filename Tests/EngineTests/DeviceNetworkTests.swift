import Foundation
import SimulatedWorld
import Simulation
import SyncCore
import SyncEngine
import Testing

/// The device offline (`network off` / `network on`), and what real push
/// services keep for a device they cannot reach (`push model ideal|apns|fcm`; the documented
/// behaviour is cited in docs/reliability.md). Judged on the world's ground truth.
@Suite("The device offline, and the push models")
struct DeviceNetworkTests {
    /// In the background from 5m; the device offline from 10m to 40m; `traffic` a minute.
    static func world(model: String, traffic: Int) -> String {
        """
        seed 21
        duration 2h
        contacts 5
        traffic \(traffic)/h
        push model \(model)
        at 0m foreground
        at 5m background
        at 10m network off
        at 40m network on
        at 60m foreground
        """
    }

    /// Incoming messages that landed while the device was offline, and of those the ones a
    /// push reached the device with.
    func offline(_ run: ScenarioRun) -> (landed: [String], pushed: [String]) {
        var landed: [String] = [], pushed: [String] = []
        run.world.history.forEachMessage { m, _, wasPushed in
            guard m.direction == .incoming, m.blockTime > .zero + .minutes(10), m.blockTime < .zero + .minutes(39) else { return }
            landed.append(m.txId)
            if wasPushed { pushed.append(m.txId) }
        }
        return (landed, pushed)
    }

    @Test("network off: realtime, the indexer and publishing fail at once with 'no network'; back on, nothing is lost")
    func offlineDevice() throws {
        let text = """
            seed 3
            duration 1h
            contacts 3
            traffic 30/h
            at 0m foreground
            at 10m network off
            at 11m send alice "from a tunnel"
            at 12m sync
            at 20m network on
            """
        let (run, s) = try measure(text, .adaptive)
        // At each step, everything decided but message arrivals (random traffic), exactly:
        // the network goes off, a send fails, a sync's every request fails; back on, the
        // reconnect, its catch-up and the send.
        let decided: (SyncEvent) -> Bool = { $0.topic != .message && $0.topic != .observation }
        expectDecisions(run, from: t(10), through: t(10, 1), matching: decided, [
            "00:10:00.000 world: network off",
            "00:10:00.000 realtime offline: disconnected: network unreachable; retry in 2s",
        ])
        expectDecisions(run, from: t(11), through: t(11, 1), matching: decided, [
            "00:11:00.000 world: send alice \"from a tunnel\"",
            "00:11:00.000 send to alice failed: no network; retry in 5s (1 failed)",
        ])
        // (g): the first look at push comes 2 min after realtime stopped.
        expectDecisions(run, from: t(12), through: t(12, 1), matching: decided, [
            "00:12:00.000 push check: started: realtime not live since 00:10:00.000, push reliable: nothing else would notice a silent push; looking at the indexer's tips when push may have failed: now, then less often while push keeps up",
            "00:12:00.000 push check: realtime cannot verify push; asking the indexer's tips for the 9 objects",
            "00:12:00.000 world: sync",
            "00:12:00.000 catch-up started (manual): full sync of 9 objects, forced",
            "00:12:00.050 error (indexer): tip: no network; push check again in 1m",
            "00:12:00.050 error (indexer): handshakes_in: no network; cursor of handshakes/in unchanged",
            "00:12:00.050 error (indexer): handshakes_out: no network; cursor of handshakes/out unchanged",
            "00:12:00.050 error (indexer): contextual_in: no network; cursor of contextual/kaspa:q004d4419134a0a54/in unchanged",
            "00:12:00.050 error (indexer): contextual_out: no network; cursor of contextual/kaspa:q004d4419134a0a54/out unchanged",
            "00:12:00.050 error (indexer): contextual_in: no network; cursor of contextual/kaspa:q508b2abb65a03907/in unchanged",
            "00:12:00.050 error (indexer): contextual_out: no network; cursor of contextual/kaspa:q508b2abb65a03907/out unchanged",
            "00:12:00.050 error (indexer): contextual_in: no network; cursor of contextual/kaspa:qafbc913b09910c72/in unchanged",
            "00:12:00.050 error (indexer): contextual_out: no network; cursor of contextual/kaspa:qafbc913b09910c72/out unchanged",
            "00:12:00.050 error (indexer): payments: no network; cursor of payments unchanged",
            "00:12:00.050 catch-up finished (manual): full, 0 new, 9 requests, 50ms, 9 failed",
        ])
        // (g): the looks no network answers are tried 1, 2 and 4 min apart (13:00, 15:00, 19:00).
        expectDecisions(run, from: t(12, 1), through: t(20), matching: { if case .error("indexer", let m) = $0 { m.hasPrefix("tip") } else { false } }, [
            "00:13:00.100 error (indexer): tip: no network; push check again in 2m",
            "00:15:00.150 error (indexer): tip: no network; push check again in 4m",
            "00:19:00.200 error (indexer): tip: no network; push check again in 4m",
        ])
        expectDecisions(run, from: t(20), through: t(21), matching: decided, [
            "00:20:00.000 world: network on",
            "00:20:08.319 realtime connecting: reconnect attempt 23",
            "00:20:08.848 realtime live: subscribed",
            "00:20:08.848 catch-up started (rpc-restored): full sync of 9 objects, forced",
            "00:20:08.848 push check: stopped: realtime is live again",
            "00:20:12.148 catch-up finished (rpc-restored): full, 0 new, 9 requests, 3.3s",
            "00:20:50.000 sent bb77f24a to alice",
        ])
        #expect(run.session.faults.isEmpty)
        #expect(s.messagesLost == 0 && s.duplicates == 0)
        // The message written in the tunnel went out once the network was back.
        #expect(run.world.ledger.contains { $0.direction == .outgoing && $0.body == "from a tunnel" && $0.blockTime > .zero + .minutes(20) })
        #expect(s.beliefLag.records[.network]?.lags.first.map { $0 <= .seconds(1) } ?? false)
    }

    @Test("ideal: every push held while offline reaches the device when it is back")
    func idealKeepsAll() throws {
        let (run, s) = try measure(Self.world(model: "ideal", traffic: 60), .adaptive)
        let (landed, pushed) = offline(run)
        #expect(landed.count > 15)
        #expect(pushed.count == landed.count)
        #expect(run.world.push.droppedWhileUnreachable == 0)
        #expect(s.messagesLost == 0)
    }

    @Test("apns: only the latest notification is kept while the device is unreachable; the app fetches the rest")
    func apnsKeepsLatest() throws {
        let (run, s) = try measure(Self.world(model: "apns", traffic: 60), .adaptive)
        let (landed, pushed) = offline(run)
        #expect(landed.count > 15)
        #expect(pushed.count == 1)
        #expect(pushed.first == landed.last)  // the latest one
        #expect(run.world.push.droppedWhileUnreachable == landed.count - 1)
        #expect(s.messagesLost == 0 && s.duplicates == 0)
    }

    @Test("fcm: up to 100 kept; past that all dropped and 'messages deleted' on return, which the engine answers with a forced full catch-up")
    func fcmDeletes() throws {
        let (few, fewSummary) = try measure(Self.world(model: "fcm", traffic: 60), .adaptive)
        let (fewLanded, fewPushed) = offline(few)
        #expect(fewPushed.count == fewLanded.count)  // under 100: all kept
        #expect(!few.log.contains { $0.event == .pushMessagesDeleted })
        #expect(fewSummary.messagesLost == 0)

        for policy in [SyncPolicy.seed, .adaptive] {
            let (run, s) = try measure(Self.world(model: "fcm", traffic: 400), policy)
            let (landed, pushed) = offline(run)
            #expect(landed.count > 100)
            #expect(pushed.count < landed.count - 100 + 1)  // the first 101 dropped together
            let signal = try #require(run.log.first { $0.event == .pushMessagesDeleted })
            #expect(signal.at > .zero + .minutes(40) && signal.at < .zero + .minutes(41))
            let next = try #require(run.log.first { $0.at >= signal.at && { if case .catchUpStarted = $0.event { true } else { false } }($0) })
            #expect(next.event == .catchUpStarted(trigger: .messagesDeleted, kind: .full, forced: true, objects: 13))
            #expect(next.at == signal.at)
            #expect(s.messagesLost == 0 && s.duplicates == 0)
        }
    }

    @Test("the push model and the network verbs parse; bad ones name the line")
    func parsing() throws {
        let s = try ScenarioParser.parse("push model apns\nat 1m network off\nat 2m network on", file: "p")
        #expect(s.pushModel == .apns)
        #expect(s.steps.map(\.directive) == [.fault(.networkOff), .fault(.networkOn)])
        for (text, message) in [("push model gcm", "p:1: unknown push model \"gcm\" (expected ideal, apns or fcm)"),
                                ("push modle apns", "p:1: expected: push model ideal|apns|fcm"),
                                ("at 1m network down", "p:1: unknown network fault \"down\" (expected: network off|on)"),
                                ("at 1m network", "p:1: expected: network off|on")] {
            #expect(throws: ScenarioError.self) { try ScenarioParser.parse(text, file: "p") }
            do { _ = try ScenarioParser.parse(text, file: "p") } catch { #expect("\(error)" == message) }
        }
    }
}
