import Foundation
import Fuzzing
import SimulatedWorld
import RunReports
import Simulation
import SyncCore
import SyncEngine
import Testing
import TestSupport

@Suite("Wire fuzzer: broken push payloads and indexer replies")
struct WireFuzzTests {
    @Test("every broken document is rejected by the decoders with a WireError — none accepted, none crashes")
    func decoders() {
        let documents = FuzzBudget.scaled(12, floor: 500)
        let report = WireFuzzer.checkDecoders(count: documents, seed: 3)
        #expect(report.documents == documents)
        #expect(report.rejected == documents)
        #expect(report.accepted.isEmpty, "\(report.accepted.prefix(5))")
        #expect(Set(report.byMutation.keys) == Set(WireFuzzer.Mutation.allCases.map(\.rawValue)))
    }

    @Test("with a fifth of the replies and pushes broken, every policy keeps every invariant and nothing is invented",
          arguments: FuzzBudget.batches(of: FuzzBudget.scaled(1.0 / 6, floor: 5), 2, minimumSize: 5))
    func engine(seeds: ClosedRange<UInt64>) {
        for seed in seeds {
            let outcome = WireFuzzer.checkEngine(seed: seed)
            for v in outcome.violations { Issue.record("wire case \(seed): \(v)\n\(outcome.scenario.text)") }
        }
    }

    @Test("regression: a reply whose block time is a day ahead is rejected — before, its cursor jumped a day and every later message was skipped")
    func futureBlockTime() throws {
        let scenario = try ScenarioParser.parse("""
            duration 30m
            traffic 0/h
            contacts 1
            mode off
            at 1m background
            at 2m receive alice "first"
            at 3m foreground
            at 10m background
            at 11m receive alice "second"
            at 12m foreground
            """, file: "t.scenario")
        let run = ScenarioRun(scenario: scenario, policy: .adaptive)
        var lied = false
        run.world.indexer.rewriteReply = { [unowned run] call, data in
            guard !lied, case .contextual(_, .incoming, _, _) = call,
                  var root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
                  var messages = root["messages"] as? [[String: Any]], !messages.isEmpty else { return nil }
            lied = true
            messages[0]["blockTime"] = (run.scheduler.now + .hours(24)).milliseconds
            root["messages"] = messages
            return try? JSONSerialization.data(withJSONObject: root)
        }
        run.run()
        #expect(lied)
        #expect(run.log.contains { $0.event.line.contains("is ahead of the clock") })
        let summary = RunSummary(run)
        #expect(summary.messagesLost == 0)
        #expect(run.storage.allMessages().allSatisfy { $0.message.blockTime < run.scheduler.now })
    }

    @Test("regression: \"nextPage\": true is not page 1 (a boolean bridged to a number)")
    func booleanNextPage() {
        let me = Address("kaspa:qme")
        #expect(throws: WireError.self) {
            try IndexerPage.decode(Data(#"{"messages": [], "nextPage": true}"#.utf8), for: .payments(since: .zero, page: 0), me: me)
        }
        #expect(throws: WireError.self) {
            try IndexerPage.decode(Data(#"{"messages": [], "nextPage": 1.5}"#.utf8), for: .payments(since: .zero, page: 0), me: me)
        }
        #expect((try? IndexerPage.decode(Data(#"{"messages": [], "nextPage": 2}"#.utf8), for: .payments(since: .zero, page: 0), me: me))?.nextPage == 2)
    }

    @Test("regression: a tip reply is not paged, so it is never \"broken\" by a bad nextPage its reader ignores (wire case 20664: one broken document and not one error event); it is broken another way, and its reader says so")
    func tipsAreNotPaged() throws {
        let tips = Data(#"{"tip": 1000, "objects": {"payments": [1000, 1]}}"#.utf8)
        #expect((try? IndexerTips.read(tips, now: nil)) != nil)
        for seed: UInt64 in 1...40 {
            var r = RandomStream(seed: seed, concern: "tips")
            let broken = WireFuzzer.mutate(.reply(.tipCounting(after: .zero, through: .zero + .seconds(2)), tips), .badNextPage, now: .zero, me: Address("kaspa:qme"), r: &r)
            #expect(throws: WireError.self, "seed \(seed): \(String(decoding: broken.prefix(80), as: UTF8.self))") { try IndexerTips.read(broken, now: nil) }
        }
        let outcome = WireFuzzer.checkEngine(seed: 20664)
        #expect(outcome.violations.isEmpty, "\(outcome.violations)")
    }
}
