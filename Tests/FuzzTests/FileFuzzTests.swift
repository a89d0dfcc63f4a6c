import Foundation
import Fuzzing
import Simulation
import Testing
import TestSupport

/// The shipped files, read from the package (tests run from its root).
func shipped(_ folder: String, _ ext: String) throws -> [(String, String)] {
    let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(ext) }.sorted()
    return try names.map { ("\(folder)/\($0)", try String(contentsOfFile: "\(folder)/\($0)", encoding: .utf8)) }
}

@Suite("Bad files: scenario and theme files broken one line at a time")
struct FileFuzzTests {
    @Test("a broken scenario file still parses or fails with one safe FILE:LINE: message naming a line of it")
    func scenarios() throws {
        var corpus = try shipped("Scenarios", ".scenario")
        corpus += (1...20).map { ("fuzz-\($0).scenario", FuzzScenario.generate(seed: UInt64($0)).text) }
        let files = FuzzBudget.scaled(6, floor: 250)
        let report = FileFuzzer.checkScenarios(count: files, seed: 1, corpus: corpus)
        #expect(report.failures.isEmpty, "\(report.failures.prefix(5))")
        #expect(report.files == files)
        #expect(report.rejected > files * 6 / 10)  // most breakage is caught, not silently accepted
        #expect(report.stillValid + report.rejected == report.files)
    }

    @Test("a broken theme file is never fatal: warnings naming the file, and the default's style for what could not be read")
    func themes() throws {
        let files = FuzzBudget.scaled(3, floor: 100)
        let report = FileFuzzer.checkThemes(count: files, seed: 1, corpus: try shipped("Themes", ".toml"))
        #expect(report.failures.isEmpty, "\(report.failures.prefix(5))")
        #expect(report.files == files)
        #expect(report.rejected > files * 3 / 8)
    }

    @Test("a broken keys file is never fatal (a [#keys] header aborted the app): warnings naming the file, the standard keys when it is refused, and quit always has a key")
    func keys() throws {
        let files = FuzzBudget.scaled(3, floor: 100)
        let report = FileFuzzer.checkKeys(count: files, seed: 1, corpus: FileFuzzer.keysCorpus)
        #expect(report.failures.isEmpty, "\(report.failures.prefix(5))")
        #expect(report.files == files)
        #expect(report.rejected > files / 4)
    }

    @Test("a file that is not UTF-8 is reported at the line of its first bad byte")
    func notUTF8() throws {
        let bytes = Data("seed 1\nduration 1h\nat 1m receive alice \"ok\"\n".utf8) + Data([0x61, 0x74, 0x20, 0xFF, 0x0A])
        #expect {
            try ScenarioParser.parse(data: bytes, file: "bad.scenario")
        } throws: { error in
            (error as? ScenarioError)?.description == "bad.scenario:4: not UTF-8 text (byte 4 of the line)"
        }
    }
}
