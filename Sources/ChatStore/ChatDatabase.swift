import Foundation
import GRDB
import SyncCore
import SyncEngine

/// Why a store cannot be opened: one line naming the path and what to do.
public struct StoreError: Error, Equatable, CustomStringConvertible {
    public var path: String
    public var message: String
    public var description: String { "\(path): \(message)" }
}

/// The SQLite chat store (GRDB): messages exactly once, cursors moved in the same
/// transaction as the messages they cover, the learned engine state and settings; other
/// modules keep their own tables beside them as a `SchemaPart` (the profile's world:
/// ProfileWorld). WAL journal, file mode 0600.
public final class SQLiteChatStorage: ChatStorage, MessageSearching {
    public let path: String
    package let db: DatabaseQueue
    /// The schema parts brought up to date in this store (`prepare(_:)`), under its lock.
    var preparedParts: Set<String> = []
    let partsLock = NSLock()
    /// Test hook: fail a commit after its messages are written and before its cursor is.
    public var failBetweenMessagesAndCursor = false

    /// The schema this binary writes. A file whose migrations go beyond it is refused.
    static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE contact (
                    address TEXT PRIMARY KEY NOT NULL,
                    handle TEXT NOT NULL,
                    displayName TEXT NOT NULL,
                    muted INTEGER NOT NULL DEFAULT 0);
                CREATE TABLE message (
                    id INTEGER PRIMARY KEY,
                    txId TEXT NOT NULL UNIQUE,
                    conversation TEXT NOT NULL,
                    direction TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    body TEXT NOT NULL,
                    blockTime INTEGER NOT NULL,
                    receivedAt INTEGER NOT NULL,
                    via TEXT NOT NULL,
                    unread INTEGER NOT NULL DEFAULT 0);
                -- latest N messages of a conversation, and its last activity
                CREATE INDEX message_by_conversation ON message(conversation, blockTime);
                -- unread per conversation
                CREATE INDEX message_unread ON message(conversation) WHERE unread = 1;
                CREATE TABLE syncCursor (
                    object TEXT PRIMARY KEY NOT NULL,
                    lastFetchedBlockTime INTEGER);
                CREATE TABLE engineState (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    pushState TEXT NOT NULL,
                    consecutiveMisses INTEGER NOT NULL,
                    lastReregisterAt INTEGER,
                    lastCatchUpAt INTEGER,
                    tokenStatus TEXT NOT NULL);
                CREATE TABLE setting (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                CREATE TABLE pendingPush (
                    id INTEGER PRIMARY KEY,
                    txId TEXT NOT NULL, conversation TEXT NOT NULL, kind TEXT NOT NULL,
                    body TEXT NOT NULL, blockTime INTEGER NOT NULL, arrivedAt INTEGER NOT NULL);
                """)
            // The profile's world had its three tables here; they are its own part now
            // (`SchemaPart`, ProfileWorld's `world/…`), made if missing when a profile first keeps
            // its world, so a file written before keeps its rows and its history of migrations.
        }
        // Search (issue 15): a full-text index of message bodies (SQLite FTS5), kept by a
        // trigger in the transaction that stores the message. It reads the bodies through a
        // view of the message table (external content), so the text is not stored twice.
        // Each message's conversation is one more token, in its own column (`c` and the
        // address in hex), so that a search in one conversation is an AND of two lists
        // inside the index rather than every hit of a common word filtered afterwards. Tokens are
        // Unicode words (letters, digits and their marks: an Indic word stays whole), case-
        // and diacritic-insensitive; `SearchQuery` cuts and folds them the same way. Messages are never changed or
        // deleted, so an insert trigger is the whole upkeep. A store written before it gets
        // its index built once, when this binary first opens it.
        m.registerMigration("v2-search") { db in
            try db.execute(sql: """
                CREATE VIEW message_text AS
                    SELECT id, CAST(body AS TEXT) AS body, 'c' || hex(conversation) AS conversation FROM message;
                CREATE VIRTUAL TABLE message_search USING fts5(
                    body, conversation, content='message_text', content_rowid='id',
                    tokenize="unicode61 remove_diacritics 2 categories 'L* N* Co M*'");
                CREATE TRIGGER message_search_insert AFTER INSERT ON message BEGIN
                    INSERT INTO message_search(rowid, body, conversation)
                    VALUES (new.id, CAST(new.body AS TEXT), 'c' || hex(new.conversation));
                END;
                INSERT INTO message_search(message_search) VALUES ('rebuild');
                """)
        }
        // The outbox (issue 15 #7): messages written that the network has not taken yet.
        m.registerMigration("v3-outbox") { db in
            try db.execute(sql: """
                CREATE TABLE outbox (
                    position INTEGER PRIMARY KEY,
                    localId TEXT NOT NULL UNIQUE, conversation TEXT NOT NULL, body BLOB NOT NULL,
                    createdAt INTEGER NOT NULL, failures INTEGER NOT NULL);
                """)
        }
        // Counters (issue 16): what the screen and the engine read on every frame and every
        // message — unread per conversation, the badge, last activity, the message count —
        // kept by triggers in the transaction that changes a message, so that no read scans
        // the message table (at 1 000 000 messages, `COUNT(*) … WHERE unread = 1` took 24 ms
        // and the two GROUP BYs at start 100 ms). A store written before it is counted once,
        // when this binary first opens it.
        m.registerMigration("v4-counters") { db in
            try db.execute(sql: """
                CREATE TABLE conversationCounter (
                    conversation TEXT PRIMARY KEY NOT NULL,
                    messages INTEGER NOT NULL,
                    unread INTEGER NOT NULL,
                    lastActivity INTEGER NOT NULL) WITHOUT ROWID;
                INSERT INTO conversationCounter (conversation, messages, unread, lastActivity)
                    SELECT conversation, COUNT(*), SUM(unread), MAX(blockTime) FROM message GROUP BY conversation;
                CREATE TRIGGER conversationCounter_insert AFTER INSERT ON message BEGIN
                    INSERT INTO conversationCounter (conversation, messages, unread, lastActivity)
                    VALUES (new.conversation, 1, new.unread, new.blockTime)
                    ON CONFLICT(conversation) DO UPDATE SET
                        messages = messages + 1,
                        unread = unread + excluded.unread,
                        lastActivity = MAX(lastActivity, excluded.lastActivity);
                END;
                CREATE TRIGGER conversationCounter_read AFTER UPDATE OF unread ON message
                    WHEN new.unread != old.unread BEGIN
                    UPDATE conversationCounter SET unread = unread + new.unread - old.unread
                    WHERE conversation = new.conversation;
                END;
                """)
        }
        return m
    }

    /// Held while this store is the app's profile (`openProfile`); released with the store.
    private var profileLock: ProfileLock?

    /// Opens the profile `name`, whose store is at `path`, for this process alone: the app's
    /// way in. A profile another process holds is refused (`ProfileLock.Held`, naming its pid)
    /// before the database is touched; the lock lasts as long as the returned store.
    public static func openProfile(_ name: String, path: String) throws -> SQLiteChatStorage {
        try prepareDirectory(of: path)
        let lock = try ProfileLock.acquire(profile: name, storePath: path)
        let store = try open(path: path)
        store.profileLock = lock
        return store
    }

    /// Opens (creating if needed) the store at `path`, with mode 0600 and a WAL journal.
    /// No lock: tests, the crash harness and benchmarks may open one file more than once.
    public static func open(path: String) throws -> SQLiteChatStorage {
        let fm = FileManager.default
        let dir = (path as NSString).deletingLastPathComponent
        try prepareDirectory(of: path)
        if !fm.fileExists(atPath: path) {
            guard fm.isWritableFile(atPath: dir.isEmpty ? "." : dir) else {
                throw StoreError(path: dir, message: "the data directory is not writable; fix its permissions, or run with --ephemeral")
            }
            let fd = Foundation.open(path, O_CREAT | O_EXCL | O_WRONLY, 0o600)
            guard fd >= 0 else {
                throw StoreError(path: path, message: "cannot create the store (\(String(cString: strerror(errno)))); check the directory, or run with --ephemeral")
            }
            Foundation.close(fd)
        } else if !fm.isWritableFile(atPath: path) || !fm.isWritableFile(atPath: dir.isEmpty ? "." : dir) {
            throw StoreError(path: path, message: "the store or its directory is not writable; fix the permissions, or run with --ephemeral")
        }
        var config = Configuration()
        config.journalMode = .wal
        config.busyMode = .timeout(5)
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            // A small page cache (SQLite's default is 2 MB a connection): every read the
            // screen makes is a few pages through an index, and the OS caches the file
            // anyway. Keeps the app's memory flat in the history's size (issue 16).
            try db.execute(sql: "PRAGMA cache_size = -512")
        }
        let queue: DatabaseQueue
        do {
            queue = try DatabaseQueue(path: path, configuration: config)
        } catch let e as DatabaseError where e.resultCode == .SQLITE_NOTADB || e.resultCode == .SQLITE_CORRUPT {
            throw notADatabase(path)
        } catch {
            // Opening writes (the WAL and its index): on a full disk that is the whole story.
            if Self.noSpaceLeft(near: path) {
                throw StoreError(path: path, message: "cannot open the store: the disk holding it is full; free some space and start again, or run with --ephemeral")
            }
            throw StoreError(path: path, message: "cannot open the store (\(error)); move it away or use another --profile")
        }
        let checked = try prepare(queue, path: path)
        return SQLiteChatStorage(path: path, queue: queue, checked: checked)
    }

    /// Creates the store's directory (mode 0700) if needed; a file in its place is an error.
    /// True when the filesystem holding `path` has no block left for a normal user.
    static func noSpaceLeft(near path: String) -> Bool {
        var fs = statvfs()
        let dir = (path as NSString).deletingLastPathComponent
        guard statvfs(dir, &fs) == 0 else { return false }
        return fs.f_bavail == 0
    }

    private static func prepareDirectory(of path: String) throws {
        let fm = FileManager.default
        let dir = (path as NSString).deletingLastPathComponent
        var isDirectory: ObjCBool = false
        if !dir.isEmpty, fm.fileExists(atPath: dir, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw StoreError(path: dir, message: "is a file, not the data directory; move it away, or run with --ephemeral")
        }
        if !dir.isEmpty, !fm.fileExists(atPath: dir) {
            do {
                try fm.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw StoreError(path: dir, message: "cannot create the data directory; check its permissions, or run with --ephemeral")
            }
        }
    }

    /// A store in memory (`--ephemeral`, tests, benchmarks): the same schema, queries and
    /// search as a profile, no file.
    public static func inMemory() throws -> SQLiteChatStorage {
        let queue = try DatabaseQueue()
        _ = try prepare(queue, path: ":memory:")
        return SQLiteChatStorage(path: ":memory:", queue: queue, checked: false)
    }

    private static func notADatabase(_ path: String) -> StoreError {
        StoreError(path: path, message: "not a synchat store (corrupt, or another kind of file); move it away, or use another --profile")
    }

    private static func prepare(_ queue: DatabaseQueue, path: String) throws -> Bool {
        do {
            // A migration of the store's own this binary does not know: a newer synchat wrote
            // the file. A part's migrations (`part/…`) are the part's to judge (`prepare(_:)`).
            let applied = try queue.read { db in try migrator.appliedIdentifiers(db) }
            let known = Set(migrator.migrations)
            if let newer = applied.filter({ !$0.contains("/") && !known.contains($0) }).sorted().last {
                throw StoreError(path: path, message: "written by a newer synchat (schema \(newer)); upgrade synchat, or use another --profile")
            }
            try migrator.migrate(queue)
            return try checkIfDue(queue, path: path)
        } catch let e as StoreError {
            throw e
        } catch let e as DatabaseError where e.resultCode == .SQLITE_NOTADB || e.resultCode == .SQLITE_CORRUPT {
            throw notADatabase(path)
        } catch let e as DatabaseError where e.resultCode == .SQLITE_READONLY || e.resultCode == .SQLITE_CANTOPEN {
            throw StoreError(path: path, message: "cannot write the store; fix the permissions, or run with --ephemeral")
        }
    }

    /// How often a store closed cleanly is read through (`PRAGMA quick_check`) at open.
    public static let checkInterval: TimeInterval = 7 * 24 * 3600

    /// Checks the file at open when it is due: always after a session that did not close the
    /// store (a kill, a crash, a power cut: when damage is likely), and otherwise once every
    /// `checkInterval`. `quick_check` reads every page — 260 ms for a 1 000 000-message store,
    /// half of the first frame — so it no longer runs at every start (issue 16). Marks the
    /// store open until `close()`.
    private static func checkIfDue(_ queue: DatabaseQueue, path: String) throws -> Bool {
        guard path != ":memory:" else { return false }
        let now = Date().timeIntervalSince1970
        return try queue.write { db in
            let open = try String.fetchOne(db, sql: "SELECT value FROM setting WHERE key = 'store.open'")
            let checked = try String.fetchOne(db, sql: "SELECT value FROM setting WHERE key = 'store.checkedAt'").flatMap(Double.init)
            let due = open == "1" || checked.map({ now - $0 > checkInterval || $0 > now }) ?? true
            if due {
                let check = try String.fetchOne(db, sql: "PRAGMA quick_check") ?? "?"
                guard check == "ok" else { throw StoreError(path: path, message: "damaged (quick_check: \(check)); move it away, or use another --profile") }
                try db.execute(sql: "INSERT OR REPLACE INTO setting (key, value) VALUES ('store.checkedAt', ?)", arguments: [String(Int(now))])
            }
            try db.execute(sql: "INSERT OR REPLACE INTO setting (key, value) VALUES ('store.open', '1')")
            return due
        }
    }

    /// Whether this store was read through (`quick_check`) when it was opened.
    public let checkedAtOpen: Bool

    private var closed = false

    /// Marks the store closed cleanly, so that the next open need not read it through. The
    /// store stays usable (a later write marks nothing); called at the end of a session and
    /// when the store goes away.
    public func close() {
        guard !closed, path != ":memory:" else { return }
        closed = true
        try? db.write { try $0.execute(sql: "INSERT OR REPLACE INTO setting (key, value) VALUES ('store.open', '0')") }
    }

    /// Lets the store go without marking it closed: what a kill leaves (tests, the crash harness).
    public func abandon() { closed = true }

    deinit { close() }

    private init(path: String, queue: DatabaseQueue, checked: Bool) {
        self.path = path
        self.db = queue
        self.checkedAtOpen = checked
    }

    /// Runs raw SQL (tests and tools only).
    public func execute(_ sql: String) throws {
        try db.write { try $0.execute(sql: sql) }
    }

    /// The first column of a query's rows, as text (tests and tools only).
    public func strings(_ sql: String) throws -> [String] {
        try db.read { try String.fetchAll($0, sql: sql) }
    }

    /// A pragma's value as text (for tests and the bench).
    public func pragma(_ name: String) throws -> String? {
        try db.read { try String.fetchOne($0, sql: "PRAGMA \(name)") }
    }

    /// Moves the WAL's contents into the main file and truncates the WAL.
    public func checkpoint() throws {
        try db.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
    }

    /// SQLite's own verdict on the file.
    public func integrityCheck() throws -> String {
        try db.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") ?? "?" }
    }

    // MARK: - Engine state

    public func loadState() -> PersistedEngineState? {
        try? db.read { db -> PersistedEngineState? in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM engineState WHERE id = 1") else { return nil }
            let settings = try Dictionary(uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT key, value FROM setting").map { ($0["key"] as String, $0["value"] as String) })
            return PersistedEngineState(
                reliability: .init(state: PushState(rawValue: row["pushState"]) ?? .unknown, consecutiveMisses: row["consecutiveMisses"],
                                   lastReregisterAt: (row["lastReregisterAt"] as Int64?).map(Instant.init)),
                gate: .init(lastFinishedAt: (row["lastCatchUpAt"] as Int64?).map(Instant.init), owed: settings["owedCatchUp"].flatMap(Self.owed)),
                mode: settings["mode"].flatMap(NotificationMode.init) ?? .remotePush,
                preview: settings["preview"].flatMap(PreviewMode.init) ?? .message,
                tokenStatus: TokenStatus(rawValue: row["tokenStatus"]) ?? .none)
        } ?? nil
    }

    public func saveState(_ s: PersistedEngineState) throws {
        try db.write { db in
            try db.execute(sql: """
                INSERT INTO engineState (id, pushState, consecutiveMisses, lastReregisterAt, lastCatchUpAt, tokenStatus)
                VALUES (1, ?, ?, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET pushState = excluded.pushState, consecutiveMisses = excluded.consecutiveMisses,
                    lastReregisterAt = excluded.lastReregisterAt, lastCatchUpAt = excluded.lastCatchUpAt, tokenStatus = excluded.tokenStatus
                """, arguments: [s.reliability.state.rawValue, s.reliability.consecutiveMisses,
                                 s.reliability.lastReregisterAt?.milliseconds, s.gate.lastFinishedAt?.milliseconds, s.tokenStatus.rawValue])
            try setSetting(db, "mode", s.mode.rawValue)
            try setSetting(db, "preview", s.preview.rawValue)
            try setSetting(db, "owedCatchUp", s.gate.owed.map { "\($0.kind.rawValue)\($0.forced ? " forced" : "")" } ?? "")
        }
    }

    /// Rule 14's owed catch-up as the setting keeps it: `full`, `targeted forced`, or empty.
    private static func owed(_ text: String) -> CatchUpGate.Owed? {
        let words = text.split(separator: " ")
        guard let first = words.first, let kind = CatchUpGate.SyncKind(rawValue: String(first)) else { return nil }
        return CatchUpGate.Owed(kind: kind, forced: words.dropFirst().first == "forced")
    }

    private func setSetting(_ db: Database, _ key: String, _ value: String) throws {
        try db.execute(sql: "INSERT INTO setting (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                       arguments: [key, value])
    }

    /// A user setting (e.g. the theme) kept with the profile.
    public func setting(_ key: String) -> String? {
        try? db.read { try String.fetchOne($0, sql: "SELECT value FROM setting WHERE key = ?", arguments: [key]) }
    }

    public func setSetting(_ key: String, _ value: String) throws {
        try db.write { try setSetting($0, key, value) }
    }

    // MARK: - Contacts

    public func contacts() -> [Contact] {
        (try? db.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM contact ORDER BY address").map(Self.contact)
        }) ?? []
    }

    package static func contact(_ r: Row) -> Contact {
        Contact(address: Address(r["address"]), handle: r["handle"], displayName: StoredText.read(r, "displayName"), muted: r["muted"])
    }

    public func upsertContact(_ c: Contact) throws {
        try db.write { db in
            try db.execute(sql: """
                INSERT INTO contact (address, handle, displayName, muted) VALUES (?, ?, ?, ?)
                ON CONFLICT(address) DO UPDATE SET handle = excluded.handle, displayName = excluded.displayName, muted = excluded.muted
                """, arguments: [c.address.value, c.handle, StoredText.value(c.displayName), c.muted])
        }
    }

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

    public func unreadCount(in conversation: Address) -> Int {
        (try? db.read { try Int.fetchOne($0, sql: "SELECT unread FROM conversationCounter WHERE conversation = ?", arguments: [conversation.value]) ?? 0 }) ?? 0
    }

    /// Unread counts of every conversation in one query (the conversation list).
    public func unreadCounts() -> [Address: Int] {
        (try? db.read { db in
            var out: [Address: Int] = [:]
            for r in try Row.fetchAll(db, sql: "SELECT conversation, unread FROM conversationCounter WHERE unread > 0") {
                out[Address(r["conversation"])] = r["unread"]
            }
            return out
        }) ?? [:]
    }

    public func totalUnread() -> Int {
        (try? db.read { try Int.fetchOne($0, sql: "SELECT COALESCE(SUM(unread), 0) FROM conversationCounter") ?? 0 }) ?? 0
    }

    public func markRead(_ conversation: Address) throws {
        try db.write { try $0.execute(sql: "UPDATE message SET unread = 0 WHERE conversation = ? AND unread = 1", arguments: [conversation.value]) }
    }

    // MARK: - Pending pushes (rule 12)

    public func pendingPushes() -> [PendingPush] {
        (try? db.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM pendingPush ORDER BY id").map { r in
                PendingPush(message: NetworkMessage(txId: r["txId"], conversation: Address(r["conversation"]), direction: .incoming,
                                                    kind: MessageKind(rawValue: r["kind"]) ?? .contextual, body: StoredText.read(r, "body"),
                                                    blockTime: Instant(milliseconds: r["blockTime"])),
                            arrivedAt: Instant(milliseconds: r["arrivedAt"]))
            }
        }) ?? []
    }

    public func appendPendingPush(_ p: PendingPush) throws {
        try db.write { db in
            try db.execute(sql: "INSERT INTO pendingPush (txId, conversation, kind, body, blockTime, arrivedAt) VALUES (?, ?, ?, ?, ?, ?)",
                           arguments: [p.message.txId, p.message.conversation.value, p.message.kind.rawValue, StoredText.value(p.message.body),
                                       p.message.blockTime.milliseconds, p.arrivedAt.milliseconds])
        }
    }

    public func removePendingPushes() throws {
        try db.write { try $0.execute(sql: "DELETE FROM pendingPush") }
    }

    public func outbox() -> [OutgoingMessage] {
        (try? db.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM outbox ORDER BY position").map { r in
                OutgoingMessage(localId: r["localId"], to: Address(r["conversation"]), body: StoredText.read(r, "body"),
                                createdAt: Instant(milliseconds: r["createdAt"]), failures: r["failures"])
            }
        }) ?? []
    }

    public func saveOutbox(_ messages: [OutgoingMessage]) throws {
        try db.write { db in
            try db.execute(sql: "DELETE FROM outbox")
            for m in messages {
                try db.execute(sql: "INSERT INTO outbox (localId, conversation, body, createdAt, failures) VALUES (?, ?, ?, ?, ?)",
                               arguments: [m.localId, m.to.value, StoredText.value(m.body), m.createdAt.milliseconds, m.failures])
            }
        }
    }

    /// The file's size in bytes (with its WAL).
    public var fileSize: Int64 {
        let fm = FileManager.default
        return [path, path + "-wal"].reduce(Int64(0)) { sum, p in
            sum + ((try? fm.attributesOfItem(atPath: p)[.size] as? Int64) ?? 0)
        }
    }
}

/// Untrusted text (message bodies, display names) as SQLite keeps it: a BLOB of its UTF-8
/// bytes. GRDB binds a Swift string as C text, which ends at the first NUL, and reads TEXT
/// back the same way, so `"before\0after"` came back as `"before"` (issue 11 #8); a BLOB
/// keeps every byte. The columns stay declared TEXT (a BLOB is stored as it is in them), so
/// the schema and its version do not change: rows that older versions wrote as TEXT are
/// read as TEXT, and they hold no NUL (it was cut before they were written).
package enum StoredText {
    package static func value(_ text: String) -> DatabaseValue {
        // An empty BLOB would be bound from a null pointer, which SQLite takes for NULL.
        text.isEmpty ? text.databaseValue : Data(text.utf8).databaseValue
    }

    package static func read(_ row: Row, _ column: String) -> String {
        switch (row[column] as DatabaseValue).storage {
        case .blob(let bytes): return String(decoding: bytes, as: UTF8.self)
        case .string(let text): return text
        default: return ""
        }
    }
}
