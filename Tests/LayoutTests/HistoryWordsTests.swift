import Foundation
import Testing
import TestSupport

/// History (which issue asked for a change, what the code did before it) belongs to git,
/// CHANGELOG.md and docs/benchmarks.md. The code, the manifest, the tests' names and comments
/// and the docs that describe the product say what is, so none of them names an issue.
@Suite("No issue numbers in the code, the manifest, the tests' names and comments, or the product's docs")
struct HistoryWordsTests {
    static let root = BuiltProducts.packageRoot
    /// The word and a number after it, "issue N" or "Issues N and M"; not a link's anchor
    /// (`benchmarks.md#issue-N-…`).
    static var issueNumber: Regex<Substring> { /\b[Ii]ssues? \d+/ }

    /// Every file under `folder` whose name ends in `suffix`, with its path from the package root.
    static func files(under folder: String, ending suffix: String) throws -> [(path: String, text: String)] {
        let base = root.appendingPathComponent(folder)
        let walker = try #require(FileManager.default.enumerator(atPath: base.path))
        var out: [(path: String, text: String)] = []
        for case let file as String in walker where file.hasSuffix(suffix) {
            out.append(("\(folder)/\(file)", try String(contentsOf: base.appendingPathComponent(file), encoding: .utf8)))
        }
        return out
    }

    /// `path:line: text` for each line whose part `judged` gives names an issue.
    static func offenders(_ path: String, _ text: String, judged: (Substring) -> Substring? = { $0 }) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { i, line in
            guard let part = judged(line), part.contains(issueNumber) else { return nil }
            return "\(path):\(i + 1): \(line.trimmingCharacters(in: .whitespaces).prefix(100))"
        }
    }

    @Test("no Swift file in Sources, and no line of Package.swift, names an issue")
    func sourcesAndManifest() throws {
        let sources = try Self.files(under: "Sources", ending: ".swift")
        #expect(sources.count >= 150, "read \(sources.count) files")
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let found = sources.flatMap { Self.offenders($0.path, $0.text) } + Self.offenders("Package.swift", manifest)
        #expect(found.isEmpty, "name an issue (its history belongs in CHANGELOG.md):\n\(found.prefix(20).joined(separator: "\n"))")
    }

    @Test("no test's or suite's name, and no comment, in Tests names an issue")
    func testNamesAndComments() throws {
        let tests = try Self.files(under: "Tests", ending: ".swift")
        #expect(tests.count >= 100, "read \(tests.count) files")
        // A test's or a suite's line whole; of any other line, its comment (a test's data may say anything).
        let found = tests.flatMap { file in
            Self.offenders(file.path, file.text) { line in
                if line.contains("@Test(") || line.contains("@Suite(") { return line }
                return line.range(of: "//").map { line[$0.lowerBound...] }
            }
        }
        #expect(found.isEmpty, "name an issue (say what the test holds):\n\(found.prefix(20).joined(separator: "\n"))")
    }

    @Test("no doc that describes the product names an issue: docs/benchmarks.md and CHANGELOG.md hold the history")
    func productDocs() throws {
        let docs = try Self.files(under: "docs", ending: ".md").filter { $0.path != "docs/benchmarks.md" }
        #expect(docs.count >= 10, "read \(docs.count) docs")
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let found = docs.flatMap { Self.offenders($0.path, $0.text) } + Self.offenders("README.md", readme)
        #expect(found.isEmpty, "name an issue (its history belongs in CHANGELOG.md, its figures in docs/benchmarks.md):\n\(found.prefix(20).joined(separator: "\n"))")
    }
}

/// `synchat-bench`'s usage, written twice in `main.swift` (the comment a reader of the code
/// sees first, and what `--help` prints), against the sections the bench dispatches.
@Suite("synchat-bench's usage: the comment, the help and the sections agree")
struct BenchUsageTests {
    @Test("the usage comment atop synchat-bench's main.swift is the usage it prints, and both offer every section it dispatches")
    func usageIsWhole() throws {
        let main = try String(contentsOf: BuiltProducts.packageRoot.appendingPathComponent("Sources/synchat-bench/main.swift"), encoding: .utf8)
        let comment = try #require(main.firstMatch(of: /\/\/   swift run -c release synchat-bench (\[.*\])\n/)).output.1
        let printed = try #require(main.firstMatch(of: /say\("usage: synchat-bench (\[.*\])"\)/)).output.1
        #expect(comment == printed, "the comment's usage differs from --help's")
        // Each alternative's first word: `matrix [--seeds A-B]` offers `matrix`.
        let offered = Set(printed.dropFirst().dropLast().split(separator: "|").compactMap { $0.split(separator: " ").first.map(String.init) })
        let dispatched = Set(main.matches(of: /what == "([\w-]+)"/).map { String($0.output.1) })
        // The bench's own children (the crash harness's writer, the width probe in a pane): no person runs them.
        let children: Set<String> = ["crash-child", "probe-widths"]
        #expect(dispatched.count >= 25, "read \(dispatched.count) sections")
        #expect(offered == dispatched.subtracting(children),
                "offered, not dispatched: \(offered.subtracting(dispatched).sorted()); dispatched, not offered: \(dispatched.subtracting(children).subtracting(offered).sorted())")
        // What an unknown section's message lists: every section but `proxy`, which is read before it.
        let list = try #require(main.firstMatch(of: /let sections = \[([^\]]*)\]/)).output.1
        let sections = Set(list.matches(of: /"([\w-]+)"/).map { String($0.output.1) })
        #expect(sections.union(["proxy"]) == offered)
    }
}
