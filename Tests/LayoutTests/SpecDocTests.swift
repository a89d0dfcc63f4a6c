import Foundation
import Fuzzing
import RunReports
import Simulation
import SyncCore
import Testing
import TestSupport

/// `docs/spec.md` holds the sync rules in the project's words, each with the code
/// that owns it and the tests that pin it, and every citation in the code and the docs points
/// into the repo. These checks keep it so: a test renamed or removed, a file moved, or a
/// citation of a document the repo does not hold fails here, naming it.
@Suite("docs/spec.md: every rule has its owner and its tests, and they exist")
struct SpecDocTests {
    static let root = BuiltProducts.packageRoot
    static func read(_ path: String) -> String { (try? String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)) ?? "" }

    /// The rules' paragraphs: from one bold rule heading to the next.
    static var rules: [(name: String, text: String)] {
        let text = read("docs/spec.md")
        let starts = text.matches(of: /\n\*\*(Rule \d+\.|\([a-g]\))/)
        return starts.enumerated().map { i, m in
            let end = i + 1 < starts.count ? starts[i + 1].range.lowerBound : text.endIndex
            return (String(m.output.1), String(text[m.range.lowerBound..<end]))
        }
    }

    @Test("rules 1 to 15 and (a) to (g) are each there, with an owner and tests")
    func everyRule() {
        let names = Self.rules.map(\.name)
        #expect(names == (1...15).map { "Rule \($0)." } + ["(a)", "(b)", "(c)", "(d)", "(e)", "(f)", "(g)"])
        for rule in Self.rules {
            #expect(rule.text.contains("- Owner:") && rule.text.contains("- Tests:"), "\(rule.name) lacks its owner or its tests")
        }
    }

    @Test("every test it names is a test of that file, word for word; every source file it names exists")
    func namesExist() throws {
        let text = Self.read("docs/spec.md")
        var checked = 0
        for line in text.split(separator: "\n") {
            guard let file = line.firstMatch(of: /`(Tests\/[A-Za-z0-9_\/]+\.swift)`/).map({ String($0.1) }) else { continue }
            let source = Self.read(file)
            #expect(!source.isEmpty, "\(file) does not exist")
            let afterPath = line[line.firstMatch(of: /`Tests\/[A-Za-z0-9_\/]+\.swift`/)!.range.upperBound...]
            for quoted in afterPath.matches(of: /"((?:[^"\\]|\\.)*)"/) {
                let name = String(quoted.output.1)
                #expect(source.contains("@Test(\"\(name)\""), "\(file) has no @Test(\"\(name.prefix(70))…\")")
                checked += 1
            }
        }
        #expect(checked >= 100)
        for path in text.matches(of: /`(Sources\/[A-Za-z0-9_+\/]+\.swift)`/).map({ String($0.output.1) }) {
            #expect(FileManager.default.fileExists(atPath: Self.root.appendingPathComponent(path).path), "\(path) does not exist")
        }
    }

    @Test("no code, test or doc cites a document the repo does not hold (the product's SPEC, STYLE.md)")
    func citationsPointIntoTheRepo() throws {
        var offenders: [String] = []
        let fm = FileManager.default
        for top in ["Sources", "Tests", "docs", "Scenarios"] {
            guard let walker = fm.enumerator(atPath: Self.root.appendingPathComponent(top).path) else { continue }
            for case let relative as String in walker where relative.hasSuffix(".swift") || relative.hasSuffix(".md") || relative.hasSuffix(".scenario") {
                let path = "\(top)/\(relative)"
                guard path != "Tests/LayoutTests/SpecDocTests.swift" else { continue }
                for (i, line) in Self.read(path).split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                where line.contains("STYLE.md") || line.firstMatch(of: /\bSPEC\b/) != nil {
                    offenders.append("\(path):\(i + 1)")
                }
            }
        }
        for file in ["README.md", "Package.swift"] where Self.read(file).contains("STYLE.md") || Self.read(file).firstMatch(of: /\bSPEC\b/) != nil {
            offenders.append(file)
        }
        #expect(offenders.isEmpty, "cites SPEC or STYLE.md: \(offenders.prefix(10))")
    }
}

/// What the README and docs/simulate.md show as a program's output is that program's output
/// as it stands: a change to the output fails here until the docs show it.
@Suite("The docs' sample output is the program's")
struct DocSampleTests {
    @Test("every line of the README's simulate --events sample is a line of demo.scenario's log under seed")
    func readmeEvents() throws {
        let readme = SpecDocTests.read("README.md")
        let start = try #require(readme.range(of: "swift run synchat simulate --scenario Scenarios/demo.scenario --policy seed --events"))
        let block = readme[start.upperBound...].split(separator: "```", maxSplits: 3)[2]
        let sample = block.split(separator: "\n").filter { $0.first?.isNumber == true }
        let log = Set(SpecDocTests.read("TestData/golden-events/demo.seed.events").split(separator: "\n"))
        #expect(sample.count >= 6)
        for line in sample { #expect(log.contains(line), "not in the log: \(line)") }
    }

    @Test("docs/simulate.md's healthy-day table is what simulate --compare prints for it")
    func simulateTable() throws {
        let doc = SpecDocTests.read("docs/simulate.md")
        let start = try #require(doc.range(of: "measure  "))
        let end = try #require(doc.range(of: "\n```", range: start.lowerBound..<doc.endIndex))
        let shown = String(doc[start.lowerBound..<end.lowerBound])
        let scenario = try ScenarioParser.load(path: SpecDocTests.root.appendingPathComponent("Scenarios/healthy-day.scenario").path, streaming: true)
        let runs = try ScenarioRun.side(by: SyncPolicy.all, of: scenario, keepsLog: false)
        let printed = RunSummary.comparison(runs.map { RunSummary($0) }).joined(separator: "\n")
        #expect(shown == printed, "docs/simulate.md's table differs from simulate --compare; paste the new one")
    }

    @Test("docs/simulate.md's shrunk file is what the shrinker makes of the exploratory session, two runs at once as the transcript says: the lines, the timed lines kept and the runs it took")
    func shrinkSample() throws {
        let doc = SpecDocTests.read("docs/simulate.md")
        let start = try #require(doc.range(of: "$ cat outage.scenario\n"))
        let end = try #require(doc.range(of: "\n```", range: start.upperBound..<doc.endIndex))
        let shown = doc[start.upperBound..<end.lowerBound].split(separator: "\n").map(String.init)
        let path = "Scenarios/sessions/exploratory-push-outage.scenario"
        let shrinker = try ScenarioShrinker(text: SpecDocTests.read(path), file: path, keepsComments: false)
        let result = try #require(shrinker.shrink(width: 2, holds: ScenarioShrinker.eventLine(containing: "reliable → unreliable", policy: .adaptive)))
        #expect(shown.first == "# shrunk by synchat simulate --shrink from exploratory-push-outage.scenario: \(result.timedBefore) → \(result.timedAfter) timed lines in \(result.runs) runs")
        #expect(Array(shown.dropFirst(3)) == result.text.split(separator: "\n").map(String.init))
        #expect(doc.contains("shrink: done: \(result.timedBefore) → \(result.timedAfter) timed lines, \(result.runs) runs"))
    }

    @Test("docs/matrix.md's table: every cell's row, and every verdict line, is what simulate --matrix prints")
    func matrixRows() throws {
        let doc = SpecDocTests.read("docs/matrix.md").split(separator: "\n").map(String.init)
        let rows = FaultGrid.rows  // the default grid, run once per test process
        let printed = FaultMatrix.table(rows).filter { $0.range(of: #"^ *[0-9]+ .*│"#, options: .regularExpression) != nil }
        #expect(printed.count == FaultMatrix.cells.count)
        for line in printed { #expect(doc.contains(line), "docs/matrix.md lacks, as simulate --matrix prints it now: \(line)") }
        let verdicts = FaultMatrix.verdicts(rows).filter { $0.range(of: #"^[1-3]\. "#, options: .regularExpression) != nil }
        #expect(verdicts.count >= 5)
        for line in verdicts { #expect(doc.contains(line), "docs/matrix.md lacks the verdict line: \(line)") }
    }
}
