import Foundation
import Testing
import TestSupport

/// Every module imports only what `Package.swift` says it may (its declared
/// dependencies; SwiftPM lets a module import whatever its dependencies bring, which is how
/// layers leak), and `SyncCore` imports nothing at all, not even Foundation.
@Suite("The module graph: each target imports only its declared dependencies")
struct ModuleGraphTests {
    static let root = BuiltProducts.packageRoot
    /// The toolchain's and the system's modules, which no target declares.
    static let system: Set<String> = ["Foundation", "FoundationEssentials", "FoundationXML", "FoundationNetworking", "Dispatch", "Glibc", "Darwin", "Testing", "XCTest", "Synchronization", "os"]

    /// Each target of Package.swift and the modules it declares (products by their module name).
    static func declared() throws -> [String: Set<String>] {
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        var out: [String: Set<String>] = [:]
        for m in manifest.matches(of: /\.(?:target|executableTarget|testTarget|systemLibrary)\(\s*name:\s*"([\w-]+)"(?:,\s*dependencies:\s*\[([^\]]*)\])?/.dotMatchesNewlines()) {
            let deps = String(m.output.2 ?? "")
            var names = Set(deps.matches(of: /\.product\(name:\s*"(\w+)"/).map { String($0.output.1) })
            let withoutProducts = deps.replacing(/\.product\([^)]*\)/, with: "")
            names.formUnion(withoutProducts.matches(of: /"(\w+)"/).map { String($0.output.1) })
            out[String(m.output.1)] = names
        }
        return out
    }

    /// Each target's folder, from the package's root: its `path:` in Package.swift, or SwiftPM's
    /// own `Sources/<name>` (`Tests/<name>` for a test target).
    static func folders() throws -> [String: String] {
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        var out: [String: String] = [:]
        for chunk in manifest.split(separator: /\.(?=target\(|executableTarget\(|testTarget\(|systemLibrary\()/).dropFirst() {
            guard let name = chunk.firstMatch(of: /^\w+\(\s*name:\s*"([\w-]+)"/)?.output.1 else { continue }
            let path = chunk.firstMatch(of: /path:\s*"([^"]+)"/)?.output.1
            out[String(name)] = path.map(String.init) ?? (chunk.hasPrefix("testTarget") ? "Tests/" : "Sources/") + name
        }
        return out
    }

    /// The modules a folder's Swift files import.
    static func imports(in folder: URL) -> [String: String] {
        var out: [String: String] = [:]
        guard let walker = FileManager.default.enumerator(atPath: folder.path) else { return out }
        for case let file as String in walker where file.hasSuffix(".swift") {
            let text = (try? String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)) ?? ""
            for m in text.matches(of: /(?m)^(?:@\w+ |public |internal |package )*import (?:struct |class |enum |func )?(\w+)/) {
                out[String(m.output.1), default: file] = file
            }
        }
        return out
    }

    @Test("every import of every target is a dependency Package.swift declares for it")
    func importsAreDeclared() throws {
        let declared = try Self.declared()
        let folders = try Self.folders()
        #expect(declared.count >= 30, "read \(declared.count) targets from Package.swift")
        var checked = 0
        for (target, deps) in declared {
            let folder = try #require(folders[target].map { Self.root.appendingPathComponent($0) }, "\(target)'s folder")
            #expect(FileManager.default.fileExists(atPath: folder.path), "\(target)'s folder, \(folder.path), is there")
            for (module, file) in Self.imports(in: folder) where module != target && !Self.system.contains(module) {
                #expect(deps.contains(module), "\(target)/\(file) imports \(module), which Package.swift does not give \(target)")
                checked += 1
            }
        }
        #expect(checked >= 100)
    }

    @Test("Tests holds test code only: every file under it is Swift; what the tests read is under TestData")
    func testDataApart() throws {
        let base = Self.root.appendingPathComponent("Tests")
        let walker = try #require(FileManager.default.enumerator(atPath: base.path))
        var other: [String] = []
        for case let file as String in walker {
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: base.appendingPathComponent(file).path, isDirectory: &isDirectory)
            if !isDirectory.boolValue, !file.hasSuffix(".swift") { other.append("Tests/" + file) }
        }
        #expect(other.isEmpty, "test data among the test code (it belongs under TestData/): \(other.prefix(10))")
        for folder in ["golden-events", "golden-screens", "fuzz-regressions", "width-corpus", "conformance"] {
            #expect(FileManager.default.fileExists(atPath: Self.root.appendingPathComponent("TestData/" + folder).path), "TestData/\(folder)")
        }
    }

    @Test("SyncCore imports nothing, not even Foundation")
    func coreImportsNothing() {
        let imports = Self.imports(in: Self.root.appendingPathComponent("Sources/SyncCore"))
        #expect(imports.isEmpty, "SyncCore imports \(imports)")
    }

    @Test("SyncCore's machines say why in values: no reason is a String there (their words are SyncEngine's, Reasons+Words.swift)")
    func coreReasonsAreTyped() throws {
        let folder = Self.root.appendingPathComponent("Sources/SyncCore")
        var found: [String] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) where file.hasSuffix(".swift") {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for (i, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains(/reason\??: String/) || line.contains(/func why\(.*-> String/) {
                found.append("\(file):\(i + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        #expect(found.isEmpty, "reasons as text in the pure core:\n\(found.joined(separator: "\n"))")
    }
}

extension ModuleGraphTests {
    /// The targets that are not tests, by layer: a target's layer is one more than its highest
    /// dependency's (0: it depends on none of ours). One line a layer, as docs/design.md draws it.
    static func layers() throws -> [String] {
        let declared = try declared()
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let tests = Set(manifest.matches(of: /\.testTarget\(\s*name:\s*"(\w+)"/).map { String($0.output.1) })
        let ours = Set(declared.keys).subtracting(tests)
        var layer: [String: Int] = [:]
        func of(_ t: String) -> Int {
            if let l = layer[t] { return l }
            let l = (declared[t] ?? []).filter { ours.contains($0) }.map { of($0) + 1 }.max() ?? 0
            layer[t] = l
            return l
        }
        for t in ours { _ = of(t) }
        let top = layer.values.max() ?? 0
        return (0...top).map { l in "\(l): " + layer.filter { $0.value == l }.keys.sorted().joined(separator: ", ") }
    }

    @Test("docs/design.md draws the module graph as Package.swift has it, layer by layer")
    func graphIsDrawn() throws {
        let design = try String(contentsOf: Self.root.appendingPathComponent("docs/design.md"), encoding: .utf8)
        let expected = try Self.layers().joined(separator: "\n")
        let start = try #require(design.range(of: "```\n0: "), "docs/design.md has no layer drawing; it should hold:\n\(expected)")
        let end = try #require(design.range(of: "\n```", range: start.upperBound..<design.endIndex))
        let drawn = String(design[design.index(start.lowerBound, offsetBy: 4)..<end.lowerBound])
        #expect(drawn == expected, "docs/design.md's layers differ from Package.swift's; they are:\n\(expected)")
    }
}

extension ModuleGraphTests {
    /// The targets a target links, directly or through others (ours only).
    static func linked(by target: String, in declared: [String: Set<String>]) -> Set<String> {
        var seen: Set<String> = []
        var next = [target]
        while let t = next.popLast() {
            for d in declared[t] ?? [] where declared[d] != nil && seen.insert(d).inserted { next.append(d) }
        }
        return seen
    }

    @Test("Sources/TestKit holds what exists only for the tests and the bench's judges: all synchat does not link, and nothing it links")
    func testKitApart() throws {
        let declared = try Self.declared()
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let tests = Set(manifest.matches(of: /\.testTarget\(\s*name:\s*"(\w+)"/).map { String($0.output.1) })
        let kit = Set(try Self.folders().filter { $0.value.hasPrefix("Sources/TestKit/") }.keys)
        let product = Self.linked(by: "synchat", in: declared)
        let notProduct = Set(declared.keys).subtracting(tests).subtracting(product).subtracting(["synchat", "synchat-bench"])
        #expect(kit.intersection(product).isEmpty, "synchat links these, so they are the product's, not the tests': \(kit.intersection(product).sorted())")
        #expect(notProduct.subtracting(kit).isEmpty, "only tests or the bench use these; they belong under Sources/TestKit: \(notProduct.subtracting(kit).sorted())")
        #expect(kit.count >= 5, "read \(kit.sorted())")
        let folders = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("Sources/TestKit").path)
        #expect(Set(folders) == kit, "every folder of Sources/TestKit is a target's")
    }
}

extension ModuleGraphTests {
    /// A big type is split by concern (docs/design.md): no source file grows past this.
    static let maxLines = 450

    @Test("no Swift file in Sources is over 450 lines")
    func filesAreSplitByConcern() throws {
        let sources = Self.root.appendingPathComponent("Sources")
        let walker = try #require(FileManager.default.enumerator(atPath: sources.path))
        var files = 0
        for case let file as String in walker where file.hasSuffix(".swift") {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count - (text.hasSuffix("\n") ? 1 : 0)
            #expect(lines <= Self.maxLines, "Sources/\(file) has \(lines) lines: split it by concern")
            files += 1
        }
        #expect(files >= 150, "read \(files) files")
    }
}


extension ModuleGraphTests {
    /// docs/design.md's table of targets: each row's target and the targets of ours its last
    /// column says it may import.
    static func tableRows() throws -> [(target: String, mayImport: Set<String>)] {
        let design = try String(contentsOf: root.appendingPathComponent("docs/design.md"), encoding: .utf8)
        let ours = Set(try declared().keys)
        return design.split(separator: "\n").compactMap { line -> (String, Set<String>)? in
            guard let m = line.wholeMatch(of: /\| `([\w-]+)` \|.*\| ([^|]*) \|/), ours.contains(String(m.output.1)) else { return nil }
            // What a parenthesis says is a remark (`not Simulation: …`), not a dependency.
            let listed = m.output.2.replacing(/\([^)]*\)/, with: "")
            let words = Set(listed.matches(of: /[\w-]+/).map { String($0.output) })
            return (String(m.output.1), words.intersection(ours))
        }
    }

    @Test("docs/design.md's table of targets says what each may import as Package.swift has it, for every target that is not a test")
    func tableIsTrue() throws {
        let declared = try Self.declared()
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let tests = Set(manifest.matches(of: /\.testTarget\(\s*name:\s*"(\w+)"/).map { String($0.output.1) })
        let ours = Set(declared.keys)
        let rows = try Self.tableRows()
        #expect(Set(rows.map(\.target)) == ours.subtracting(tests), "rows for every target")
        let wrong = rows.compactMap { row -> String? in
            let deps = (declared[row.target] ?? []).intersection(ours)
            return row.mayImport == deps ? nil : "\(row.target): the table says \(row.mayImport.sorted()), Package.swift \(deps.sorted())"
        }
        #expect(wrong.isEmpty, "docs/design.md's table is wrong for:\n\(wrong.joined(separator: "\n"))")
    }

    @Test("every Sources path docs/*.md and README.md name is there")
    func docPathsExist() throws {
        var checked = 0
        let docs = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.map { "docs/" + $0 } + ["README.md"]
        for doc in docs {
            let text = try String(contentsOf: Self.root.appendingPathComponent(doc), encoding: .utf8)
            for m in text.matches(of: /`((?:Sources|Tests)\/[\w\/+.-]+\.swift)`/) {
                let path = String(m.output.1)
                let there = FileManager.default.fileExists(atPath: Self.root.appendingPathComponent(path).path)
                #expect(there, "\(doc) names \(path), which is not there")
                checked += 1
            }
        }
        #expect(checked >= 5)
    }

    @Test("every test data file or test a doc, a tool or the CI names (TestData/…, Tests/…) is there")
    func dataPathsExist() throws {
        let fm = FileManager.default
        var files = ["README.md", ".ci/run"]
        files += try fm.contentsOfDirectory(atPath: Self.root.appendingPathComponent("docs").path).filter { $0.hasSuffix(".md") }.map { "docs/" + $0 }
        let tools = try #require(fm.enumerator(atPath: Self.root.appendingPathComponent("tools").path))
        for case let file as String in tools where [".sh", ".py", ".md"].contains(where: file.hasSuffix) { files.append("tools/" + file) }
        var checked = 0
        for file in files {
            let text = try String(contentsOf: Self.root.appendingPathComponent(file), encoding: .utf8)
            for m in text.matches(of: /(?:TestData|Tests)\/[\w\/+-]+(?:\.[\w-]+)+\b/) {
                let path = String(m.output)
                // A placeholder (`SEED.scenario`, `NAME.swift`) is no path.
                guard path.split(separator: "/").last?.split(separator: ".").first?.allSatisfy(\.isUppercase) == false else { continue }
                #expect(fm.fileExists(atPath: Self.root.appendingPathComponent(path).path), "\(file) names \(path), which is not there")
                checked += 1
            }
        }
        #expect(checked >= 10, "\(checked) paths read")
    }

    @Test("every name docs/design.md's opening drawing shows is a target of Package.swift or a type declared in Sources")
    func drawingNamesExist() throws {
        let design = try String(contentsOf: Self.root.appendingPathComponent("docs/design.md"), encoding: .utf8)
        let start = try #require(design.range(of: "```\n"))
        let end = try #require(design.range(of: "\n```", range: start.upperBound..<design.endIndex))
        let drawing = design[start.upperBound..<end.lowerBound]
        var known = Set(try Self.declared().keys)
        let base = Self.root.appendingPathComponent("Sources")
        let walker = try #require(FileManager.default.enumerator(atPath: base.path))
        for case let file as String in walker where file.hasSuffix(".swift") {
            let text = try String(contentsOf: base.appendingPathComponent(file), encoding: .utf8)
            for m in text.matches(of: /(?:class|struct|enum|protocol|typealias|actor)\s+(\w+)/) { known.insert(String(m.output.1)) }
        }
        let names = Set(drawing.matches(of: /\b[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*\b/).map { String($0.output) })
        #expect(names.count >= 15, "read \(names.sorted())")
        #expect(names.subtracting(known).isEmpty, "docs/design.md's drawing shows what no target or type is: \(names.subtracting(known).sorted())")
    }

    @Test("every type docs/design.md names in backticks is declared in Sources (or is a target or a library's)")
    func designTypesExist() throws {
        let design = try String(contentsOf: Self.root.appendingPathComponent("docs/design.md"), encoding: .utf8)
        var declaredTypes = Set<String>()
        for folder in ["Sources", "Tests"] {  // a test suite the design names is a type too
            let base = Self.root.appendingPathComponent(folder)
            let walker = try #require(FileManager.default.enumerator(atPath: base.path))
            for case let file as String in walker where file.hasSuffix(".swift") {
                let text = try String(contentsOf: base.appendingPathComponent(file), encoding: .utf8)
                for m in text.matches(of: /(?:class|struct|enum|protocol|typealias|actor)\s+(\w+)/) { declaredTypes.insert(String(m.output.1)) }
            }
        }
        let targets = Set(try Self.declared().keys)
        // Types of the libraries the design names.
        let foreign: Set<String> = ["EmbeddedChannel", "JSONSerialization", "Connection", "DatabaseQueue", "BackPressureHandler",
                                    "NIOWebSocketFrameAggregator", "Date", "Package"]
        var checked = 0
        var missing: Set<String> = []
        for m in design.matches(of: /`([A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*)(\.[a-z]\w*)?(?:\([^`]*\))?`/) where m.output.2 != ".swift" {
            let name = String(m.output.1)
            if targets.contains(name) || foreign.contains(name) { continue }
            if !declaredTypes.contains(name) { missing.insert(name) }
            checked += 1
        }
        #expect(missing.isEmpty, "docs/design.md names types no source declares: \(missing.sorted())")
        #expect(checked >= 40)
    }
}

extension ModuleGraphTests {
    /// Package.swift's opening comment, "Who may import whom": each target's entry, its lines
    /// joined.
    static func manifestEntries() throws -> [(target: String, text: String)] {
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let header = try #require(manifest.range(of: "let package = Package(")).lowerBound
        var entries: [(target: String, text: String)] = []
        for line in manifest[..<header].split(separator: "\n") {
            if let m = line.wholeMatch(of: /\/\/   ([\w-]+) +(.*)/) {
                entries.append((String(m.output.1), String(m.output.2)))
            } else if let m = line.wholeMatch(of: /\/\/ {4,}(.*)/), !entries.isEmpty {
                entries[entries.count - 1].text += " " + m.output.1
            }
        }
        return entries
    }

    @Test("Package.swift's opening comment names each target's dependencies as the manifest declares them, where it lists them")
    func manifestCommentIsTrue() throws {
        let declared = try Self.declared()
        let ours = Set(declared.keys)
        let entries = try Self.manifestEntries()
        #expect(entries.count >= 20, "read \(entries.count) entries")
        var checked = 0
        for entry in entries {
            // The last sentence, when it is only a list of modules (`SyncCore, Wire.`, `SyncCore
            // only.`); what a parenthesis says is a remark, and `— not X` is what the target may
            // not import.
            var last = Substring(entry.text.components(separatedBy: ". ").last ?? "")
            if last.hasSuffix(".") { last = last.dropLast() }
            if let not = last.range(of: " — not ") { last = last[..<not.lowerBound] }
            if last.hasSuffix(" only") { last = last.dropLast(" only".count) }
            let names = last.replacing(/\([^)]*\)/, with: "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard !names.isEmpty, names.allSatisfy({ ours.contains($0) || $0 == "swift-nio" }) else { continue }
            let deps = (declared[entry.target] ?? []).intersection(ours)
            #expect(Set(names).intersection(ours) == deps, "Package.swift's comment says \(entry.target) imports \(names), the manifest \(deps.sorted())")
            checked += 1
        }
        #expect(checked >= 8)
    }

    @Test("docs/design.md's trace of b counts the hops, files and modules it lists")
    func traceCountsWhatItLists() throws {
        let design = try String(contentsOf: Self.root.appendingPathComponent("docs/design.md"), encoding: .utf8)
        let start = try #require(design.range(of: "## A key to a log line: the trace of `b`"))
        let end = try #require(design.range(of: "Another user's message", range: start.upperBound..<design.endIndex))
        let trace = design[start.upperBound..<end.lowerBound]
        let claim = try #require(trace.firstMatch(of: /(\w+) hops through (\d+) files in (\d+) modules/))
        let hops = trace.matches(of: /(?m)^(\d+)\.\s/).count
        let numbers = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]
        #expect(numbers.firstIndex(of: claim.output.1.lowercased()).map { $0 + 1 } == hops, "\(claim.output.1) hops, \(hops) listed")
        #expect(trace.matches(of: /(?m)^\| (\d+) \|/).map { Int($0.output.1)! } == Array(1...hops), "the table has a row for each hop")
        let paths = trace.matches(of: /`(Sources\/([\w-]+)\/[\w+-]+\.swift)`/)
        #expect(Int(claim.output.2) == Set(paths.map { String($0.output.1) }).count, "the files listed")
        #expect(Int(claim.output.3) == Set(paths.map { String($0.output.2) }).count, "the modules listed")
    }
}
