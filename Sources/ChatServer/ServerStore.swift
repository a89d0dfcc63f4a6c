import ChatStore
import Foundation
import GRDB
import SimulatedWorld
import SyncCore

/// Where `synchat server` keeps its world (`--data DIR`, file `world.sqlite`): every user
/// with the hash of its secret (`SecretHash`; never the secret), each user's simulated contacts
/// (and the other users it muted), every message to or from it, the token, and the
/// clock's anchor on the wall clock. Messages and contacts are written as they happen (the
/// worlds' `WorldPersistence`); the clock and tokens at checkpoints. A restart resumes the
/// same world: the clock goes on from the anchor as if the server had never stopped, every
/// message is indexed again, the secrets still open the same users.
///
/// The folder is the server's alone: made 0700, refused when other users
/// can read or enter it; the database is 0600 (SQLite gives its WAL and shared-memory files
/// the database's mode); and one server at a time holds it (`flock` on `world.sqlite.lock`,
/// as a profile is held).
public final class ServerStore {
    let db: DatabaseQueue
    public let path: String
    private let lock: ProfileLock

    /// Why a data folder cannot be used: one line for the operator.
    public struct Refused: Error, CustomStringConvertible {
        public var description: String
    }

    public init(directory: String) throws {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        if fm.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw Refused(description: "--data \(directory) is not a directory") }
            let mode = ((try? fm.attributesOfItem(atPath: directory))?[.posixPermissions] as? NSNumber)?.intValue ?? 0
            guard mode & 0o077 == 0 else {
                throw Refused(description: "the data directory \(directory) is open to other users (mode \(String(mode, radix: 8))): "
                                + "it holds every user's messages; run chmod 700 \(directory), or choose another --data")
            }
        } else {
            try fm.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        path = (directory as NSString).appendingPathComponent("world.sqlite")
        do { lock = try ProfileLock.acquire(profile: "server", storePath: path) } catch let held as ProfileLock.Held {
            let who = held.holder.map { "another synchat server (pid \($0))" } ?? "another synchat server"
            throw Refused(description: "the data directory \(directory) is in use by \(who); stop it first, or choose another --data")
        }
        // The database and its WAL files are the server's alone, whatever the umask.
        if !fm.fileExists(atPath: path) {
            let fd = Foundation.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd >= 0 { Foundation.close(fd) }
        }
        for file in [path, path + "-wal", path + "-shm"] where fm.fileExists(atPath: file) {
            try fm.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        }
        var config = Configuration()
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        db = try DatabaseQueue(path: path, configuration: config)
        try db.writeWithoutTransaction { try $0.execute(sql: "PRAGMA journal_mode = WAL") }
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-server") { db in
            try db.execute(sql: """
                CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                CREATE TABLE user (name TEXT PRIMARY KEY NOT NULL, secret TEXT NOT NULL, address TEXT NOT NULL,
                                   seed INTEGER NOT NULL, joined INTEGER NOT NULL, token TEXT NOT NULL DEFAULT 'none');
                CREATE TABLE contact (user TEXT NOT NULL, handle TEXT NOT NULL, address TEXT NOT NULL, displayName TEXT NOT NULL,
                                      muted INTEGER NOT NULL, PRIMARY KEY (user, handle));
                CREATE TABLE message (user TEXT NOT NULL, txId TEXT NOT NULL, conversation TEXT NOT NULL, direction TEXT NOT NULL,
                                      kind TEXT NOT NULL, body TEXT NOT NULL, blockTime INTEGER NOT NULL, PRIMARY KEY (user, txId));
                """)
        }
        // A store written by an older version keeps secrets in clear: keep only their hashes.
        migrator.registerMigration("v2-secret-hashes") { db in
            for row in try Row.fetchAll(db, sql: "SELECT name, secret FROM user") {
                let secret: String = row["secret"]
                guard !SecretHash.isHash(secret) else { continue }
                try db.execute(sql: "UPDATE user SET secret = ? WHERE name = ?", arguments: [SecretHash.of(secret), row["name"] as String])
            }
        }
        // An older store has every user as a contact row of every other (a join wrote them
        // all-to-all); the users are one shared list, and a contact row of a user is
        // kept only for a mute.
        migrator.registerMigration("v3-people-shared") { db in
            try db.execute(sql: "DELETE FROM contact WHERE muted = 0 AND address IN (SELECT address FROM user)")
        }
        // A publish's key (`PublishRequest.key`) is kept with the sender's row, in the same
        // transaction: a retry after a restart is answered with the first's publication.
        migrator.registerMigration("v4-publish-keys") { db in
            try db.execute(sql: "ALTER TABLE message ADD COLUMN publishKey TEXT")
        }
        try migrator.migrate(db)
    }

    /// Lets another server have the folder (the lock goes at exit too, however the process ends).
    public func close() { lock.release() }

    // MARK: - The clock

    /// The clock's anchor: the world's instant at a wall-clock instant (Unix ms), and the speed.
    public struct Anchor: Equatable {
        public var virtual: Instant
        public var wallUnixMs: Int64
        public var speed: Double
    }

    /// The clock's anchor, or nil in a new folder. A row that is not three numbers in range
    /// (a speed of 1e308 made the clock overflow and the server trap) is `Refused`, naming it.
    public func anchor() throws -> Anchor? {
        try db.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'anchor'") else { return nil }
            let value: DatabaseValue = row["value"]
            guard case .string(let v) = value.storage else { throw corrupt("meta row 'anchor'", "value is \(Self.kind(value)), expected text") }
            let parts = v.split(separator: " ")
            guard parts.count == 3, let virtual = Int64(parts[0]), let wall = Int64(parts[1]), let speed = Double(parts[2]),
                  virtual >= 0, virtual < Int64(1) << 50, wall >= 0, wall < Int64(1) << 50, speed.isFinite, speed > 0, speed <= Self.maxSpeed else {
                throw corrupt("meta row 'anchor'", "\"\(UntrustedText.visible(String(v.prefix(60))))\" is not a clock (virtual ms, wall ms, speed up to \(Int(Self.maxSpeed)))")
            }
            return Anchor(virtual: Instant(milliseconds: virtual), wallUnixMs: wall, speed: speed)
        }
    }

    /// The fastest clock a saved world may have run at.
    public static let maxSpeed = 100_000.0

    /// A row that cannot be read: the server stops with one line naming the file and the row.
    func corrupt(_ row: String, _ problem: String) -> Refused {
        Refused(description: "\(path) is corrupt: \(row): \(problem); restore it from a backup, or choose another --data")
    }

    static func kind(_ v: DatabaseValue) -> String {
        switch v.storage {
        case .null: return "NULL"
        case .int64: return "an integer"
        case .double: return "a real"
        case .string: return "text"
        case .blob: return "a blob"
        }
    }

    /// Typed reads of one row, each failing with the row named (never GRDB's trap on a
    /// value of the wrong type).
    struct Reader {
        let store: ServerStore
        let row: Row
        let name: String

        func text(_ column: String) throws -> String {
            let v: DatabaseValue = row[column]
            guard case .string(let s) = v.storage else { throw store.corrupt(name, "\(column) is \(ServerStore.kind(v)), expected text") }
            return s
        }

        /// Untrusted text kept byte for byte (`StoredText`: a BLOB of its UTF-8, or TEXT
        /// written before bodies were kept so).
        func storedText(_ column: String) throws -> String {
            let v: DatabaseValue = row[column]
            switch v.storage {
            case .string, .blob: return StoredText.read(row, column)
            default: throw store.corrupt(name, "\(column) is \(ServerStore.kind(v)), expected text")
            }
        }

        func int(_ column: String) throws -> Int64 {
            let v: DatabaseValue = row[column]
            guard case .int64(let n) = v.storage else { throw store.corrupt(name, "\(column) is \(ServerStore.kind(v)), expected an integer") }
            return n
        }
    }

    public func saveAnchor(_ a: Anchor) throws {
        try db.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('anchor', ?)",
                           arguments: ["\(a.virtual.milliseconds) \(a.wallUnixMs) \(a.speed)"])
        }
    }

    // MARK: - Users

    public struct SavedUser {
        public var name: String
        /// `SecretHash.of(secret)`.
        public var secretHash: String
        public var address: Address
        public var seed: UInt64
        public var token: TokenStatus
        public var contacts: [Contact]
        public var ledger: [NetworkMessage]
        /// The keys of the user's last publishes, oldest first, with the txIds they made.
        public var publishKeys: [(key: String, txId: String)] = []
    }

    /// A new user and its own contacts (the simulated ones), in one transaction.
    public func addUser(name: String, secretHash: String, address: Address, seed: UInt64, joined: Instant, contacts: [Contact] = []) throws {
        try db.write { db in
            try db.execute(sql: "INSERT INTO user (name, secret, address, seed, joined) VALUES (?, ?, ?, ?, ?)",
                           arguments: [name, secretHash, address.value, Int64(bitPattern: seed), joined.milliseconds])
            for c in contacts { try UserPersistence.save(c, of: name, in: db) }
        }
    }

    public func saveTokens(_ tokens: [(user: String, status: TokenStatus)]) throws {
        try db.write { db in
            for t in tokens { try db.execute(sql: "UPDATE user SET token = ? WHERE name = ?", arguments: [t.status.rawValue, t.user]) }
        }
    }

    /// Every user, in the order they joined, with its contacts and messages. A row that cannot
    /// be read as what it holds (text in an INTEGER column, an unknown direction) is `Refused`,
    /// naming the table and the row: nothing is dropped without a word, and nothing traps.
    public func users() throws -> [SavedUser] {
        try db.read { db in
            try Row.fetchAll(db, sql: "SELECT rowid AS r, * FROM user ORDER BY joined, rowid").map { row in
                let u = Reader(store: self, row: row, name: "user row \(row["r"] as Int64? ?? 0)")
                let name = try u.text("name")
                let contacts = try Row.fetchAll(db, sql: "SELECT rowid AS r, * FROM contact WHERE user = ? ORDER BY rowid", arguments: [name]).map { row in
                    let c = Reader(store: self, row: row, name: "contact row \(row["r"] as Int64? ?? 0) (of \(name))")
                    return Contact(address: Address(try c.text("address")), handle: try c.text("handle"), displayName: try c.storedText("displayName"),
                                   muted: try c.int("muted") != 0)
                }
                let ledger = try Row.fetchAll(db, sql: "SELECT rowid AS r, * FROM message WHERE user = ? ORDER BY rowid", arguments: [name]).map { row in
                    let m = Reader(store: self, row: row, name: "message row \(row["r"] as Int64? ?? 0) (of \(name))")
                    let d = try m.text("direction"), k = try m.text("kind")
                    guard let direction = Direction(rawValue: d) else { throw corrupt(m.name, "direction \"\(UntrustedText.visible(String(d.prefix(20))))\" is neither incoming nor outgoing") }
                    guard let kind = MessageKind(rawValue: k) else { throw corrupt(m.name, "kind \"\(UntrustedText.visible(String(k.prefix(20))))\" is not a message kind") }
                    return NetworkMessage(txId: try m.text("txId"), conversation: Address(try m.text("conversation")), direction: direction, kind: kind,
                                          body: try m.storedText("body"), blockTime: Instant(milliseconds: try m.int("blockTime")))
                }
                let keys = try Row.fetchAll(db, sql: """
                    SELECT rowid AS r, publishKey, txId FROM message WHERE user = ? AND publishKey IS NOT NULL ORDER BY rowid DESC LIMIT ?
                    """, arguments: [name, Self.keptPublishKeys]).reversed().map { row in
                    let m = Reader(store: self, row: row, name: "message row \(row["r"] as Int64? ?? 0) (of \(name))")
                    return (key: try m.text("publishKey"), txId: try m.text("txId"))
                }
                let token = try u.text("token")
                guard let status = TokenStatus(rawValue: token) else { throw corrupt(u.name, "token \"\(UntrustedText.visible(String(token.prefix(20))))\" is not a token status") }
                return SavedUser(name: name, secretHash: try u.text("secret"), address: Address(try u.text("address")),
                                 seed: UInt64(bitPattern: try u.int("seed")), token: status, contacts: contacts, ledger: ledger,
                                 publishKeys: keys)
            }
        }
    }

    /// Messages of several users written as one transaction: all durable, or none (a publish
    /// and its copy in the recipient's world).
    /// `key`: the publish's key, kept with the first row (the sender's).
    public func saveMessages(_ rows: [(user: String, message: NetworkMessage)], key: String? = nil) throws {
        try db.write { db in
            for (i, (user, m)) in rows.enumerated() { try Self.insert(m, of: user, key: i == 0 ? key : nil, in: db) }
        }
    }

    /// How many publish keys a user's restore brings back (`WorldHost.User.keptPublications`).
    static var keptPublishKeys: Int { WorldHost.User.keptPublications }

    /// One message row. Its body is kept byte for byte (`StoredText`): bound as a Swift string,
    /// text ends at its first NUL, and a confirmed `pay 100\u{0}99 EUR` would come back from a
    /// restart as `pay 100`.
    static func insert(_ m: NetworkMessage, of user: String, key: String? = nil, in db: Database) throws {
        try db.execute(sql: """
            INSERT OR IGNORE INTO message (user, txId, conversation, direction, kind, body, blockTime, publishKey) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [user, m.txId, m.conversation.value, m.direction.rawValue, m.kind.rawValue, StoredText.value(m.body), m.blockTime.milliseconds, key])
    }

    /// One user's world writes into the store.
    public func persistence(of user: String) -> WorldPersistence { UserPersistence(store: self, user: user) }

    final class UserPersistence: WorldPersistence {
        let store: ServerStore
        let user: String
        init(store: ServerStore, user: String) {
            self.store = store
            self.user = user
        }

        func loadWorld() throws -> SavedWorld? { nil }  // the server restores its users itself
        func saveWorldClock(seed: UInt64, clock: Instant, tokenStatus: TokenStatus) throws {}

        func saveWorldMessage(_ m: NetworkMessage) throws {
            try store.db.write { db in try ServerStore.insert(m, of: user, in: db) }
        }

        func saveWorldContact(_ c: Contact) throws {
            try store.db.write { db in try Self.save(c, of: user, in: db) }
        }

        static func save(_ c: Contact, of user: String, in db: Database) throws {
            try db.execute(sql: """
                INSERT INTO contact (user, handle, address, displayName, muted) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (user, handle) DO UPDATE SET displayName = excluded.displayName, muted = excluded.muted
                """, arguments: [user, c.handle, c.address.value, StoredText.value(c.displayName), c.muted ? 1 : 0])
        }
    }
}
