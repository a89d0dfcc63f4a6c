import Foundation
import Testing
import TestSupport

/// Issue 29 #7: `docs/spec.md` holds the sync rules in the project's words, each with the code
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
        let starts = text.matches(of: /\n\*\*(Rule \d+\.|\([a-e]\))/)
        return starts.enumerated().map { i, m in
            let end = i + 1 < starts.count ? starts[i + 1].range.lowerBound : text.endIndex
            return (String(m.output.1), String(text[m.range.lowerBound..<end]))
        }
    }

    @Test("rules 1 to 15 and (a) to (e) are each there, with an owner and tests")
    func everyRule() {
        let names = Self.rules.map(\.name)
        #expect(names == (1...15).map { "Rule \($0)." } + ["(a)", "(b)", "(c)", "(d)", "(e)"])
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
                guard path != "Tests/EngineTests/SpecDocTests.swift" else { continue }
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
