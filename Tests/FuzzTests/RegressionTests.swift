import Foundation
import Fuzzing
import TestSupport
import Simulation
import SyncCore
import Testing

/// The shrunk scenarios of every case the fuzzer found failing, kept as files a person can
/// rerun (`synchat simulate --scenario FILE --compare`). Each opens with what it found.
let regressionFolder = BuiltProducts.packageRoot.appendingPathComponent("TestData/fuzz-regressions")

func regressionFiles() -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: regressionFolder.path)) ?? []).filter { $0.hasSuffix(".scenario") }.sorted()
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

    @Test("the findings are on disk")
    func filesExist() {
        #expect(regressionFiles().count >= 40)
    }
}
