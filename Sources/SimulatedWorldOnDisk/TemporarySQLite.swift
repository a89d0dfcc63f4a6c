import GRDBSQLite
import SyncCore

/// A private temporary SQLite file, through SQLite's C API (GRDB's own module): SQLite
/// deletes the file when it is closed (an empty file name), and keeps a page cache of the
/// given size, so memory stays flat whatever the file holds.
///
/// Not GRDB's queues: each message of a simulated run passes here several times, and a
/// queue's hop, transaction and statement checks per call made a million-message run ten
/// times slower (measured: 22 s against 2.7 s for 100 000 messages). One transaction stays
/// open and is committed every few thousand writes, with no journal: the file is thrown
/// away with the run, so a crash loses nothing anyone keeps.
final class TemporarySQLite {
    private var db: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    private var writesInTransaction = 0
    private let what: String

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// `what` names the file in errors ("the world's history").
    init(_ what: String, cacheKiB: Int, schema: String) throws {
        self.what = what
        guard sqlite3_open_v2("", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(db)
            db = nil
            throw Failure(description: "cannot open a temporary SQLite file for \(what): \(message)")
        }
        var error: UnsafeMutablePointer<CChar>?
        let sql = """
            PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -\(cacheKiB); PRAGMA temp_store = FILE;
            \(schema)
            BEGIN;
            """
        guard sqlite3_exec(db, sql, nil, nil, &error) == SQLITE_OK else {
            let message = error.map { String(cString: $0) } ?? "?"
            sqlite3_free(error)
            throw Failure(description: "cannot prepare a temporary SQLite file for \(what): \(message)")
        }
    }

    deinit {
        for s in statements.values { sqlite3_finalize(s) }
        sqlite3_close(db)
    }

    /// The file is private and thrown away with the run: a failure here (a full disk) cannot
    /// be put right by anyone, and a run that went on would measure a world it lost.
    private func check(_ code: Int32, _ doing: String) {
        guard code == SQLITE_OK || code == SQLITE_DONE || code == SQLITE_ROW else {
            fatalError("\(what) (a temporary SQLite file): \(doing): \(String(cString: sqlite3_errmsg(db)))")
        }
    }

    /// A prepared statement, kept for the file's life; reset after each use.
    func statement(_ sql: String) -> OpaquePointer {
        if let s = statements[sql] { return s }
        var s: OpaquePointer?
        check(sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &s, nil), "prepare")
        statements[sql] = s!
        return s!
    }

    /// Runs a statement that writes, bound by `bindings`.
    func write(_ sql: String, _ bindings: (OpaquePointer) -> Void) {
        let s = statement(sql)
        bindings(s)
        check(sqlite3_step(s), "write")
        sqlite3_reset(s)
        sqlite3_clear_bindings(s)
        writesInTransaction += 1
        if writesInTransaction >= 4096 {
            writesInTransaction = 0
            check(sqlite3_exec(db, "COMMIT; BEGIN", nil, nil, nil), "commit")
        }
    }

    /// Runs a query bound by `bindings`, giving each row to `row` until it returns false.
    func read(_ sql: String, _ bindings: (OpaquePointer) -> Void = { _ in }, row: (OpaquePointer) -> Bool) {
        let s = statement(sql)
        defer {
            sqlite3_reset(s)
            sqlite3_clear_bindings(s)
        }
        bindings(s)
        while true {
            let code = sqlite3_step(s)
            check(code, "read")
            guard code == SQLITE_ROW, row(s) else { return }
        }
    }

    /// The first row's answer, if any.
    func first<T>(_ sql: String, _ bindings: (OpaquePointer) -> Void = { _ in }, _ value: (OpaquePointer) -> T) -> T? {
        var found: T?
        read(sql, bindings) { s in
            found = value(s)
            return false
        }
        return found
    }

    func text(_ s: OpaquePointer, _ i: Int32, _ value: String) {
        var value = value
        value.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                if let base = chars.baseAddress {
                    _ = sqlite3_bind_text(s, i, base, Int32(chars.count), transient)
                } else {
                    _ = sqlite3_bind_text(s, i, "", 0, transient)  // a null pointer would bind NULL
                }
            }
        }
    }

    func int(_ s: OpaquePointer, _ i: Int32, _ value: Int64) { sqlite3_bind_int64(s, i, value) }

    func column(_ s: OpaquePointer, _ i: Int32) -> String {
        guard let p = sqlite3_column_text(s, i) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: p, count: Int(sqlite3_column_bytes(s, i))), as: UTF8.self)
    }

    func int(_ s: OpaquePointer, _ i: Int32) -> Int64 { sqlite3_column_int64(s, i) }
    func isNull(_ s: OpaquePointer, _ i: Int32) -> Bool { sqlite3_column_type(s, i) == SQLITE_NULL }

    /// Binds a message at parameters `first`…`first + 5`: txId, conversation, direction,
    /// kind, body, blockTime.
    func bind(_ s: OpaquePointer, _ m: NetworkMessage, from first: Int32 = 1) {
        text(s, first, m.txId)
        text(s, first + 1, m.conversation.value)
        text(s, first + 2, m.direction.rawValue)
        text(s, first + 3, m.kind.rawValue)
        text(s, first + 4, m.body)
        int(s, first + 5, m.blockTime.milliseconds)
    }

    /// A message from columns `first`…`first + 5`, in `bind`'s order.
    func message(_ s: OpaquePointer, from first: Int32 = 0) -> NetworkMessage {
        NetworkMessage(txId: column(s, first), conversation: Address(column(s, first + 1)),
                       direction: Direction(rawValue: column(s, first + 2)) ?? .incoming,
                       kind: MessageKind(rawValue: column(s, first + 3)) ?? .contextual, body: column(s, first + 4),
                       blockTime: Instant(milliseconds: int(s, first + 5)))
    }

    /// The columns `message` reads, for a SELECT.
    static let messageColumns = "txId, conversation, direction, kind, body, blockTime"
}

/// SQLite copies the bound text (the C macro `SQLITE_TRANSIENT`, which Swift cannot import).
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
