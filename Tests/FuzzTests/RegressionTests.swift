import Foundation
import Fuzzing
import Simulation
import SyncCore
import Testing

/// The shrunk scenarios of every case the fuzzer found failing, kept as files a person can
/// rerun (`synchat simulate --scenario FILE --compare`). Each opens with what it found.
let regressionFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Regressions")

func regressionFiles() -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: regressionFolder.path)) ?? []).filter { $0.hasSuffix(".scenario") }.sorted()
}

/// Fuzzer findings not fixed, kept so that they run: adaptive trusts a reliable push for the end
/// of a realtime outage that no look covered (one too short for (g)'s first look, or its last
/// seconds after the last look: rule 6's trust, which (g) keeps to stay within issue 39's price
/// of looking), and push failed silently in exactly that gap. A proof
/// from the UTXO set at every reconnect closes all five, at a request and up to 1.3 kB each:
/// on the demo 23 requests and 4 486 bytes against seed's 22 and 3 162, which goal 3 forbids
/// (docs/matrix.md, "What the fuzzer found").
let knownLossFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("KnownLosses")

func knownLossFiles() -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: knownLossFolder.path)) ?? []).filter { $0.hasSuffix(".scenario") }.sorted()
}

@Suite("Fuzzer findings stay fixed")
struct RegressionTests {
    @Test("every shrunk failing case keeps every invariant under naive, seed and adaptive", arguments: regressionFiles())
    func findingStaysFixed(file: String) throws {
        let scenario = try ScenarioParser.load(path: regressionFolder.appendingPathComponent(file).path)
        let found = ScenarioFuzzer.check(scenario)
        for v in found.violations { Issue.record("\(file): \(v)") }
        #expect(found.messages > 0)
    }

    @Test("known, not fixed: adaptive loses a message push dropped where no look covered a realtime gap (too short for one, or after the last), while push was believed reliable; every other invariant holds, and the day a file stops losing this fails (move it to Regressions)", arguments: knownLossFiles())
    func knownLossStays(file: String) throws {
        let scenario = try ScenarioParser.load(path: knownLossFolder.appendingPathComponent(file).path)
        let found = ScenarioFuzzer.check(scenario)
        let known = found.violations.filter { $0.kind == .lost && $0.policy == SyncPolicy.adaptive.name }
        for v in found.violations where !known.contains(v) { Issue.record("\(file): \(v)") }
        withKnownIssue("adaptive trusts a reliable push for a short realtime gap (rule 6, (g)'s price of looking)") {
            for v in known { Issue.record("\(file): \(v)") }
        }
    }

    @Test("the findings are on disk")
    func filesExist() {
        #expect(regressionFiles().count >= 14)
    }
}
