import SimulatedWorld
import SyncCore
import SyncEngine

/// The simulated world's history in a private temporary SQLite file (`TemporarySQLite`),
/// for runs bigger than memory should hold (`synchat simulate --store disk`). Its answers
/// are `InMemoryWorldHistory`'s, in the same order: a test runs every shipped scenario on
/// both and compares the event logs.
public final class SQLiteWorldHistory: WorldHistory {
    private let file: TemporarySQLite
    /// The wallet's outputs up to this row are spent (oldest first).
    private var spentThrough: Int64 = 0
    public private(set) var messageCount = 0
    private static let columns = TemporarySQLite.messageColumns

    public init() throws {
        file = try TemporarySQLite("the world's history", cacheKiB: 2048, schema: """
            CREATE TABLE message (
                seq INTEGER PRIMARY KEY, txId TEXT NOT NULL, conversation TEXT NOT NULL, direction TEXT NOT NULL,
                kind TEXT NOT NULL, body TEXT NOT NULL, blockTime INTEGER NOT NULL);
            CREATE TABLE delivery (
                txId TEXT PRIMARY KEY NOT NULL, realtime INTEGER NOT NULL DEFAULT 0, owed INTEGER NOT NULL DEFAULT 0,
                pushedAt INTEGER, realtimeAt INTEGER, indexedAt INTEGER) WITHOUT ROWID;
            CREATE TABLE output (seq INTEGER PRIMARY KEY, txId TEXT NOT NULL, landedAt INTEGER NOT NULL);
            CREATE INDEX output_by_time ON output(landedAt, seq);
            -- the indexer: a list per sync object in block-time order, then the order indexed
            CREATE TABLE indexed (
                position INTEGER PRIMARY KEY, txId TEXT NOT NULL, conversation TEXT NOT NULL, direction TEXT NOT NULL,
                kind TEXT NOT NULL, body TEXT NOT NULL, blockTime INTEGER NOT NULL, object TEXT NOT NULL);
            CREATE INDEX indexed_by_object ON indexed(object, blockTime, position);
            CREATE INDEX indexed_by_txid ON indexed(txId, position);
            CREATE TABLE call (
                seq INTEGER PRIMARY KEY, at INTEGER NOT NULL, name TEXT NOT NULL, direction TEXT, address TEXT,
                since INTEGER, page INTEGER, txId TEXT);
            """)
    }

    // MARK: the ledger

    public func record(_ m: NetworkMessage) {
        file.write("INSERT INTO message (\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?)") { file.bind($0, m) }
        messageCount += 1
    }

    public func forEachDelivery(_ body: (NetworkMessage, MessageDelivery) -> Void) {
        file.read("""
            SELECT m.txId, m.conversation, m.direction, m.kind, m.body, m.blockTime, d.realtimeAt, d.pushedAt, d.indexedAt
            FROM message m LEFT JOIN delivery d ON d.txId = m.txId ORDER BY m.seq
            """) { s in
            func instant(_ column: Int32) -> Instant? { file.isNull(s, column) ? nil : Instant(milliseconds: file.int(s, column)) }
            body(file.message(s), MessageDelivery(indexedAt: instant(8), realtimeAt: instant(6), pushedAt: instant(7)))
            return true
        }
    }

    // MARK: the wallet

    public func receiveOutput(_ txId: String, landedAt: Instant) {
        file.write("INSERT INTO output (txId, landedAt) VALUES (?, ?)") { s in
            file.text(s, 1, txId)
            file.int(s, 2, landedAt.milliseconds)
        }
    }

    public func spendOldestOutput() -> String? {
        guard let (seq, txId) = file.first("SELECT seq, txId FROM output WHERE seq > ? ORDER BY seq LIMIT 1", { file.int($0, 1, spentThrough) },
                                           { (file.int($0, 0), file.column($0, 1)) }) else { return nil }
        spentThrough = seq
        return txId
    }

    public func unspentOutputs(since: Instant?) -> [String] {
        var all: [String] = []
        file.read("SELECT txId FROM output WHERE seq > ? AND landedAt >= ? ORDER BY seq", { s in
            file.int(s, 1, spentThrough)
            file.int(s, 2, since?.milliseconds ?? .min)
        }) { s in
            all.append(file.column(s, 0))
            return true
        }
        return all
    }

    // MARK: the indexer

    public func index(_ m: NetworkMessage, at: Instant) {
        file.write("INSERT INTO delivery (txId, indexedAt) VALUES (?1, ?2) ON CONFLICT (txId) DO UPDATE SET indexedAt = coalesce(indexedAt, ?2)") { s in
            file.text(s, 1, m.txId)
            file.int(s, 2, at.milliseconds)
        }
        file.write("INSERT INTO indexed (\(Self.columns), object) VALUES (?, ?, ?, ?, ?, ?, ?)") { s in
            file.bind(s, m)
            file.text(s, 7, SyncObject(holding: m).description)
        }
    }

    public var indexedCount: Int { file.first("SELECT COUNT(DISTINCT txId) FROM indexed") { Int(file.int($0, 0)) } ?? 0 }

    public func indexed(_ object: SyncObject, since: Instant, offset: Int, limit: Int?) -> (messages: [NetworkMessage], more: Bool) {
        var found: [NetworkMessage] = []
        file.read("""
            SELECT \(Self.columns) FROM indexed WHERE object = ? AND blockTime >= ? ORDER BY blockTime, position LIMIT ? OFFSET ?
            """, { s in
            file.text(s, 1, object.description)
            file.int(s, 2, since.milliseconds)
            file.int(s, 3, limit.map { Int64($0) + 1 } ?? -1)  // one more: are there more?
            file.int(s, 4, Int64(offset))
        }) { s in
            found.append(file.message(s))
            return true
        }
        if let limit, found.count > limit {
            found.removeLast()
            return (found, true)
        }
        return (found, false)
    }

    public func indexedIncoming(_ object: SyncObject, after: Instant, through: Instant) -> Int {
        let sql = "SELECT COUNT(DISTINCT txId) FROM indexed WHERE object = ? AND blockTime > ? AND blockTime <= ? AND direction = ?"
        return file.first(sql, { s in
            file.text(s, 1, object.description)
            file.int(s, 2, after.milliseconds)
            file.int(s, 3, through.milliseconds)
            file.text(s, 4, Direction.incoming.rawValue)
        }) { Int(file.int($0, 0)) } ?? 0
    }

    public func indexedMessage(txId: String) -> NetworkMessage? {
        file.first("SELECT \(Self.columns) FROM indexed WHERE txId = ? ORDER BY position DESC LIMIT 1", { file.text($0, 1, txId) }) {
            file.message($0)
        }
    }

    public func recordCall(_ call: IndexerCall, at: Instant) {
        file.write("INSERT INTO call (at, name, direction, address, since, page, txId) VALUES (?, ?, ?, ?, ?, ?, ?)") { s in
            file.int(s, 1, at.milliseconds)
            switch call {
            case .handshakes(let d, let since, let page):
                file.text(s, 2, "handshakes"); file.text(s, 3, d.rawValue); file.int(s, 5, since.milliseconds); file.int(s, 6, Int64(page))
            case .contextual(let a, let d, let since, let page):
                file.text(s, 2, "contextual"); file.text(s, 3, d.rawValue); file.text(s, 4, a.value); file.int(s, 5, since.milliseconds)
                file.int(s, 6, Int64(page))
            case .payments(let since, let page):
                file.text(s, 2, "payments"); file.int(s, 5, since.milliseconds); file.int(s, 6, Int64(page))
            case .messageById(let id):
                file.text(s, 2, "messageById"); file.text(s, 7, id)
            case .tip:
                file.text(s, 2, "tip")
            case .tipCounting(let after, let through):
                file.text(s, 2, "tipCounting"); file.int(s, 5, after.milliseconds); file.int(s, 6, through.milliseconds)
            }
        }
    }

    public var calls: [(at: Instant, call: IndexerCall)] {
        var all: [(at: Instant, call: IndexerCall)] = []
        file.read("SELECT at, name, direction, address, since, page, txId FROM call ORDER BY seq") { s in
            let direction = Direction(rawValue: file.column(s, 2)) ?? .incoming
            let since = Instant(milliseconds: file.int(s, 4))
            let call: IndexerCall
            switch file.column(s, 1) {
            case "handshakes": call = .handshakes(direction, since: since, page: Int(file.int(s, 5)))
            case "contextual": call = .contextual(Address(file.column(s, 3)), direction, since: since, page: Int(file.int(s, 5)))
            case "payments": call = .payments(since: since, page: Int(file.int(s, 5)))
            case "messageById": call = .messageById(file.column(s, 6))
            case "tipCounting": call = .tipCounting(after: since, through: Instant(milliseconds: file.int(s, 5)))
            default: call = .tip
            }
            all.append((Instant(milliseconds: file.int(s, 0)), call))
            return true
        }
        return all
    }

    // MARK: delivery

    public func markRealtimeDelivered(_ txId: String, at: Instant) {
        file.write("""
            INSERT INTO delivery (txId, realtime, realtimeAt) VALUES (?1, 1, ?2)
            ON CONFLICT (txId) DO UPDATE SET realtime = 1, realtimeAt = coalesce(realtimeAt, ?2)
            """) { s in
            file.text(s, 1, txId)
            file.int(s, 2, at.milliseconds)
        }
    }

    public func realtimeDelivered(_ txId: String) -> Bool {
        file.first("SELECT realtime FROM delivery WHERE txId = ?", { file.text($0, 1, txId) }) { file.int($0, 0) == 1 } ?? false
    }

    public var realtimeDeliveredCount: Int {
        file.first("SELECT COUNT(*) FROM delivery WHERE realtime = 1") { Int(file.int($0, 0)) } ?? 0
    }

    public func markPushOwed(_ txId: String) {
        file.write("INSERT INTO delivery (txId, owed) VALUES (?, 1) ON CONFLICT (txId) DO UPDATE SET owed = 1") { file.text($0, 1, txId) }
    }

    public var owedPushes: [String] {
        var all: [String] = []
        file.read("SELECT txId FROM delivery WHERE owed = 1") { s in
            all.append(file.column(s, 0))
            return true
        }
        return all
    }

    public func markPushDelivered(_ txId: String, at: Instant) {
        file.write("INSERT INTO delivery (txId, pushedAt) VALUES (?1, ?2) ON CONFLICT (txId) DO UPDATE SET pushedAt = ?2") { s in
            file.text(s, 1, txId)
            file.int(s, 2, at.milliseconds)
        }
    }

    public func pushDeliveredAt(_ txId: String) -> Instant? {
        file.first("SELECT pushedAt FROM delivery WHERE txId = ? AND pushedAt IS NOT NULL", { file.text($0, 1, txId) }) {
            Instant(milliseconds: file.int($0, 0))
        }
    }
}

/// The simulated client's message rows in a private temporary SQLite file, for
/// `InMemoryChatStorage` in runs bigger than memory (`simulate --store disk`): the same
/// answers as `InMemoryMessageRows`, in the same order.
public final class SQLiteMessageRows: StoredMessageRows {
    private let file: TemporarySQLite
    public private(set) var count = 0
    private static let columns = TemporarySQLite.messageColumns + ", receivedAt, via"

    public init() throws {
        file = try TemporarySQLite("the client's messages", cacheKiB: 1024, schema: """
            CREATE TABLE message (
                seq INTEGER PRIMARY KEY, txId TEXT NOT NULL UNIQUE, conversation TEXT NOT NULL, direction TEXT NOT NULL,
                kind TEXT NOT NULL, body TEXT NOT NULL, blockTime INTEGER NOT NULL, receivedAt INTEGER NOT NULL, via TEXT NOT NULL);
            CREATE INDEX message_by_conversation ON message(conversation, blockTime, seq);
            """)
    }

    public func insert(_ m: StoredMessage) -> Bool {
        guard !contains(txId: m.txId) else { return false }
        file.write("INSERT INTO message (\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)") { s in
            file.bind(s, m.message)
            file.int(s, 7, m.receivedAt.milliseconds)
            file.text(s, 8, m.via.rawValue)
        }
        count += 1
        return true
    }

    private func stored(_ s: OpaquePointer) -> StoredMessage {
        StoredMessage(message: file.message(s), receivedAt: Instant(milliseconds: file.int(s, 6)),
                      via: Channel(rawValue: file.column(s, 7)) ?? .fetch)
    }

    public func message(txId: String) -> StoredMessage? {
        file.first("SELECT \(Self.columns) FROM message WHERE txId = ?", { file.text($0, 1, txId) }) { stored($0) }
    }

    public func contains(txId: String) -> Bool {
        file.first("SELECT 1 FROM message WHERE txId = ?", { file.text($0, 1, txId) }) { _ in true } ?? false
    }

    private func all(_ sql: String, _ bindings: (OpaquePointer) -> Void = { _ in }) -> [StoredMessage] {
        var found: [StoredMessage] = []
        file.read(sql, bindings) { s in
            found.append(stored(s))
            return true
        }
        return found
    }

    public func all() -> [StoredMessage] { all("SELECT \(Self.columns) FROM message ORDER BY seq") }

    public func messages(in conversation: Address) -> [StoredMessage] {
        all("SELECT \(Self.columns) FROM message WHERE conversation = ? ORDER BY seq") { file.text($0, 1, conversation.value) }
    }

    public func messages(in conversation: Address, before: Instant?, limit: Int) -> [StoredMessage] {
        let end = before?.milliseconds ?? Int64.max
        // The oldest block time among the latest `limit`: the page takes all of that instant.
        let boundary = limit > 0 ? file.first("""
            SELECT blockTime FROM message WHERE conversation = ? AND blockTime < ? ORDER BY blockTime DESC, seq DESC LIMIT 1 OFFSET ?
            """, { s in
            file.text(s, 1, conversation.value)
            file.int(s, 2, end)
            file.int(s, 3, Int64(limit))  // the (limit + 1)-th newest exists: there is more than a page
        }) { file.int($0, 0) } : nil
        guard boundary != nil else {
            return all("SELECT \(Self.columns) FROM message WHERE conversation = ? AND blockTime < ? ORDER BY blockTime, seq") { s in
                file.text(s, 1, conversation.value)
                file.int(s, 2, end)
            }
        }
        return all("""
            SELECT \(Self.columns) FROM message WHERE conversation = ? AND blockTime < ? AND blockTime >= (
                SELECT blockTime FROM message WHERE conversation = ?1 AND blockTime < ?2 ORDER BY blockTime DESC, seq DESC LIMIT 1 OFFSET ?3)
            ORDER BY blockTime, seq
            """) { s in
            file.text(s, 1, conversation.value)
            file.int(s, 2, end)
            file.int(s, 3, Int64(limit - 1))
        }
    }

    public func newestFirst(_ body: (StoredMessage) -> Bool) {
        file.read("SELECT \(Self.columns) FROM message ORDER BY seq DESC") { body(stored($0)) }
    }

    /// Through the txId index, without reading the rows.
    public func duplicateCount() -> Int {
        file.first("SELECT COUNT(*) - COUNT(DISTINCT txId) FROM message") { Int(file.int($0, 0)) } ?? 0
    }
}
