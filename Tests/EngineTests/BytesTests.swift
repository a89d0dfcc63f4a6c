import Foundation
import RunReports
import SimulatedWorld
import Simulation
import SyncCore
import SyncEngine
import Testing

/// Bytes as well as requests. Every document the world sends is counted at the
/// size it has on the wire; the counts are checked against the documents themselves, caught
/// on their way out (the world's own hooks), and against Foundation's JSON for the one
/// document that is modelled rather than written (the node's UTXO set).
@Suite("Bytes on the wire")
struct BytesTests {
    static let day = """
        seed 5
        duration 4h
        contacts 6
        traffic 40/h
        at 0m foreground
        at 20m background
        at 50m foreground
        at 80m background
        at 110m push drop 100%
        at 130m foreground
        at 150m push drop 0%
        at 170m background
        """

    @Test("each kind's bytes are the sizes of the documents the world sent (caught on their way out), and the JSON says the same")
    func countedAsSent() throws {
        for policy in SyncPolicy.all {
            let run = ScenarioRun(scenario: try ScenarioParser.parse(Self.day, file: "bytes"), policy: policy)
            var replies: [String: Int] = [:], pushes = 0
            run.world.indexer.rewriteReply = { call, data in replies[call.kind, default: 0] += data.count; return nil }
            run.world.push.rewritePayload = { data in pushes += data.count; return nil }
            run.run()
            let s = RunSummary(run)
            for (kind, bytes) in replies { #expect(s.bytesByKind[kind] == bytes, "\(policy.name) \(kind)") }
            #expect(s.bytesByKind["push"] == pushes)
            // Realtime: each delivered message's document, from the world's ground truth.
            var realtime = 0
            run.world.history.forEachMessage { m, delivered, _ in
                if delivered { realtime += MessageDocument.encode(m, me: run.world.me).data.count }
            }
            #expect(s.bytesByKind["realtime"] == realtime && realtime > 0)
            let backendKinds = s.bytesByKind.filter { $0.key != "realtime" && $0.key != "push" }
            #expect(s.backendBytes == backendKinds.values.reduce(0, +))
            #expect(s.backendBytes > 0)
            // The JSON carries the same, named as the issue names them.
            let json = try #require(try JSONSerialization.jsonObject(with: Data(s.json.utf8)) as? [String: Any])
            #expect((json["backend_bytes"] as? Int) == s.backendBytes)
            #expect((json["bytes_by_kind"] as? [String: Int]) == s.bytesByKind)
            #expect((json["oracle_bytes"] as? Int) == s.oracleBytes)
        }
    }

    @Test("a UTXO-set reply grows with its entries (its modelled size is its JSON's, by Foundation); a tip reply stays small")
    func modelledSizes() throws {
        for n in [0, 1, 2, 17, 500] {
            let ids = (0..<n).map { String(format: "%015x", $0 * 7919) }
            let doc: [String: Any] = ["entries": ids.map { ["txId": $0, "blockDaaScore": 1_000_000_000_000] }]
            let foundation = try JSONSerialization.data(withJSONObject: doc, options: [.sortedKeys])
            #expect(SimNode.utxoReplyBytes(ids) == foundation.count, "\(n) entries")
        }
        // Two worlds, one ten times the other's history: the UTXO set grows ten times, the tip not.
        func sizes(_ hours: Int) throws -> (utxo: Int, tip: Int) {
            let run = ScenarioRun(scenario: try ScenarioParser.parse("seed 2\nduration \(hours)h\ncontacts 4\ntraffic 60/h\nat 0m foreground\nat 1m background", file: "sizes"))
            run.run()
            var tip = 0, utxo = 0
            run.world.indexer.send(.tip) { if case .success(let d) = $0 { tip = d.count } }
            run.world.node.requestUtxoSet(for: run.world.me, since: nil) { if case .success(let ids) = $0 { utxo = SimNode.utxoReplyBytes(ids) } }
            run.scheduler.run(until: run.scheduler.now + .seconds(5))
            return (utxo, tip)
        }
        let small = try sizes(1), large = try sizes(10)
        #expect(large.utxo > 8 * small.utxo)
        #expect(large.tip < small.tip + 64 && large.tip < 1000)
    }

    @Test("adaptive never pays in bytes what it saves in requests: healthy-day and push-outage cost it fewer bytes than seed")
    func adaptiveBytes() throws {
        for name in ["healthy-day", "push-outage"] {
            let scenario = try ScenarioParser.load(path: ShippedScenarios.directory.appendingPathComponent("\(name).scenario").path)
            let summaries = SyncPolicy.all.map { p -> RunSummary in
                let run = ScenarioRun(scenario: scenario, policy: p, keepsLog: false)
                run.run()
                return RunSummary(run)
            }
            let seed = summaries[1], adaptive = summaries[2]
            #expect(adaptive.backendBytes <= seed.backendBytes, "\(name): \(adaptive.backendBytes) > \(seed.backendBytes)")
            #expect(adaptive.backendRequests <= seed.backendRequests, "\(name)")
        }
    }
}
