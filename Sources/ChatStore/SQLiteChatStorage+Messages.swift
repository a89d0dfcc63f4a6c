import Foundation
import GRDB
import SyncCore
import SyncEngine

/// Messages: stored exactly once with the cursor that covers them, read a page at a time,
/// searched, counted and marked read.
extension SQLiteChatStorage {
    // MARK: - Messages

    public func hasMessage(txId: String) -> Bool {
        (try? db.read { try Bool.fetchOne($0, sql: "SELECT 1 FROM message WHERE txId = ?", arguments: [txId]) }) != nil
    }

    public func message(txId: String) -> StoredMessage? {
        try? db.read { db in try Row.fetchOne(db, sql: "SELECT * FROM message WHERE txId = ?", arguments: [txId]).map(Self.stored) }
    }

    static func stored(_ r: Row) -> StoredMessage {
        StoredMessage(
            message: NetworkMessage(txId: r["txId"], conversation: Address(r["conversation"]),
                                    direction: Direction(rawValue: r["direction"]) ?? .incoming,
                                    kind: MessageKind(rawValue: r["kind"]) ?? .contextual,
                                    body: StoredText.read(r, "body"), blockTime: Instant(milliseconds: r["blockTime"])),
            receivedAt: Instant(milliseconds: r["receivedAt"]), via: Channel(rawValue: r["via"]) ?? .fetch)
    }

    /// Exactly once: a txId already stored is ignored (its first channel is kept). The
    /// cursor is written in the same transaction, so both land or neither does.
    public func commit(_ messages: [StoredMessage], cursor: (SyncObject, SyncCursor)?) throws -> [StoredMessage] {
        try db.write { db in
            var fresh: [StoredMessage] = []
            let insert = try db.cachedStatement(sql: """
                INSERT OR IGNORE INTO message (txId, conversation, direction, kind, body, blockTime, receivedAt, via, unread)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for m in messages {
                let n = m.message
                try insert.execute(arguments: [n.txId, n.conversation.value, n.direction.rawValue, n.kind.rawValue, StoredText.value(n.body),
                                               n.blockTime.milliseconds, m.receivedAt.milliseconds, m.via.rawValue,
                                               n.direction == .incoming])
                if db.changesCount > 0 { fresh.append(m) }
            }
            if failBetweenMessagesAndCursor { throw StorageError("simulated failure between messages and cursor") }
            if let (object, value) = cursor {
                try db.execute(sql: """
                    INSERT INTO syncCursor (object, lastFetchedBlockTime) VALUES (?, ?)
                    ON CONFLICT(object) DO UPDATE SET lastFetchedBlockTime = excluded.lastFetchedBlockTime
                    """, arguments: [object.description, value.lastFetchedBlockTime?.milliseconds])
            }
            return fresh
        }
    }

    public func cursor(_ object: SyncObject) -> SyncCursor {
        let v = try? db.read { try Int64?.fetchOne($0, sql: "SELECT lastFetchedBlockTime FROM syncCursor WHERE object = ?", arguments: [object.description]) }
        return SyncCursor(lastFetchedBlockTime: (v ?? nil).map(Instant.init))
    }

    /// Every cursor, by its object's name (for the crash harness).
    public func allCursors() throws -> [String: Instant] {
        try db.read { db in
            var out: [String: Instant] = [:]
            for r in try Row.fetchAll(db, sql: "SELECT object, lastFetchedBlockTime FROM syncCursor") {
                if let t = r["lastFetchedBlockTime"] as Int64? { out[r["object"]] = Instant(milliseconds: t) }
            }
            return out
        }
    }

    public func messages(in conversation: Address) -> [StoredMessage] {
        (try? db.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM message WHERE conversation = ? ORDER BY blockTime, id", arguments: [conversation.value]).map(Self.stored)
        }) ?? []
    }

    /// Full-text search through the FTS5 index, in the index's own newest-first order with a
    /// limit, so that a word in half the messages costs `limit` rows; in one conversation,
    /// its token joins the query inside the index. (Newest first by arrival in the store,
    /// then ordered by block time: the limit keeps the latest arrivals.)
    public func search(_ query: SearchQuery, in conversation: Address?, limit: Int) -> [StoredMessage] {
        (try? db.read { db in
            var match = "body : (" + query.ftsExpression + ")"
            if let conversation {
                let hex = conversation.value.utf8.map { String(format: "%02x", $0) }.joined()
                match = "conversation : \"c\(hex)\" AND " + match
            }
            return try Row.fetchAll(db, sql: """
                SELECT message.* FROM (SELECT rowid FROM message_search WHERE message_search MATCH ? ORDER BY rowid DESC LIMIT ?) AS hit
                JOIN message ON message.id = hit.rowid
                ORDER BY message.blockTime DESC, message.txId DESC
                """, arguments: [match, limit]).map(Self.stored)
        }) ?? []
    }

    /// The latest `limit` messages of a conversation, oldest first (what a screen shows).
    public func latestMessages(in conversation: Address, limit: Int) -> [StoredMessage] {
        messages(in: conversation, before: nil, limit: limit)
    }

    /// A page through the (conversation, blockTime) index: the block time of the page's
    /// oldest message, then the rows from it up to `before`.
    public func messages(in conversation: Address, before: Instant?, limit: Int) -> [StoredMessage] {
        (try? db.read { db in
            let end = before?.milliseconds ?? Int64.max
            let boundary = limit <= 0 ? nil : try Int64.fetchOne(db, sql: """
                SELECT blockTime FROM message WHERE conversation = ? AND blockTime < ?
                ORDER BY blockTime DESC LIMIT 1 OFFSET ?
                """, arguments: [conversation.value, end, limit - 1])
            return try Row.fetchAll(db, sql: """
                SELECT * FROM message WHERE conversation = ? AND blockTime >= ? AND blockTime < ? ORDER BY blockTime, id
                """, arguments: [conversation.value, boundary ?? Int64.min, end]).map(Self.stored)
        }) ?? []
    }

    public func messageCount() -> Int {
        (try? db.read { try Int.fetchOne($0, sql: "SELECT COALESCE(SUM(messages), 0) FROM conversationCounter") ?? 0 }) ?? 0
    }

    public func allMessages() -> [StoredMessage] {
        (try? db.read { try Row.fetchAll($0, sql: "SELECT * FROM message ORDER BY id").map(Self.stored) }) ?? []
    }

    /// Through the txId index, without reading the rows (`simulate` of a million messages).
    public func duplicateCount() -> Int {
        (try? db.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) - COUNT(DISTINCT txId) FROM message") }) ?? 0
    }

    // The counters below read `conversationCounter` (one row per conversation), never the
    // message table.

    public func lastActivity() -> [Address: Instant] {
        (try? db.read { db in
            var out: [Address: Instant] = [:]
            for r in try Row.fetchAll(db, sql: "SELECT conversation, lastActivity FROM conversationCounter") {
                out[Address(r["conversation"])] = Instant(milliseconds: r["lastActivity"])
            }
            return out
        }) ?? [:]
    }

    /// Unread counts of every conversation in one query (what the engine starts counting from).
    public func unreadCounts() -> [Address: Int] {
        (try? db.read { db in
            var out: [Address: Int] = [:]
            for r in try Row.fetchAll(db, sql: "SELECT conversation, unread FROM conversationCounter WHERE unread > 0") {
                out[Address(r["conversation"])] = r["unread"]
            }
            return out
        }) ?? [:]
    }

    public func markRead(_ conversation: Address) throws {
        try db.write { try $0.execute(sql: "UPDATE message SET unread = 0 WHERE conversation = ? AND unread = 1", arguments: [conversation.value]) }
    }
}
