import ChatStore
import SimulatedWorld
import Foundation
import SyncCore
import SyncEngine
import Testing

/// The counters the screen reads every frame (unread per conversation, the badge,
/// last activity, the message count) are kept as messages land and are read, not counted
/// from the message table; the file is read through at open only when that is due; a
/// conversation's history comes a page at a time.
@Suite("SQLite store: counters, the check at open, pages of history")
struct CounterTests {
    /// What the counters must say, from the operations alone (a model of its own, not the store's).
    struct Model {
        var txIds: Set<String> = []
        var count = 0
        var unread: [Address: Int] = [:]
        var last: [Address: Instant] = [:]

        mutating func commit(_ messages: [StoredMessage]) {
            for m in messages where txIds.insert(m.txId).inserted {
                count += 1
                let c = m.message.conversation
                if m.message.direction == .incoming { unread[c, default: 0] += 1 }
                last[c] = max(last[c] ?? m.message.blockTime, m.message.blockTime)
            }
        }

        func check(_ s: ChatStorage, _ note: String) {
            #expect(s.messageCount() == count, "\(note): message count")
            #expect(s.unreadCounts() == unread.filter { $0.value > 0 }, "\(note): unread per conversation")
            #expect(s.lastActivity() == last, "\(note): last activity")
        }
    }

    /// Random commits (with txIds seen before, both directions, out-of-order block times) and
    /// reads, the same on both stores.
    static func exercise(_ stores: [ChatStorage], seed: UInt64, steps: Int) throws {
        var rng = RandomStream(seed: seed, concern: "counter operations")
        var model = Model()
        let conversations = (0..<5).map { Address("kaspa:c\($0)") }
        for step in 0..<steps {
            if rng.next() % 4 == 0 {
                let c = conversations[Int(rng.next() % 5)]
                for s in stores { try s.markRead(c) }
                model.unread[c] = 0
            } else {
                let batch = (0..<Int(1 + rng.next() % 6)).map { _ in
                    let id = "tx\(rng.next() % 400)"  // repeats: stored once
                    return StoredMessage(message: NetworkMessage(txId: id, conversation: conversations[Int(rng.next() % 5)],
                                                                 direction: rng.next() % 3 == 0 ? .outgoing : .incoming, kind: .contextual,
                                                                 body: id, blockTime: Instant(milliseconds: Int64(rng.next() % 100_000))),
                                         receivedAt: .zero, via: .fetch)
                }
                for s in stores { _ = try s.commit(batch, cursor: nil) }
                model.commit(batch)
            }
            for s in stores { model.check(s, "step \(step), \(type(of: s))") }
        }
    }

    @Test("the counters agree with the messages after every commit and read, in SQLite and in memory")
    func countersAgree() throws {
        let dir = try TemporaryDirectory("counters")
        defer { dir.remove() }
        try Self.exercise([try SQLiteChatStorage.open(path: dir.file("c.sqlite")), InMemoryChatStorage()], seed: 16, steps: 300)
    }

    @Test("a store written before the counters is counted once when opened, and kept from then on")
    func olderStoreIsCounted() throws {
        let dir = try TemporaryDirectory("counters")
        defer { dir.remove() }
        let path = dir.file("old.sqlite")
        var model = Model()
        let batch = (0..<50).map { i in
            StoredMessage(message: NetworkMessage(txId: "m\(i)", conversation: Address("kaspa:c\(i % 3)"), direction: i % 4 == 0 ? .outgoing : .incoming,
                                                  kind: .contextual, body: "b", blockTime: Instant(milliseconds: Int64(i * 7 % 50))),
                          receivedAt: .zero, via: .fetch)
        }
        do {
            let s = try SQLiteChatStorage.open(path: path)
            _ = try s.commit(batch, cursor: nil)
            try s.markRead(Address("kaspa:c1"))
            // As the previous version left it: no counters.
            try s.execute("""
                DROP TRIGGER conversationCounter_insert; DROP TRIGGER conversationCounter_read; DROP TABLE conversationCounter;
                DELETE FROM grdb_migrations WHERE identifier = 'v4-counters'
                """)
        }
        model.commit(batch)
        model.unread[Address("kaspa:c1")] = 0
        let s = try SQLiteChatStorage.open(path: path)
        model.check(s, "migrated")
        let more = [StoredMessage(message: NetworkMessage(txId: "late", conversation: Address("kaspa:c1"), direction: .incoming, kind: .contextual,
                                                           body: "b", blockTime: Instant(milliseconds: 99)), receivedAt: .zero, via: .push)]
        _ = try s.commit(more, cursor: nil)
        model.commit(more)
        model.check(s, "after the migration")
    }

    @Test("the file is read through at open after an unclean end or once a week, not at every clean start")
    func checkWhenDue() throws {
        let dir = try TemporaryDirectory("check")
        defer { dir.remove() }
        let path = dir.file("p.sqlite")
        var s = try SQLiteChatStorage.open(path: path)
        #expect(s.checkedAtOpen)  // never checked yet
        s.close()
        s = try SQLiteChatStorage.open(path: path)
        #expect(!s.checkedAtOpen)  // closed cleanly, checked just now
        s.abandon()  // killed: never closed
        s = try SQLiteChatStorage.open(path: path)
        #expect(s.checkedAtOpen)
        s.close()
        // Eight days since the last check.
        try s.execute("UPDATE setting SET value = '\(Int(Date().timeIntervalSince1970) - 8 * 86_400)' WHERE key = 'store.checkedAt'")
        s = try SQLiteChatStorage.open(path: path)
        #expect(s.checkedAtOpen)
        s.close()
        s = try SQLiteChatStorage.open(path: path)
        #expect(!s.checkedAtOpen)
    }

    @Test("a damaged store left open by a kill is refused at the next start, naming the file")
    func damageFound() throws {
        let dir = try TemporaryDirectory("check")
        defer { dir.remove() }
        let path = dir.file("p.sqlite")
        do {
            let s = try SQLiteChatStorage.open(path: path)
            for k in 0..<20 { _ = try s.commit((0..<200).map { msg("m\(k)-\($0)", Int64($0), via: .fetch) }, cursor: nil) }
            try s.checkpoint()
            s.abandon()
        }
        // Garbage over a page in the middle of the file (an index or table page; not the header).
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: (size / 4096 / 2) * 4096)
        try handle.write(contentsOf: Data(repeating: 0x5A, count: 4096))
        try handle.close()
        #expect {
            try SQLiteChatStorage.open(path: path)
        } throws: { error in
            (error as? StoreError).map { $0.path == path && ($0.description.contains("damaged") || $0.description.contains("not a synchat store")) } ?? false
        }
    }

    @Test("pages of a conversation, newest first, never split an instant and together are its history, in SQLite and in memory")
    func pages() throws {
        let dir = try TemporaryDirectory("pages")
        defer { dir.remove() }
        let sqlite = try SQLiteChatStorage.open(path: dir.file("p.sqlite"))
        let memory = InMemoryChatStorage()
        var rng = RandomStream(seed: 7, concern: "counter operations")
        // 300 messages in one conversation over 60 instants (many share one), stored out of order.
        let all = (0..<300).map { i in
            StoredMessage(message: NetworkMessage(txId: "m\(i)", conversation: Address("kaspa:a"), direction: .incoming, kind: .contextual,
                                                  body: "b", blockTime: Instant(milliseconds: Int64(rng.next() % 60))), receivedAt: .zero, via: .fetch)
        }
        for s in [sqlite, memory] as [ChatStorage] {
            _ = try s.commit(all, cursor: nil)
            _ = try s.commit([msg("other", 5, via: .fetch, from: "kaspa:b")], cursor: nil)
            for limit in [1, 7, 50, 299, 300, 1000] {
                var pages: [[StoredMessage]] = []
                var before: Instant?
                while true {
                    let page = s.messages(in: Address("kaspa:a"), before: before, limit: limit)
                    pages.append(page)
                    if page.count < limit { break }
                    #expect(page.count >= limit)
                    before = page.first?.message.blockTime
                }
                let joined = pages.reversed().flatMap { $0 }
                let expected = all.enumerated().sorted { ($0.element.message.blockTime, $0.offset) < ($1.element.message.blockTime, $1.offset) }
                #expect(joined.map(\.txId) == expected.map(\.element.txId), "limit \(limit): every message once, in order")
                #expect(zip(joined, joined.dropFirst()).allSatisfy { $0.message.blockTime <= $1.message.blockTime }, "limit \(limit): in order")
                // No instant split between two pages.
                for (newer, older) in zip(pages, pages.dropFirst()) {
                    if let a = older.last, let b = newer.first { #expect(a.message.blockTime < b.message.blockTime, "limit \(limit)") }
                }
            }
        }
        #expect(sqlite.messages(in: Address("kaspa:a"), before: nil, limit: 40).map(\.txId)
                == memory.messages(in: Address("kaspa:a"), before: nil, limit: 40).map(\.txId))
    }
}
