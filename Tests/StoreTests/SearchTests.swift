import ChatStore
import Foundation
import SyncCore
import SyncEngine
import Testing
import WidthCorpus

/// Search, the store's part: SQLite FTS5. The oracle is SQLite's own
/// `unicode61` tokenizer, which nobody on the project wrote: the screen's highlighting
/// (`SearchQuery`) must find exactly the messages the index finds, over public text.
@Suite("Search (SQLite FTS5)")
struct SearchTests {
    static func message(_ i: Int, _ body: String, in conversation: String, at t: Int64) -> StoredMessage {
        StoredMessage(message: NetworkMessage(txId: String(format: "tx%06d", i), conversation: Address(conversation), direction: .incoming,
                                              kind: .contextual, body: body, blockTime: Instant(milliseconds: t)),
                      receivedAt: Instant(milliseconds: t), via: .fetch)
    }

    @Test("the words of a query match the starts of words, ignoring case and diacritics; all must match; newest first")
    func basics() throws {
        let s = try SQLiteChatStorage.inMemory()
        _ = try s.commit([
            Self.message(1, "Hello world", in: "kaspa:a", at: 1000),
            Self.message(2, "Café au lait, s'il vous plaît", in: "kaspa:a", at: 2000),
            Self.message(3, "the HELLO-kitty shop", in: "kaspa:b", at: 3000),
            Self.message(4, "shell", in: "kaspa:b", at: 4000),
        ], cursor: nil)
        func ids(_ q: String, in c: String? = nil) -> [String] {
            guard let query = SearchQuery(q) else { return [] }
            return s.search(query, in: c.map(Address.init), limit: 50).map(\.txId)
        }
        #expect(ids("hel") == ["tx000003", "tx000001"])  // not "shell": a word start
        #expect(ids("HELLO") == ["tx000003", "tx000001"])
        #expect(ids("hello", in: "kaspa:a") == ["tx000001"])
        #expect(ids("cafe plait") == ["tx000002"])  // é and î fold
        #expect(ids("hello shop") == ["tx000003"])  // every word
        #expect(ids("hello nothing").isEmpty)
        #expect(SearchQuery("  !! ") == nil)  // no word at all
        // FTS5 syntax in a query is text, never an error.
        for hostile in ["\"", "a*", "NEAR(a b)", "-x", "a OR b", "(", "col:x", "^h", "'; DROP TABLE message; --"] {
            _ = ids(hostile)
        }
        #expect(s.messageCount() == 4)
    }

    @Test("over public text (Unicode emoji, Indic, CJK, the naughty strings), the index and the screen's matching agree")
    func agreesWithSQLite() throws {
        let entries = try Corpus.load(path: Corpus.defaultPath(packageRoot: BuiltProducts.packageRoot.path))
        let s = try SQLiteChatStorage.inMemory()
        let memory = InMemoryChatStorage()
        let messages = entries.enumerated().map { Self.message($0.offset, $0.element.text, in: "kaspa:c\($0.offset % 3)", at: Int64($0.offset)) }
        _ = try s.commit(messages, cursor: nil)
        _ = try memory.commit(messages, cursor: nil)
        // Queries: prefixes of the words of every 7th text, as typed, upper-cased, and folded.
        var queries: Set<String> = []
        for e in entries.enumerated() where e.offset % 7 == 0 {
            for w in SearchQuery.words(in: e.element.text).prefix(2) {
                queries.insert(String(w.prefix(2)))
                queries.insert(String(w.prefix(4)).uppercased())
            }
        }
        #expect(queries.count > 500)
        // The screen's reading of every text, made once: each folded word's scalar prefixes,
        // as long as the longest term of any query, with the texts that have them. A query
        // matches a text when each of its terms is one of the text's prefixes.
        let parsed = queries.sorted().compactMap { q in SearchQuery(q).map { (q, $0) } }
        let longest = parsed.flatMap { $0.1.terms }.map(\.unicodeScalars.count).max() ?? 0
        var texts: [String: Set<String>] = [:]
        for m in messages {
            for word in SearchQuery.words(in: m.message.body) {
                let folded = Array(SearchQuery.fold(word).unicodeScalars)
                for n in stride(from: 1, through: min(longest, folded.count), by: 1) {
                    var prefix = String.UnicodeScalarView()
                    prefix.append(contentsOf: folded[..<n])
                    texts[String(prefix), default: []].insert(m.txId)
                }
            }
        }
        var disagreements: [String] = []
        for (i, (q, query)) in parsed.enumerated() {
            let indexed = Set(s.search(query, in: nil, limit: 100_000).map(\.txId))
            var read = texts[query.terms[0]] ?? []
            for term in query.terms.dropFirst() { read.formIntersection(texts[term] ?? []) }
            if indexed != read { disagreements.append("\(q.debugDescription): index \(indexed.count), screen \(read.count)") }
            // The scan the in-memory store answers with (`SearchQuery.matches`, text by text),
            // on every 8th query: a whole scan of the corpus is 9 000 texts.
            if i % 8 == 0 {
                let scanned = Set(memory.search(query, in: nil, limit: 100_000).map(\.txId))
                if scanned != read { disagreements.append("\(q.debugDescription): scan \(scanned.count), screen \(read.count)") }
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.count) of \(queries.count) queries differ: \(disagreements.prefix(20))")
    }

    @Test("highlighting covers the matched start of each word in the text's own characters")
    func ranges() throws {
        let q = try #require(SearchQuery("cafe wor"))
        let text = "CAFÉS of the World, networks"
        let parts = q.ranges(in: text).map { String(text[$0]) }
        #expect(parts == ["CAFÉ", "Wor"])
    }

    @Test("a store written before search gets its index once, when first opened")
    func oldStoreIsIndexed() throws {
        let dir = try TemporaryDirectory("search")
        defer { dir.remove() }
        let path = dir.file("p.sqlite")
        do {
            let s = try SQLiteChatStorage.open(path: path)
            // Back to the schema before search, with a message the index never saw.
            try s.execute("DROP TRIGGER message_search_insert; DROP TABLE message_search; DROP VIEW message_text; DELETE FROM grdb_migrations WHERE identifier = 'v2-search'")
            _ = try s.commit([Self.message(1, "written before the index existed", in: "kaspa:a", at: 1)], cursor: nil)
        }
        let s = try SQLiteChatStorage.open(path: path)
        #expect(s.search(try #require(SearchQuery("befo exist")), in: nil, limit: 10).map(\.txId) == ["tx000001"])
        _ = try s.commit([Self.message(2, "and after", in: "kaspa:a", at: 2)], cursor: nil)
        #expect(s.search(try #require(SearchQuery("after")), in: nil, limit: 10).map(\.txId) == ["tx000002"])
    }

    @Test("the limit keeps the newest hits")
    func limit() throws {
        let s = try SQLiteChatStorage.inMemory()
        _ = try s.commit((0..<50).map { Self.message($0, "ping \($0)", in: "kaspa:a", at: Int64($0)) }, cursor: nil)
        let hits = s.search(try #require(SearchQuery("ping")), in: nil, limit: 5).map(\.txId)
        #expect(hits == ["tx000049", "tx000048", "tx000047", "tx000046", "tx000045"])
        #expect(s.search(try #require(SearchQuery("ping")), in: Address("kaspa:a"), limit: 3).count == 3)
    }
}
