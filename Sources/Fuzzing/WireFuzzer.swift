import Foundation
import SimulatedWorld
import Simulation
import SyncCore
import SyncEngine

/// Malformed wire input: push payloads and indexer replies, each a real document of a run
/// broken in one way the client must reject. Two levels: the decoders alone (every broken
/// document is a `WireError`, never a crash, never a message), and the whole engine with a
/// share of the world's replies and pushes broken on their way out (an error event, nothing
/// lost, nothing invented).
public enum WireFuzzer {
    /// The ways a document is broken. Each one must be rejected.
    public enum Mutation: String, CaseIterable, Sendable {
        case truncated, empty, randomBytes = "random-bytes", notAnObject = "not-an-object", invalidUTF8 = "invalid-utf8"
        case deepNesting = "deep-nesting", hugeString = "huge-string", wrongType = "wrong-type", missingField = "missing-field"
        case futureTime = "future-time", duplicateTxId = "duplicate-txid", badNextPage = "bad-next-page", ownSender = "own-sender"

        /// Applies to indexer replies, push payloads or both.
        var forReplies: Bool { self != .ownSender }
        var forPushes: Bool { self != .duplicateTxId && self != .badNextPage }
    }

    /// A document as the client receives it.
    public enum Document {
        case reply(IndexerCall, Data)
        case push(Data)

        var data: Data {
            switch self {
            case .reply(_, let d), .push(let d): return d
            }
        }
    }

    /// Breaks `doc` by `mutation`. `now` is the client's clock when it will decode it.
    public static func mutate(_ doc: Document, _ mutation: Mutation, now: Instant, me: Address, r: inout RandomStream) -> Data {
        let data = doc.data
        // A tip reply is not paged: a `nextPage` on it breaks nothing its reader reads, so it is
        // broken another way.
        if mutation == .badNextPage, case .reply(let call, _) = doc, call.kind == "tip" {
            return mutate(doc, [.truncated, .notAnObject, .invalidUTF8][r.int(0...2)], now: now, me: me, r: &r)
        }
        switch mutation {
        case .truncated: return data.prefix(r.int(0...max(0, data.count - 1)))
        case .empty: return Data()
        case .randomBytes: return Data((0..<r.int(1...256)).map { _ in UInt8(truncatingIfNeeded: r.next()) })
        case .notAnObject: return Data(["[1, 2, 3]", "\"messages\"", "42", "null", "true"][r.int(0...4)].utf8)
        case .invalidUTF8:
            // Raw bytes that are not UTF-8, inside the first string of the document.
            var bytes = [UInt8](data)
            let quote = bytes.firstIndex(of: UInt8(ascii: "\"")) ?? 0
            bytes.insert(contentsOf: [[0xFF], [0xC3, 0x28], [0xED, 0xA0, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80]][r.int(0...3)], at: quote + 1)
            return Data(bytes)
        case .deepNesting:
            let depth = r.int(1_000...100_000)
            return Data(("{\"messages\": " + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}").utf8)
        default:
            break
        }
        // Field-level mutations work on the parsed document.
        guard var root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { return Data() }
        var message: [String: Any]
        var messages: [[String: Any]] = []
        switch doc {
        case .reply:
            messages = root["messages"] as? [[String: Any]] ?? []
            guard !messages.isEmpty || mutation == .badNextPage else {
                return mutate(doc, [.truncated, .notAnObject, .invalidUTF8, .badNextPage][r.int(0...3)], now: now, me: me, r: &r)
            }
            if mutation == .badNextPage {
                root["nextPage"] = [-1, 0, "2", 1.5, [2], true][r.int(0...5)]
                return serialize(root)
            }
            message = messages[r.int(0...messages.count - 1)]
        case .push:
            message = root["synchat"] as? [String: Any] ?? [:]
        }
        let fields = ["txId", "sender", "kind", "blockTime", "payload"] + (doc.isReply ? ["recipient"] : [])
        let field = fields[r.int(0...fields.count - 1)]
        switch mutation {
        case .wrongType:
            let wrong: [Any] = field == "blockTime" ? ["12", -1, 1.5, true, 1e300, NSNull(), [1]] : [42, NSNull(), [String](), ["a": 1], true]
            message[field] = wrong[r.int(0...wrong.count - 1)]
            if field == "kind", r.chance(0.5) { message[field] = "smoke" }
        case .missingField:
            message[field] = nil
        case .hugeString:
            message[["txId", "payload", "sender"][r.int(0...2)]] = String(repeating: "A", count: r.int(65_537...1_000_000))
        case .futureTime:
            message["blockTime"] = (now + .minutes(Int64(r.int(10...100_000)))).milliseconds
        case .ownSender:
            message["sender"] = me.value
        case .duplicateTxId:
            var twin = messages[r.int(0...messages.count - 1)]
            twin["txId"] = message["txId"]
            if twin as NSDictionary == message as NSDictionary { twin["payload"] = "other text" }
            messages.append(twin)
            root["messages"] = messages
            return serialize(root)
        default:
            break
        }
        switch doc {
        case .reply:
            if let i = messages.firstIndex(where: { ($0["txId"] as? String) == (message["txId"] as? String) }) { messages[i] = message } else { messages[0] = message }
            root["messages"] = messages
        case .push:
            root["synchat"] = message
        }
        return serialize(root)
    }

    private static func serialize(_ object: [String: Any]) -> Data {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    }

    // MARK: - The decoders alone

    public struct DecoderReport: Sendable {
        public var documents = 0
        public var rejected = 0
        public var byMutation: [String: Int] = [:]
        /// Broken documents the decoder accepted (each a defect), with what was done to them.
        public var accepted: [String] = []
    }

    /// Breaks `count` real documents (captured from a generated run) and decodes each.
    public static func checkDecoders(count: Int, seed: UInt64) -> DecoderReport {
        let (documents, me, at) = capture(seed: seed)
        var r = RandomStream(seed: seed, concern: "wire-decoder-fuzz")
        var report = DecoderReport()
        guard !documents.isEmpty else { return report }
        for _ in 0..<count {
            let doc = documents[r.int(0...documents.count - 1)]
            let candidates = Mutation.allCases.filter { doc.isReply ? $0.forReplies : $0.forPushes }
            let mutation = candidates[r.int(0...candidates.count - 1)]
            let broken = mutate(doc, mutation, now: at, me: me, r: &r)
            report.documents += 1
            report.byMutation[mutation.rawValue, default: 0] += 1
            do {
                switch doc {
                case .reply(let call, _): _ = try IndexerPage.decode(broken, for: call, me: me, now: at)
                case .push: _ = try PushPayload.decode(broken, me: me, now: at)
                }
                report.accepted.append("\(mutation.rawValue): \(String(decoding: broken.prefix(300), as: UTF8.self))")
            } catch is WireError {
                report.rejected += 1
            } catch {
                report.accepted.append("\(mutation.rawValue): threw \(error) instead of a WireError")
            }
        }
        return report
    }

    /// Real replies and pushes of a generated run with traffic.
    static func capture(seed: UInt64) -> ([Document], Address, Instant) {
        var fuzz = FuzzScenario.generate(seed: seed)
        fuzz.trafficPerHour = 120
        fuzz.mode = .remotePush
        fuzz.steps = fuzz.steps.filter { step in
            switch step.directive {
            case .mode: return false
            case .fault(let change): return change.part != .push && change.part != .token
            default: return true
            }
        }
        guard let scenario = try? ScenarioParser.parse(fuzz.text, file: "wire.scenario") else { return ([], Address(""), .zero) }
        let run = ScenarioRun(scenario: scenario, policy: .naive)
        var documents: [Document] = []
        run.world.indexer.rewriteReply = { call, data in documents.append(.reply(call, data)); return nil }
        run.world.push.rewritePayload = { data in documents.append(.push(data)); return nil }
        run.run()
        return (documents, run.world.me, run.scheduler.now)
    }

    // MARK: - The whole engine

    /// Case `seed` of the scenario fuzzer with a fifth of the replies and pushes broken on
    /// their way out, under every policy: the scenario invariants must hold, every stored
    /// message must be the ledger's (nothing invented), and the breakage must show as errors.
    public static func checkEngine(seed: UInt64, share: Double = 0.2) -> ScenarioFuzzer.Outcome {
        let fuzz = FuzzScenario.generate(seed: seed)
        return ScenarioFuzzer.check(fuzz, twice: false, prepare: breakage(seed: seed, share: share)) { run in
            let broken = run.world.indexer.rewrittenReplies + run.world.push.rewrittenPayloads
            let wireErrors = run.log.filter {
                if case .error(let source, _) = $0.event { source != "storage" } else { false }
            }.count
            if broken > 0 && wireErrors == 0 {
                return [Violation(policy: run.policy.name, kind: .wire, detail: "\(broken) broken documents and not one error event")]
            }
            return []
        }
    }

    /// Installs the breakage on a fresh run: each reply and push is broken with probability
    /// `share`, by a mutation drawn from the case's own random stream.
    public static func breakage(seed: UInt64, share: Double) -> (ScenarioRun) -> Void {
        { run in
            var r = RandomStream(seed: seed, concern: "wire-engine-fuzz")
            let me = run.world.me
            run.world.indexer.rewriteReply = { [unowned run] call, data in
                guard r.chance(share) else { return nil }
                let m = Mutation.allCases.filter(\.forReplies)
                return mutate(.reply(call, data), m[r.int(0...m.count - 1)], now: run.scheduler.now, me: me, r: &r)
            }
            run.world.push.rewritePayload = { [unowned run] data in
                guard r.chance(share) else { return nil }
                let m = Mutation.allCases.filter(\.forPushes)
                return mutate(.push(data), m[r.int(0...m.count - 1)], now: run.scheduler.now, me: me, r: &r)
            }
        }
    }
}

extension WireFuzzer.Document {
    var isReply: Bool { if case .reply = self { true } else { false } }
}
