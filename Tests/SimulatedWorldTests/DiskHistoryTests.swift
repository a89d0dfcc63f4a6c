import Foundation
import SimulatedWorld
import RunReports
import Simulation
import SyncCore
import SyncEngine
import Testing
import TestSupport
import SimulatedWorldOnDisk

/// `simulate --store disk`: the world's history and the client's rows in
/// temporary SQLite files. The oracle is the in-memory implementation, a different piece of
/// code with its own data structures: both must give the very same runs.
@Suite("A run's history on disk")
struct DiskHistoryTests {
    func onDisk(_ scenario: Scenario, policy: SyncPolicy) throws -> ScenarioRun {
        ScenarioRun(scenario: scenario, policy: policy, storage: InMemoryChatStorage(rows: try SQLiteMessageRows()),
                    history: try SQLiteWorldHistory())
    }

    @Test("every shipped scenario under every policy gives on disk the event log, the measures and the ground truth it gives in memory")
    func shippedScenariosTheSame() throws {
        for name in ShippedScenarios.names() {
            let scenario = try ScenarioParser.load(path: ShippedScenarios.directory.appendingPathComponent(name).path)
            for policy in SyncPolicy.all {
                let memory = ScenarioRun(scenario: scenario, policy: policy)
                let disk = try onDisk(scenario, policy: policy)
                memory.run()
                disk.run()
                #expect(!memory.logLines.isEmpty)
                #expect(memory.logLines == disk.logLines, "\(name) \(policy.name)")
                #expect(RunSummary(memory) == RunSummary(disk), "\(name) \(policy.name)")
                // The ground truth the tests and the fuzzers read, through the other structures.
                #expect(memory.world.ledger == disk.world.ledger)
                #expect(memory.world.utxos == disk.world.utxos)
                #expect(memory.world.indexer.calls.map { "\($0.at) \($0.call)" } == disk.world.indexer.calls.map { "\($0.at) \($0.call)" })
                #expect(memory.world.indexer.indexedCount == disk.world.indexer.indexedCount)
                #expect(Set(memory.world.push.owedPushes) == Set(disk.world.push.owedPushes))
                #expect(memory.world.node.deliveredCount == disk.world.node.deliveredCount)
                #expect(memory.storage.allMessages() == disk.storage.allMessages())
            }
        }
    }

    @Test("the indexer's lists on disk: block-time order then the order indexed, pages with more, the last indexed by txId, from a seeded stream of messages")
    func indexerLists() throws {
        let memory = InMemoryWorldHistory(), disk = try SQLiteWorldHistory()
        var random = RandomStream(seed: 16, concern: "disk-history")
        let people = [Address("kaspa:qa"), Address("kaspa:qb"), Address("kaspa:qc")]
        var ids: [String] = []
        var fed: [NetworkMessage] = []
        var outputs: [(txId: String, landedAt: Int64)] = [], spentOutputs = 0
        for i in 0..<3000 {
            // Block times that tie and go back (indexing lag), a txId indexed again now and then.
            let again = i > 0 && random.chance(0.05)
            let txId = again ? ids[random.int(0...(ids.count - 1))] : "tx\(i)"
            ids.append(txId)
            let m = NetworkMessage(txId: txId, conversation: people[random.int(0...2)], direction: random.chance(0.5) ? .incoming : .outgoing,
                                   kind: [MessageKind.contextual, .handshake, .payment][random.int(0...2)],
                                   body: random.chance(0.1) ? "" : "body \(i) é 🙂\u{0}x", blockTime: Instant(milliseconds: Int64(random.int(0...500)) * 10))
            let output = random.chance(0.3)
            fed.append(m)
            for h in [memory, disk] as [WorldHistory] {
                h.record(m)
                h.index(m, at: m.blockTime)
                if output { h.receiveOutput(m.txId, landedAt: Instant(milliseconds: Int64(i) * 10)) }  // outputs land in order
            }
            if output { outputs.append((m.txId, Int64(i) * 10)) }
            if random.chance(0.1) {
                let spent = memory.spendOldestOutput()
                #expect(spent == disk.spendOldestOutput())
                if spent != nil { spentOutputs += 1 }
            }
        }
        let objects: [SyncObject] = [.payments, .handshakes(.incoming), .handshakes(.outgoing)]
            + people.flatMap { [SyncObject.contextual($0, .incoming), .contextual($0, .outgoing)] }
        for object in objects {
            for since in stride(from: 0, through: 5100, by: 850) {
                for (offset, limit) in [(0, nil), (0, 25), (25, 25), (50, 7), (10_000, 25)] as [(Int, Int?)] {
                    let a = memory.indexed(object, since: Instant(milliseconds: Int64(since)), offset: offset, limit: limit)
                    let b = disk.indexed(object, since: Instant(milliseconds: Int64(since)), offset: offset, limit: limit)
                    #expect(a.messages == b.messages && a.more == b.more, "\(object) since \(since) \(offset) \(String(describing: limit))")
                }
            }
        }
        // The tips' counts: incoming messages in (after, through], each txId once, the same on
        // both and as the stream fed them.
        for object in objects {
            for (after, through) in [(0, 5000), (850, 1700), (1700, 1700), (2500, 2510), (4990, 99_999), (6000, 7000)] {
                let (a, t) = (Instant(milliseconds: Int64(after)), Instant(milliseconds: Int64(through)))
                let expected = Set(fed.filter { SyncObject(holding: $0) == object && $0.direction == .incoming && $0.blockTime > a && $0.blockTime <= t }.map(\.txId)).count
                #expect(memory.indexedIncoming(object, after: a, through: t) == expected, "\(object) (\(after), \(through)]")
                #expect(disk.indexedIncoming(object, after: a, through: t) == expected, "\(object) (\(after), \(through)] on disk")
            }
        }
        #expect(memory.indexedIncoming(.payments, after: .zero, through: Instant(milliseconds: 5000)) > 100)
        #expect(memory.indexed(.payments, since: .zero, offset: 0, limit: nil).messages.count > 100)
        for id in Set(ids) { #expect(memory.indexedMessage(txId: id) == disk.indexedMessage(txId: id)) }
        #expect(disk.indexedMessage(txId: "none") == nil)
        #expect(memory.indexedCount == disk.indexedCount)
        #expect(memory.unspentOutputs(since: nil) == disk.unspentOutputs(since: nil))
        // The proof's outputs since an instant (a UTXO reply grows with what is new):
        // the same on both, a suffix of all of them, every one landed then or later.
        for since in stride(from: 0, through: 31_000, by: 1_700) {
            let a = memory.unspentOutputs(since: Instant(milliseconds: Int64(since)))
            #expect(a == disk.unspentOutputs(since: Instant(milliseconds: Int64(since))), "since \(since)")
            #expect(a == outputs[spentOutputs...].filter { $0.landedAt >= Int64(since) }.map(\.txId), "since \(since)")
        }
        #expect(memory.ledger == disk.ledger)
    }

    @Test("the simulated world on disk and the client's rows on disk give every body back byte for byte: NUL, C0 and C1 controls, lone combining marks, 16 KiB")
    func bodiesByteForByte() throws {
        let history = try SQLiteWorldHistory(), rows = try SQLiteMessageRows()
        let bodies = StoredBodies.all
        let messages = bodies.enumerated().map { i, body in
            NetworkMessage(txId: "tx\(i)", conversation: Address("kaspa:qa"), direction: .incoming, kind: .contextual, body: body,
                           blockTime: Instant(milliseconds: Int64(i) * 10))
        }
        for m in messages {
            history.record(m)
            history.index(m, at: m.blockTime)
            #expect(rows.insert(StoredMessage(message: m, receivedAt: m.blockTime, via: .fetch)))
        }
        var recorded: [String] = []
        history.forEachMessage { m, _, _ in recorded.append(m.body) }
        #expect(StoredBodies.bytes(recorded) == StoredBodies.bytes(bodies))
        let indexed = history.indexed(.contextual(Address("kaspa:qa"), .incoming), since: .zero, offset: 0, limit: nil).messages.map(\.body)
        #expect(StoredBodies.bytes(indexed) == StoredBodies.bytes(bodies))
        #expect(StoredBodies.bytes(messages.map { history.indexedMessage(txId: $0.txId)?.body ?? "?" }) == StoredBodies.bytes(bodies))
        #expect(StoredBodies.bytes(rows.messages(in: Address("kaspa:qa")).map(\.message.body)) == StoredBodies.bytes(bodies))
    }

    @Test("the client's rows on disk: txIds once, pages that never split an instant, newest first, search")
    func messageRows() throws {
        let memory = InMemoryMessageRows(), disk = try SQLiteMessageRows()
        var random = RandomStream(seed: 17, concern: "disk-rows")
        let people = [Address("kaspa:qa"), Address("kaspa:qb")]
        var inserted: Set<String> = []
        for i in 0..<2000 {
            let txId = "tx\(random.int(0...1500))"  // some twice: the second is refused
            inserted.insert(txId)
            let m = StoredMessage(message: NetworkMessage(txId: txId, conversation: people[random.int(0...1)], direction: .incoming, kind: .contextual,
                                                          body: "m\(i)", blockTime: Instant(milliseconds: Int64(random.int(0...300)) * 1000)),
                                  receivedAt: Instant(milliseconds: Int64(i)), via: [Channel.realtime, .push, .fetch][random.int(0...2)])
            #expect(memory.insert(m) == disk.insert(m))
        }
        #expect(memory.count == disk.count && memory.count < 2000)
        // `contains` answers without reading the row: against the txIds inserted, and a few never were.
        for n in 0...1600 {
            let txId = "tx\(n)"
            #expect(memory.contains(txId: txId) == inserted.contains(txId) && disk.contains(txId: txId) == inserted.contains(txId), "\(txId)")
        }
        #expect(memory.all() == disk.all())
        for person in people {
            #expect(memory.messages(in: person) == disk.messages(in: person))
            for before in [nil, 0, 1000, 150_000, 299_000, 400_000] as [Int64?] {
                for limit in [0, 1, 5, 50, 5000] {
                    let at = before.map { Instant(milliseconds: $0) }
                    #expect(memory.messages(in: person, before: at, limit: limit) == disk.messages(in: person, before: at, limit: limit),
                            "\(person) before \(String(describing: before)) limit \(limit)")
                }
            }
        }
        var a: [StoredMessage] = [], b: [StoredMessage] = []
        memory.newestFirst { a.append($0); return a.count < 30 }
        disk.newestFirst { b.append($0); return b.count < 30 }
        #expect(a.count == 30 && a == b)
        let store = InMemoryChatStorage(rows: disk), query = try #require(SearchQuery("m1"))
        #expect(store.search(query, in: nil, limit: 5) == InMemoryChatStorage(rows: memory).search(query, in: nil, limit: 5))
    }

    @Test("auto keeps a run in memory up to the threshold and on disk past it; memory and disk are as asked")
    func choice() throws {
        var small = Scenario(source: "s")
        small.stepCount = 1000
        small.trafficPerHour = 420
        small.duration = .hours(24)
        var big = small
        big.stepCount = HistoryChoice.diskThreshold + 1
        var busy = small
        busy.trafficPerHour = 100_000
        busy.duration = .hours(3)
        #expect(!HistoryChoice.auto.onDisk(for: small) && HistoryChoice.auto.onDisk(for: big) && HistoryChoice.auto.onDisk(for: busy))
        #expect(HistoryChoice.disk.onDisk(for: small) && !HistoryChoice.memory.onDisk(for: big))
        // The streamed file's count of steps is the whole parse's.
        for name in ShippedScenarios.names() {
            let path = ShippedScenarios.directory.appendingPathComponent(name).path
            #expect(try ScenarioParser.load(path: path, streaming: true).stepCount == ScenarioParser.load(path: path).stepCount)
        }
    }
}
