import Foundation
import Fuzzing
import SimulatedWorld
import Simulation
import SyncCore
@testable import SyncEngine
@testable import Wire
import Testing
import TestSupport
import WidthCorpus

/// The wire readers' own JSON reader against Foundation's `JSONSerialization`, which nobody
/// on the project wrote: whatever the fast path reads, Foundation reads too, to the same
/// value, scalar for scalar; whatever the fast path leaves, Foundation decides.
@Suite("Wire JSON: the fast reader agrees with Foundation's")
struct WireValueTests {
    /// Foundation's verdict, in the same terms; nil when it rejects the document.
    static func foundation(_ data: Data) -> WireValue? {
        (try? JSONSerialization.jsonObject(with: data, options: [])).flatMap { WireValue(foundation: $0) }
    }

    /// Equal value for value, strings compared by scalars (Swift's `==` on strings is
    /// canonical equivalence, which would hide a changed scalar).
    static func same(_ a: WireValue, _ b: WireValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.number(let x), .number(let y)): return x.bitPattern == y.bitPattern  // the sign of zero too
        case (.string(let x), .string(let y)): return Array(x.unicodeScalars) == Array(y.unicodeScalars)
        case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
        case (.object(let x), .object(let y)):
            guard x.count == y.count else { return false }
            // Keys by scalars too: a key that Foundation read differently is a different key.
            let xs = Dictionary(uniqueKeysWithValues: x.map { (Array($0.key.unicodeScalars).map(\.value), $0.value) })
            return y.allSatisfy { k, v in xs[Array(k.unicodeScalars).map(\.value)].map { same($0, v) } ?? false }
        default: return false
        }
    }

    /// Checks one document; true when the fast path read it.
    @discardableResult
    static func check(_ data: Data, _ label: @autoclosure () -> String) -> Bool {
        let truth = foundation(data)
        let parsed = WireValue.parse(data)
        switch (parsed, truth) {
        case (nil, nil): break
        case (let p?, let t?): #expect(same(p, t), "\(label()): read \(p.canonical), Foundation \(t.canonical)")
        default: Issue.record("\(label()): \(parsed == nil ? "rejected" : "accepted"), Foundation \(truth == nil ? "rejects" : "accepts")")
        }
        guard let fast = WireValue.fastParse(data) else { return false }
        guard let truth else {
            Issue.record("\(label()): the fast path read a document Foundation rejects")
            return true
        }
        #expect(same(fast, truth), "\(label()): fast \(fast.canonical), Foundation \(truth.canonical)")
        return true
    }

    /// Every reply and push of a run with traffic.
    static func capturedDocuments() throws -> [(String, Data)] {
        let scenario = try ScenarioParser.parse("""
            seed 4
            duration 3h
            contacts 4
            traffic 90/h
            at 20m background
            at 50m foreground
            at 60m realtime down
            at 100m realtime up
            at 110m send alice "hi \\u{1F600} \\"quoted\\" \\\\ back\\\\slash"
            at 120m receive bob "tab\\there, é, 中文, \\e[31m"
            """, file: "wire-values.scenario")
        let run = ScenarioRun(scenario: scenario, policy: .naive)
        var documents: [(String, Data)] = []
        run.world.indexer.rewriteReply = { call, data in documents.append(("reply \(call.kind)", data)); return nil }
        run.world.push.rewritePayload = { data in documents.append(("push", data)); return nil }
        run.run()
        return documents
    }

    @Test("every reply and push a run carries is read by the fast path, to Foundation's value")
    func realDocuments() throws {
        let documents = try Self.capturedDocuments()
        #expect(documents.count > 200)
        var fast = 0
        for (label, data) in documents where Self.check(data, label) { fast += 1 }
        #expect(fast == documents.count, "the fast path left \(documents.count - fast) of \(documents.count) real documents")
    }

    @Test("the same documents broken in every way the wire fuzzer knows: Foundation's verdict, Foundation's value")
    func brokenDocuments() throws {
        let documents = try Self.capturedDocuments()
        var r = RandomStream(seed: 11, concern: "wire-value-test")
        let me = Address("kaspa:me")
        for (i, (label, data)) in documents.enumerated() where i % 3 == 0 {
            let doc: WireFuzzer.Document = label == "push" ? .push(data) : .reply(.payments(since: .zero, page: 0), data)
            for mutation in WireFuzzer.Mutation.allCases where label != "push" || (mutation != .duplicateTxId && mutation != .badNextPage) {
                let broken = WireFuzzer.mutate(doc, mutation, now: .zero, me: me, r: &r)
                Self.check(broken, "\(label) \(mutation.rawValue)")
                // Cut at every few bytes, too: every prefix of a document is a document to judge.
                if mutation == .truncated, i % 30 == 0 {
                    for n in stride(from: 0, to: data.count, by: 7) { Self.check(data.prefix(n), "\(label) cut at \(n)") }
                }
            }
        }
    }

    @Test("public text (the naughty strings, emoji sequences, Indic, CJK) as string values and keys, escaped every way")
    func corpusStrings() throws {
        let entries = try Corpus.load(path: Corpus.defaultPath(packageRoot: BuiltProducts.packageRoot.path))
        #expect(entries.count > 1000)
        var fast = 0
        for (i, e) in entries.enumerated() {
            // Foundation's own escaping; every non-ASCII scalar as \u (astral ones as pairs);
            // raw, with only the quote, backslash and controls escaped.
            let foundationText = String(decoding: try JSONSerialization.data(withJSONObject: [e.text]), as: UTF8.self)
            var uEscaped = "", raw = ""
            for unit in e.text.utf16 { uEscaped += unit < 0x80 && unit >= 0x20 && unit != 0x22 && unit != 0x5C
                ? String(UnicodeScalar(UInt8(unit))) : String(format: "\\u%04x", unit) }
            for s in e.text.unicodeScalars {
                switch s {
                case "\"": raw += "\\\""
                case "\\": raw += "\\\\"
                case _ where s.value < 0x20: raw += String(format: "\\u%04X", s.value)
                default: raw.unicodeScalars.append(s)
                }
            }
            for (how, doc) in [("foundation", foundationText), ("u-escaped", "[\"\(uEscaped)\"]"), ("raw", "{\"\(raw)\": [\"\(raw)\", 1]}")]
            where Self.check(Data(doc.utf8), "corpus \(i) (\(e.kind)) \(how)") {
                fast += 1
            }
        }
        #expect(fast > entries.count * 2, "the fast path read \(fast) of \(entries.count * 3)")
    }

    @Test("seeded random documents: whatever the fast path reads, Foundation reads the same")
    func randomDocuments() {
        // Documents built from values, then some broken by a piece inserted or a byte cut.
        // The string fragments hold what a reader gets wrong: escapes (surrogates, U+FEFF and
        // NUL among them), raw multi-byte text, combining marks, controls, non-UTF-8 bytes.
        let fragments: [[UInt8]] = ["a", "txId", "é", "e\u{301}", "中文", "😀", "\u{feff}", "\u{85}", "\u{2028}", "\u{7f}", "\\n", "\\\"",
            "\\/", "\\u00e9", "\\uD83D\\uDE00", "\\ud800", "\\udc00", "\\ufeff", "\\u0000", "\\uFFFF", "\\x", "\u{1}", "\t"].map { Array($0.utf8) }
            + [[0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0x00], [0xEF, 0xBB, 0xBF]]
        let numbers = ["0", "-0", "-0.0", "7", "12.50", "1e2", "-3E-1", "0.1", "123456789012345", "1234567890123456", "01", "1."]
        let pieces: [[UInt8]] = ["{", "}", "[", "]", ",", ":", "\"", "\\", " ", "\n", "-", "0", "true", "nul"].map { Array($0.utf8) }
            + fragments
        var r = RandomStream(seed: 29, concern: "wire-value-random")
        func string() -> [UInt8] {
            var bytes: [UInt8] = [0x22]
            for _ in 0..<r.int(0...4) { bytes += fragments[r.int(0...fragments.count - 1)] }
            return bytes + [0x22]
        }
        func value(_ depth: Int) -> [UInt8] {
            switch r.int(0...(depth > 3 ? 3 : 5)) {
            case 0: return Array(numbers[r.int(0...numbers.count - 1)].utf8)
            case 1: return string()
            case 2: return Array(["true", "false", "null"][r.int(0...2)].utf8)
            case 3: return string()
            case 4: return container(depth + 1, object: false)
            default: return container(depth + 1, object: true)
            }
        }
        func container(_ depth: Int, object: Bool) -> [UInt8] {
            var bytes: [UInt8] = [object ? 0x7B : 0x5B]
            for k in 0..<r.int(0...3) {
                if k > 0 { bytes.append(0x2C) }
                if object { bytes += (r.chance(0.5) ? Array("\"k\(k)\"".utf8) : string()) + [0x3A] }
                bytes += value(depth)
            }
            return bytes + [object ? 0x7D : 0x5D]
        }
        var fast = 0
        let count = 20_000
        for n in 0..<count {
            var bytes = container(0, object: r.chance(0.5))
            if r.chance(0.3) { bytes.insert(contentsOf: pieces[r.int(0...pieces.count - 1)], at: r.int(0...bytes.count)) }
            if r.chance(0.2), !bytes.isEmpty { bytes.remove(at: r.int(0...bytes.count - 1)) }
            if Self.check(Data(bytes), "random \(n): \(bytes)") { fast += 1 }
        }
        #expect(fast > count / 5, "the fast path read \(fast) of \(count)")
    }

    @Test("a rejected item without a txId is known again by its text, whatever the order of its keys and the spacing")
    func rejectedItemKey() throws {
        let me = Address("kaspa:me")
        func key(_ item: String) throws -> String {
            let page = try IndexerPage.read(Data("{\"messages\": [\(item)], \"nextPage\": null}".utf8), for: .payments(since: .zero, page: 0), me: me)
            return try #require(page.rejected.first).key
        }
        let a = try key(#"{"kind": "payment", "blockTime": 5, "payload": "x", "sender": "kaspa:b"}"#)
        let sameReordered = try key(#"{ "sender":"kaspa:b","payload":"x",   "blockTime":5,"kind":"payment" }"#)
        let sameByFoundation = try key(#"{"sender": "kaspa:b", "payload": "x", "blockTime": 5.0, "kind": "payment", "z": 1e0}"#)
        let other = try key(#"{"kind": "payment", "blockTime": 6, "payload": "x", "sender": "kaspa:b"}"#)
        #expect(a == sameReordered)
        #expect(a != other && a != sameByFoundation)  // another item (an extra key) is another key
        #expect(try key(#"[1, {"a": [true, null]}]"#) == (try key(#"[1,{"a":[true,null]}]"#)))
    }

    @Test("the edges of the grammar: numbers, literals, escapes, whitespace, nesting, duplicates, encodings")
    func edges() {
        var documents: [String] = []
        for n in ["0", "-0", "-0.0", "-0.000", "01", "-01", "1.", ".5", "-", "+1", "1e3", "1E+2", "1e-2", "0.1", "1.000", "123456789012345",
                  "1234567890123456", "9007199254740993", "-123456789012345", "0.000000000000001", "1.5", "00", "1_0", "0x10",
                  "Infinity", "NaN", "-Infinity", "1.0e", "2.", "-.5"] {
            documents += ["[\(n)]", "{\"blockTime\": \(n)}"]
        }
        documents += ["[true]", "[false]", "[null]", "[tru]", "[nul]", "[True]", "[NULL]", "[truex]", "[true false]"]
        for s in ["\\/", "\\b\\f\\n\\r\\t", "\\u0000", "\\u001f", "\\u00e9", "\\u00E9", "\\ud83d\\ude00", "\\ud800", "\\udc00x",
                  "\\ud83dx", "\\ude00\\ud83d", "\\x", "\\u12", "\\u12G4", "\\'", "a\u{7f}b", "é", "\u{2028}", "\u{feff}", "a\u{feff}", "\u{feff}a", "\\ufeff", "a\\uFEFFb"] {
            documents += ["[\"\(s)\"]", "{\"\(s)\": 1}"]
        }
        documents += ["[\"a\tb\"]", "[\"a\nb\"]", "[\"a\u{1}b\"]", "[\"unterminated]", "{\"a\" 1}", "{\"a\":}", "{a:1}", "{'a':1}"]
        documents += ["[1,]", "{\"a\":1,}", "[,1]", "[1 2]", "{\"a\":1 \"b\":2}", "{\"a\":1,\"a\":2}", "{\"a\":1,\"b\":{\"a\":2}}"]
        documents += ["", " ", "{}", "[]", " {} ", "{}x", "{} {}", "[][]", "\"top\"", "5", "null", "true", "{}\n", "\n\t\r {}"]
        documents += ["\u{feff}{}", "\u{a0}{}", "{}\u{a0}", "\u{c}{}", "[1,\u{c}2]", "{\"a\":\u{0b}1}"]
        for depth in [1, 62, 63, 64, 65, 100, 511, 512, 513, 600] {
            documents.append(String(repeating: "[", count: depth) + String(repeating: "]", count: depth))
            documents.append(String(repeating: "{\"a\":", count: depth) + "1" + String(repeating: "}", count: depth))
        }
        for doc in documents { Self.check(Data(doc.utf8), doc.debugDescription) }
        // Bytes no string can hold: invalid and overlong UTF-8, inside strings and out; other encodings.
        let bytes: [[UInt8]] = [
            [0x5B, 0x22, 0xFF, 0x22, 0x5D], [0x5B, 0x22, 0xC3, 0x28, 0x22, 0x5D], [0x5B, 0x22, 0xC0, 0x80, 0x22, 0x5D],
            [0x5B, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x5D], [0x5B, 0x22, 0xF4, 0x90, 0x80, 0x80, 0x22, 0x5D], [0x5B, 0x22, 0xE2, 0x82, 0x22, 0x5D],
            [0x5B, 0xFF, 0x5D], [0xEF, 0xBB, 0xBF, 0x7B, 0x7D], [0x5B, 0x00, 0x5D],
            [0xFE, 0xFF, 0x00, 0x7B, 0x00, 0x7D], [0xFF, 0xFE, 0x7B, 0x00, 0x7D, 0x00], [0x00, 0x7B, 0x00, 0x7D], [0x7B, 0x00, 0x7D, 0x00],
        ]
        for b in bytes { Self.check(Data(b), "bytes \(b)") }
        // And the fast path does read the plain ones.
        for plain in ["{}", "[1, -0, 0.5, 123456789012345]", "{\"a\": [true, false, null, \"\\u00e9\\n\"]}"] {
            #expect(WireValue.fastParse(Data(plain.utf8)) != nil, "\(plain)")
        }
    }
}
