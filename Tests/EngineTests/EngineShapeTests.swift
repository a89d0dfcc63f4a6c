import Foundation
import Testing
import TestSupport

/// The engine is a class of small values: it keeps its inputs, the timer table and the wiring,
/// and each concern's facts live in a value of their own (`SyncMachines`, `Coverage`,
/// `StoreView`, …). Read from the source, as a reader of the code meets it.
@Suite("The engine's shape: few stored properties, one way to read the store")
struct EngineShapeTests {
    static let engineFolder = BuiltProducts.packageRoot.appendingPathComponent("Sources/SyncEngine")

    /// The stored properties of `Engine`'s class body (extensions cannot hold any): each name
    /// a line of the body's own level declares with `var` or `let`, whatever its attributes and
    /// modifiers (`var a, b` is two), less the computed ones and the static ones; a property
    /// with observers (`didSet`, `willSet`) is stored.
    static func storedProperties() throws -> [String] {
        let text = try String(contentsOf: engineFolder.appendingPathComponent("Engine.swift"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex { $0.hasPrefix("public final class Engine ") })
        let end = try #require(lines[start...].firstIndex { $0 == "}" })
        let declaration = /^    (?:@\w+(?:\([^)]*\))? )*(?:(?:public|package|internal|private|fileprivate|open|lazy|weak|unowned|nonisolated|final|dynamic)(?:\(\w+\))? )*(var|let) (.+)$/
        var names: [String] = []
        for i in start..<end {
            guard let match = lines[i].firstMatch(of: declaration), !lines[i].contains("static ") else { continue }
            let rest = String(match.2)
            let head = rest.split(separator: "=", maxSplits: 1).first.map(String.init) ?? rest
            if let brace = head.firstIndex(of: "{") {
                let after = head[head.index(after: brace)...].trimmingCharacters(in: .whitespaces)
                let next = i + 1 < end ? lines[i + 1].trimmingCharacters(in: .whitespaces) : ""
                let observed = [after, next].contains { $0.hasPrefix("didSet") || $0.hasPrefix("willSet") }
                guard observed else { continue }  // `{` before any `=`: computed
            }
            // `a, b: Int` or `a = 1, b = 2`: every name before a `:` or `=` at the top level.
            var depth = 0, part = ""
            for c in head + "," {
                if "([<{".contains(c) { depth += 1 } else if ")]>}".contains(c) { depth -= 1 }
                guard c == ",", depth == 0 else { part.append(c); continue }
                let name = part.trimmingCharacters(in: .whitespaces).prefix { $0.isLetter || $0.isNumber || $0 == "_" }
                if !name.isEmpty { names.append(String(name)) }
                part = ""
            }
        }
        return names
    }

    @Test("Engine has at most 20 stored properties: the inputs, the timer table's owners and the wiring")
    func storedPropertyCount() throws {
        let stored = try Self.storedProperties()
        #expect(stored.contains("machines") && stored.contains("storeView") && stored.contains("now") && stored.count == Set(stored).count,
                "the count reads the class: \(stored)")
        #expect(stored.count <= 20, "\(stored.count) stored properties: \(stored.joined(separator: ", "))")
    }

    @Test("the engine reads the store only through StoreView: no other read, no store kept beside it")
    func oneStoreReader() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.engineFolder.path)
            .filter { $0.hasPrefix("Engine") && $0.hasSuffix(".swift") && !$0.hasPrefix("EngineInput") }
        #expect(files.contains("Engine.swift") && files.contains("Engine+Watch.swift"))
        var found: [String] = []
        for file in files.sorted() {
            let text = try String(contentsOf: Self.engineFolder.appendingPathComponent(file), encoding: .utf8)
            for (i, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                guard !code.hasPrefix("//") else { continue }
                // The init hands its store to StoreView; nothing else names a store.
                let named = code.contains("storage") && !code.contains("storage: any StoreReading") && !code.contains("StoreView(storage)")
                    && !code.contains("\"storage\"")
                if named || code.contains(": ChatStorage") || code.contains("StoreReading") && !code.contains("storage: any StoreReading") {
                    found.append("\(file):\(i + 1): \(code.prefix(100))")
                }
            }
        }
        #expect(found.isEmpty, "the engine reads the store besides StoreView:\n\(found.joined(separator: "\n"))")
    }
}
