import Foundation
import GRDB
import SyncCore

/// What the crash harness checks after each kill (issue: crash safety, proven).
public struct StoreSnapshot: Sendable {
    public var integrity: String
    public var txIds: Set<String>
    /// Rows minus distinct txIds: must be 0.
    public var duplicateTxIds: Int
    /// Cursors that are ahead of every stored message they cover (must be empty).
    public var cursorsAhead: [String]
}

extension SQLiteChatStorage {
    public func snapshot() throws -> StoreSnapshot {
        let integrity = try integrityCheck()
        return try db.read { db in
            let ids = try String.fetchAll(db, sql: "SELECT txId FROM message")
            let rows = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM message") ?? 0
            var ahead: [String] = []
            for r in try Row.fetchAll(db, sql: "SELECT object, lastFetchedBlockTime FROM syncCursor WHERE lastFetchedBlockTime IS NOT NULL") {
                let object: String = r["object"]
                let cursor: Int64 = r["lastFetchedBlockTime"]
                let parts = object.split(separator: "/").map(String.init)
                let newest: Int64?
                switch parts.first {
                case "contextual" where parts.count == 3:
                    newest = try Int64.fetchOne(db, sql: """
                        SELECT MAX(blockTime) FROM message WHERE kind = 'contextual' AND conversation = ? AND direction = ?
                        """, arguments: [parts[1], parts[2] == "in" ? "incoming" : "outgoing"])
                case "handshakes" where parts.count == 2:
                    newest = try Int64.fetchOne(db, sql: "SELECT MAX(blockTime) FROM message WHERE kind = 'handshake' AND direction = ?",
                                                arguments: [parts[1] == "in" ? "incoming" : "outgoing"])
                case "payments":
                    newest = try Int64.fetchOne(db, sql: "SELECT MAX(blockTime) FROM message WHERE kind = 'payment'")
                default:
                    newest = nil
                }
                // A cursor is the newest block time of messages stored with it: never beyond them.
                if newest == nil || cursor > newest! { ahead.append("\(object) at \(cursor) > \(newest.map(String.init) ?? "none")") }
            }
            return StoreSnapshot(integrity: integrity, txIds: Set(ids), duplicateTxIds: rows - Set(ids).count, cursorsAhead: ahead)
        }
    }
}
