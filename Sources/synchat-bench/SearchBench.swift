import ChatStore
import Foundation
import SyncCore
import SyncEngine

/// `synchat-bench search [--messages N]`: search through the store's FTS5 index on a large
/// profile (1 000 000 messages over 200 conversations by default), with words drawn from a
/// Zipf-like vocabulary as real chat text is, so that a common word is in a large share of
/// the messages and a rare one in a few. The store is built once into the temporary
/// directory and reused by later runs of the same size.
func searchBench(messages: Int) throws {
    say("== search (SQLite FTS5): \(messages) messages over 200 conversations")
    let path = NSTemporaryDirectory() + "synchat-bench-search-\(messages).sqlite"
    let vocabulary = SearchCorpus.vocabulary(4_000)
    let contacts = (0..<200).map { Address("kaspa:qsearch\($0)") }
    var reused = FileManager.default.fileExists(atPath: path)
    if reused, let existing = try? SQLiteChatStorage.open(path: path), existing.messageCount() != messages {
        reused = false
    }
    if !reused {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let store = try SQLiteChatStorage.open(path: path)
        for (i, a) in contacts.enumerated() { try store.upsertContact(Contact(address: a, handle: "s\(i)", displayName: "Search \(i)")) }
        var rng = SearchCorpus.Random(seed: 42)
        let t0 = now()
        var batch: [StoredMessage] = []
        for i in 0..<messages {
            let words = (0..<(2 + rng.next() % 14)).map { _ in vocabulary[SearchCorpus.zipfRank(&rng, count: vocabulary.count)] }
            let m = NetworkMessage(txId: String(format: "s%08d", i), conversation: contacts[i % contacts.count],
                                   direction: i % 3 == 0 ? .outgoing : .incoming, kind: .contextual,
                                   body: words.joined(separator: " "), blockTime: Instant(milliseconds: Int64(i) * 10_000))
            batch.append(StoredMessage(message: m, receivedAt: m.blockTime, via: .fetch))
            if batch.count == 10_000 { _ = try store.commit(batch, cursor: nil); batch.removeAll(keepingCapacity: true) }
        }
        _ = try store.commit(batch, cursor: nil)
        try store.checkpoint()
        row("build the profile (insert with the index)", String(format: "%.0f msg/s", Double(messages) / (Double(now() - t0) / 1e9)))
    } else {
        row("profile", "reused \(path)")
    }
    let store = try SQLiteChatStorage.open(path: path)
    let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    row("profile size", String(format: "%.0f MB", Double(size) / 1e6))
    let conversation = contacts[7]
    let cases: [(String, String, Address?)] = [
        ("word of rank 1, one conversation", vocabulary[0], conversation),
        ("word of rank 1, all", vocabulary[0], nil),
        ("word of rank 300, one conversation", vocabulary[299], conversation),
        ("word of rank 3000, all", vocabulary[2999], nil),
        ("two words, one conversation", vocabulary[4] + " " + vocabulary[40], conversation),
        ("two-letter prefix, all", String(vocabulary[10].prefix(2)), nil),
        ("a word nobody wrote, all", "zzyzx", nil),
    ]
    for (name, text, scope) in cases {
        let query = SearchQuery(text)!
        var times: [Double] = []
        var hits = 0
        for i in 0..<12 {
            let t0 = now()
            hits = store.search(query, in: scope, limit: 500).count
            if i >= 2 { times.append(Double(now() - t0) / 1e6) }  // the first runs warm the cache
        }
        row("\(name) (\(hits) hits, limit 500)", fmt(percentile(times, 0.5)), "goal ≤ 50 ms")
    }
}

/// Text for the search benchmark: pronounceable words, drawn by a Zipf-like law.
enum SearchCorpus {
    struct Random {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        /// SplitMix64.
        mutating func next() -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int(truncatingIfNeeded: (z ^ (z >> 31)) >> 1)
        }
    }

    static func vocabulary(_ n: Int) -> [String] {
        let onsets = ["b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "ch", "sh", "tr", "pl"]
        let vowels = ["a", "e", "i", "o", "u", "ai", "ou"]
        var rng = Random(seed: 7)
        var seen: Set<String> = []
        var words: [String] = []
        while words.count < n {
            let syllables = 1 + rng.next() % 3
            let w = (0..<syllables).map { _ in onsets[rng.next() % onsets.count] + vowels[rng.next() % vowels.count] }.joined()
            if seen.insert(w).inserted { words.append(w) }
        }
        return words
    }

    /// A rank in 0..<count with probability about 1/(rank+1).
    static func zipfRank(_ rng: inout Random, count: Int) -> Int {
        let harmonic = log(Double(count)) + 0.5772
        let u = Double(rng.next() % 1_000_000) / 1_000_000 * harmonic
        return min(count - 1, max(0, Int(exp(u - 0.5772)) - 1))
    }
}
