import Foundation
import Simulation
import SyncCore
import SyncEngine
import Testing
import TestSupport

/// The event log of every shipped scenario under every policy, byte for byte.
/// `TestData/golden-events/NAME.POLICY.events` is what `synchat simulate --scenario
/// Scenarios/NAME.scenario --policy POLICY --events` printed when it was recorded; any change
/// to a decision, its order, its time or its words fails here. Re-recording is deliberate:
/// `SYNCHAT_UPDATE_GOLDEN=1 swift test --filter GoldenEventLogTests`, and the diff is the
/// review. `CLITests` holds one of them against the binary itself.
@Suite("Golden event logs: every shipped scenario under every policy")
struct GoldenEventLogTests {
    static let root = BuiltProducts.packageRoot
    static var scenarios: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Scenarios").path)) ?? [])
            .filter { $0.hasSuffix(".scenario") }.map { String($0.dropLast(".scenario".count)) }.sorted()
    }

    /// What `simulate --events` prints for the scenario and policy.
    static func events(_ name: String, _ policy: SyncPolicy) throws -> String {
        let path = root.appendingPathComponent("Scenarios/\(name).scenario").path
        let scenario = try ScenarioParser.load(path: path, streaming: true)
        let run = try ScenarioRun.side(by: [policy], of: scenario, keepsLog: true)[0]
        return run.logLines.joined(separator: "\n") + "\n"
    }

    @Test("there is a golden log for every shipped scenario and policy, and no other")
    func complete() throws {
        let dir = Self.root.appendingPathComponent("TestData/golden-events").path
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".events") })
        let expected = Set(Self.scenarios.flatMap { n in SyncPolicy.all.map { "\(n).\($0.name).events" } })
        #expect(Self.scenarios.count >= 7)
        #expect(files == expected, "missing: \(expected.subtracting(files).sorted()); stale: \(files.subtracting(expected).sorted())")
    }

    @Test("each log is byte for byte what was recorded", arguments: ["naive", "seed", "adaptive"])
    func byteIdentical(policyName: String) throws {
        let policy = try #require(SyncPolicy.named(policyName))
        let update = ProcessInfo.processInfo.environment["SYNCHAT_UPDATE_GOLDEN"] == "1"
        for name in Self.scenarios {
            let file = Self.root.appendingPathComponent("TestData/golden-events/\(name).\(policyName).events")
            let now = try Self.events(name, policy)
            if update {
                try now.write(to: file, atomically: true, encoding: .utf8)
                continue
            }
            let recorded = try String(contentsOf: file, encoding: .utf8)
            guard now != recorded else { continue }
            let a = recorded.split(separator: "\n", omittingEmptySubsequences: false), b = now.split(separator: "\n", omittingEmptySubsequences: false)
            let first = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
            Issue.record("""
                \(name) under \(policyName) differs from TestData/golden-events/\(name).\(policyName).events at line \(first + 1) \
                (\(a.count) lines recorded, \(b.count) now):
                  recorded: \(first < a.count ? String(a[first]) : "(end)")
                  now:      \(first < b.count ? String(b[first]) : "(end)")
                A change on purpose: SYNCHAT_UPDATE_GOLDEN=1 swift test --filter GoldenEventLogTests, and review the diff.
                """)
        }
    }
}
