import Foundation
import RunReports
import SimulatedWorld
import Simulation
import SyncCore
import SyncEngine
import Testing

/// Adaptive's (d) (docs/spec.md#policies): with realtime down and push not reliable, a poll asks
/// the indexer's tips first and syncs only the objects whose tip moved past their cursor; a
/// full sync still runs at least every 6 h. Judged against the world's ground
/// truth (its ledger and the indexer's own count of calls), not the engine's view.
@Suite("Adaptive (d): the tip before a poll")
struct TipCheckTests {
    /// Nine hours with realtime down from the 5th minute, push off: polling all along.
    static let offline = """
        seed 41
        duration 9h
        contacts 5
        traffic 4/h
        mode background-fetch
        at 0m foreground
        at 5m realtime down
        """

    @Test("polls cost one tip, and a sync only of what moved; every message still arrives, as soon as with seed")
    func fewerRequestsSameMessages() throws {
        let (withTip, tipped) = try measure(Self.offline, .adaptive)
        let (_, plain) = try measure(Self.offline, SyncPolicy.adaptive.without("d"))
        #expect(tipped.messagesLost == 0 && plain.messagesLost == 0)
        #expect(tipped.messagesDelivered == plain.messagesDelivered)
        let tips = withTip.world.indexer.requestsByKind["tip"] ?? 0
        #expect(tips > 100)  // a poll a minute, most of them quiet
        #expect(tipped.catchUpFull * 3 < plain.catchUpFull)
        #expect(tipped.backendRequests * 3 < plain.backendRequests)
        // What a poll's sync fetches is what moved: at most a few objects of the 13.
        #expect(tipped.catchUpTargeted > 10)
        // Not slower: each message lands in the store by the poll after it is indexed.
        #expect((tipped.latencyMax ?? .infinity) <= (plain.latencyMax ?? 0) + 61)
    }

    @Test("a poll syncs exactly the objects whose tip moved past their cursor, and a full sync runs at least every 6 h")
    func syncsWhatMoved() throws {
        let (run, _) = try measure(Self.offline, .adaptive)
        let lines = run.log.map(\.line)
        var answers = 0, targeted = 0
        let calls = run.world.indexer.calls
        for (i, e) in run.log.enumerated() {
            guard e.line.contains("polling: tip ") else { continue }
            answers += 1
            // The next decision after a tip answer: a sync, or none.
            let synced = lines[i].contains("syncing those")
            let next = run.log[(i + 1)...].first { if case .catchUpStarted = $0.event { true } else { false } }
            if synced {
                targeted += 1
                #expect(next?.at == e.at, "\(lines[i]): the sync starts at once")
                #expect(next.map { if case .catchUpStarted(_, .targeted, _, _) = $0.event { true } else { false } } ?? false)
                // Ground truth: what the indexer was asked by that sync (until the next poll) is
                // exactly the objects the line names.
                guard case .tipsAnswered(_, let moved, _) = e.event else { Issue.record("\(lines[i])"); continue }
                let until: Instant = run.log[(i + 1)...].first(where: { if case .tipAsked = $0.event { true } else { false } })?.at ?? Instant(milliseconds: .max)
                let asked = calls.filter { $0.at >= e.at && $0.at < until && $0.call.kind != "tip" }.map { c -> String in
                    if case .contextual(let a, let d, _, _) = c.call { return SyncObject.contextual(a, d).description }
                    if case .handshakes(let d, _, _) = c.call { return SyncObject.handshakes(d).description }
                    return "payments"
                }
                #expect(asked.sorted() == moved.sorted(), "\(lines[i])")
            } else {
                #expect(next.map { $0.at > e.at } ?? true, "\(lines[i]): no sync")
            }
            // Each message the indexer had when the tips answered, of an object they did not
            // name, was already stored (ground truth: the ledger).
            guard case .tipsAnswered(_, let moved, _) = e.event else { continue }
            let storedBy = Set(run.storage.allMessages().filter { $0.receivedAt <= e.at }.map(\.txId))
            let landedBefore = run.world.ledger.filter {
                $0.blockTime + .seconds(3) < e.at && !moved.contains(SyncObject(holding: $0).description)
            }
            for m in landedBefore where m.blockTime > .zero + .minutes(5) {
                #expect(storedBy.contains(m.txId), "line \(i): \(m.txId.prefix(8)) landed at \(m.blockTime) and was not stored when the tips did not name its object")
            }
        }
        // Loose on purpose: nine hours of random traffic decide how many polls find something;
        // each answer above is checked exactly against the indexer's calls and the ledger.
        #expect(answers > 100)
        #expect(targeted > 10)
        // Full syncs at least every 6 h (plus a minute for the poll that runs it).
        let fulls = run.log.compactMap { e -> Instant? in if case .catchUpStarted(_, .full, _, _) = e.event { e.at } else { nil } }
        for (a, b) in zip(fulls, fulls.dropFirst()) { #expect(b - a <= .hours(6) + .minutes(2)) }
        #expect(fulls.count >= 2)
    }

    @Test("the indexer's tips are the newest block time of each object the ledger holds (ground truth)")
    func tipsAreTheLedgers() throws {
        let (run, _) = try measure(Self.offline, .adaptive)
        let world = run.world
        var answer: Data?
        world.indexer.send(.tip) { if case .success(let d) = $0 { answer = d } }
        world.scheduler.run(until: world.scheduler.now + .seconds(5))
        let tips = try IndexerTips.read(try #require(answer), now: world.scheduler.now)
        var expected: [String: Instant] = [:]
        for m in world.ledger where m.blockTime + .seconds(3) < world.scheduler.now {
            let o = SyncObject(holding: m).description
            expected[o] = max(expected[o] ?? m.blockTime, m.blockTime)
        }
        #expect(tips.objects == expected)
        #expect(tips.latest == expected.values.max())
        #expect(expected.count > 5)
    }

    @Test("asked with a window, each object's tip comes with how many incoming messages of it landed in the window (ground truth)")
    func tipsCountTheLedger() throws {
        let (run, _) = try measure(Self.offline, .adaptive)
        let world = run.world
        let through = world.scheduler.now - .minutes(30), after = through - .hours(3)
        var answer: Data?
        world.indexer.send(.tipCounting(after: after, through: through)) { if case .success(let d) = $0 { answer = d } }
        world.scheduler.run(until: world.scheduler.now + .seconds(5))
        let tips = try IndexerTips.read(try #require(answer), now: world.scheduler.now)
        var expected: [String: Int] = [:]
        for m in world.ledger where m.blockTime + .seconds(3) < world.scheduler.now {
            let o = SyncObject(holding: m).description
            expected[o, default: 0] += m.direction == .incoming && m.blockTime > after && m.blockTime <= through ? 1 : 0
        }
        #expect(tips.counts == expected)
        #expect(expected.values.reduce(0, +) > 5, "the window holds messages")
        #expect(expected.values.contains(0), "and objects with none in it are counted 0")
    }

    @Test("a count the app cannot fill (a message it would not store, or an indexer that counts one too many) costs one fetch of its object, not one at every look: realtime down for 2h20m with push healthy")
    func unfillableCount() throws {
        let text = """
            seed 7
            duration 3h
            contacts 5
            traffic 30/h
            at 0m foreground
            at 10m realtime down
            at 150m realtime up
            """
        func requests(lying: Bool) throws -> (all: Int, payments: Int, lost: Int) {
            let run = ScenarioRun(scenario: try ScenarioParser.parse(text, file: "unfillable.scenario"), policy: .adaptive)
            if lying {
                run.world.indexer.rewriteReply = { call, data in
                    guard case .tipCounting = call, var root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                          var objects = root["objects"] as? [String: Any], let pair = objects["payments"] as? [Int] else { return nil }
                    objects["payments"] = [pair[0], pair[1] + 1]
                    root["objects"] = objects
                    return try? JSONSerialization.data(withJSONObject: root)
                }
            }
            run.run()
            let s = RunSummary(run)
            return (s.backendRequests, s.requestsByKind["payments"] ?? 0, s.messagesLost)
        }
        let honest = try requests(lying: false), lying = try requests(lying: true)
        #expect(honest.lost == 0 && lying.lost == 0)
        #expect(lying.payments <= honest.payments + 2 && lying.all <= honest.all + 4, "honest \(honest), one too many \(lying)")
    }

    @Test("without (d), or with push reliable, no tip is asked")
    func onlyWhenItApplies() throws {
        let (plain, _) = try measure(Self.offline, SyncPolicy.adaptive.without("d"))
        #expect(plain.world.indexer.requestsByKind["tip"] == nil)
        let (seed, _) = try measure(Self.offline, .seed)
        #expect(seed.world.indexer.requestsByKind["tip"] == nil)
        let healthy = """
            seed 41
            duration 2h
            contacts 5
            traffic 20/h
            at 0m foreground
            at 10m realtime down
            """
        let (run, _) = try measure(healthy, .adaptive)
        // Push turns reliable early; from then on polls run plain syncs. ((e) asks tips of its
        // own in this world, to verify push: BlindSpotTests.)
        let reliableAt = run.log.first { if case .pushState(_, .reliable, _) = $0.event { true } else { false } }?.at
        #expect(reliableAt != nil)
        let tipsAfter = run.log.filter { if case .tipAsked = $0.event { $0.at > reliableAt! } else { false } }
        #expect(tipsAfter.isEmpty)
    }

    @Test("the tips reply is read strictly: milliseconds or null, never in the future, no object newer than the tip")
    func tipWire() throws {
        let now = Instant(milliseconds: 2000)
        let read = try IndexerTips.read(Data(#"{"tip": 1500, "objects": {"payments": 1500, "contextual/kaspa:q1/in": 900}}"#.utf8), now: now)
        #expect(read.latest == Instant(milliseconds: 1500))
        #expect(read.tip(of: .payments) == Instant(milliseconds: 1500))
        #expect(read.tip(of: .contextual(Address("kaspa:q1"), .incoming)) == Instant(milliseconds: 900))
        #expect(read.tip(of: .contextual(Address("kaspa:q1"), .outgoing)) == nil)
        #expect(try IndexerTips.read(Data(#"{"tip": null, "objects": {}}"#.utf8), now: nil) == IndexerTips(latest: nil, objects: [:]))
        for bad in [#"{"tip": "12", "objects": {}}"#, #"{"tip": -1, "objects": {}}"#, #"{"tip": true, "objects": {}}"#, #"{}"#, #"[1]"#,
                    #"{"tip": 99999999, "objects": {}}"#, "not json", #"{"tip": 1500}"#, #"{"tip": 1500, "objects": []}"#,
                    #"{"tip": 1500, "objects": {"payments": 1600}}"#, #"{"tip": null, "objects": {"payments": 10}}"#,
                    #"{"tip": 1500, "objects": {"payments": "10"}}"#,
                    // counted: [newest, count], a count a non-negative integer, every object or none
                    #"{"tip": 1500, "objects": {"payments": [1500]}}"#, #"{"tip": 1500, "objects": {"payments": [1500, -1]}}"#,
                    #"{"tip": 1500, "objects": {"payments": [1500, 1.5]}}"#, #"{"tip": 1500, "objects": {"payments": [1600, 1]}}"#,
                    #"{"tip": 1500, "objects": {"payments": [1500, 2, 3]}}"#, #"{"tip": 1500, "objects": {"payments": ["1500", 2]}}"#,
                    #"{"tip": 1500, "objects": {"payments": [1500, 2], "handshakes/in": 900}}"#] {
            #expect(throws: WireError.self, "\(bad)") { try IndexerTips.read(Data(bad.utf8), now: now) }
        }
        let counted = try IndexerTips.read(Data(#"{"tip": 1500, "objects": {"payments": [1500, 2], "handshakes/in": [900, 0]}}"#.utf8), now: now)
        #expect(counted.tip(of: .payments) == Instant(milliseconds: 1500))
        #expect(counted.count(of: .payments) == 2 && counted.count(of: .handshakes(.incoming)) == 0)
        #expect(counted.count(of: .handshakes(.outgoing)) == 0, "an object the reply does not list has none")
        #expect(read.count(of: .payments) == nil, "a reply without counts counts nothing")
    }
}
