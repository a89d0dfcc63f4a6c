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
/// SimulatedWorldInProfile). WAL journal, file mode 0600.
public final class SQLiteChatStorage: ChatStorage, MessageSearching {
    public let path: String
    package let db: DatabaseQueue
    /// The schema parts brought up to date in this store (`prepare(_:)`), under its lock.
    var preparedParts: Set<String> = []
    let partsLock = NSLock()
    /// Test hook: fail a commit after its messages are written and before its cursor is.
    public var failBetweenMessagesAndCursor = false

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
            // anyway. Keeps the app's memory flat in the history's size.
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
    /// half of the first frame — so it does not run at every start. Marks the
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
    /// The file's size in bytes (with its WAL).
    public var fileSize: Int64 {
        let fm = FileManager.default
        return [path, path + "-wal"].reduce(Int64(0)) { sum, p in
            sum + ((try? fm.attributesOfItem(atPath: p)[.size] as? Int64) ?? 0)
        }
    }
}
