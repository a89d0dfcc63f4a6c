import Foundation
import GRDB
import SyncCore

/// What the crash harness checks after each kill (issue: crash safety, proven).
public struct StoreSnapshot: Sendable {
    public var integrity: String
    public var txIds: Set<String>
    /// Rows minus distinct txIds: must be 0.
    public var duplicateTxIds: Int
    /// Cursors ahead of a message they cover that is not stored (must be empty): past the
    /// newest stored message of their object, with a message of the object between the two
    /// that the world's ledger (kept in the same file, written as each message lands) has and
    /// the store does not. A proof ((b): the UTXO set showed nothing missing) moves a cursor
    /// past the newest stored message when nothing landed between, as rule 9 allows; a file
    /// without the world's ledger counts every cursor past its newest message.
    public var cursorsAhead: [String]
}

extension SQLiteChatStorage {
    public func snapshot() throws -> StoreSnapshot {
        let integrity = try integrityCheck()
        return try db.read { db in
            let ids = try String.fetchAll(db, sql: "SELECT txId FROM message")
            let rows = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM message") ?? 0
            var ahead: [String] = []
            let ledger = try db.tableExists("worldMessage")
            for r in try Row.fetchAll(db, sql: "SELECT object, lastFetchedBlockTime FROM syncCursor WHERE lastFetchedBlockTime IS NOT NULL") {
                let object: String = r["object"]
                let cursor: Int64 = r["lastFetchedBlockTime"]
                let parts = object.split(separator: "/").map(String.init)
                // The object's messages, as a condition on a table's columns.
                let of: (filter: String, arguments: StatementArguments)?
                switch parts.first {
                case "contextual" where parts.count == 3:
                    of = ("kind = 'contextual' AND conversation = ? AND direction = ?", [parts[1], parts[2] == "in" ? "incoming" : "outgoing"])
                case "handshakes" where parts.count == 2:
                    of = ("kind = 'handshake' AND direction = ?", [parts[1] == "in" ? "incoming" : "outgoing"])
                case "payments":
                    of = ("kind = 'payment'", [])
                default:
                    of = nil
                }
                let newest = try of.flatMap { try Int64.fetchOne(db, sql: "SELECT MAX(blockTime) FROM message WHERE \($0.filter)", arguments: $0.arguments) }
                guard newest == nil || cursor > newest! else { continue }
                // Past its newest stored message: ahead only if the world has one there the store lacks.
                if let of, ledger {
                    let unstored = try Int.fetchOne(db, sql: """
                        SELECT COUNT(*) FROM worldMessage w WHERE \(of.filter) AND w.blockTime > ? AND w.blockTime <= ?
                        AND NOT EXISTS (SELECT 1 FROM message m WHERE m.txId = w.txId)
                        """, arguments: of.arguments + [newest ?? Int64.min, cursor]) ?? 0
                    if unstored == 0 { continue }
                }
                ahead.append("\(object) at \(cursor) > \(newest.map(String.init) ?? "none")")
            }
            return StoreSnapshot(integrity: integrity, txIds: Set(ids), duplicateTxIds: rows - Set(ids).count, cursorsAhead: ahead)
        }
    }
}
