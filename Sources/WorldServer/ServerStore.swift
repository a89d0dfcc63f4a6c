import Foundation
import GRDB
import SimWorld
import SyncCore

/// Where `synchat server` keeps its world (`--data DIR`, file `world.sqlite`): every user
/// with its secret, each user's contacts and every message to or from it, the token, and the
/// clock's anchor on the wall clock. Messages and contacts are written as they happen (the
/// worlds' `WorldPersistence`); the clock and tokens at checkpoints. A restart resumes the
/// same world: the clock goes on from the anchor as if the server had never stopped, every
/// message is indexed again, the secrets still open the same users.
public final class ServerStore {
    let db: DatabaseQueue
    public let path: String

    public init(directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        path = (directory as NSString).appendingPathComponent("world.sqlite")
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
        try migrator.migrate(db)
    }

    // MARK: - The clock

    /// The clock's anchor: the world's instant at a wall-clock instant (Unix ms), and the speed.
    public struct Anchor: Equatable {
        public var virtual: Instant
        public var wallUnixMs: Int64
        public var speed: Double
    }

    public func anchor() throws -> Anchor? {
        try db.read { db in
            guard let v = try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'anchor'") else { return nil }
            let parts = v.split(separator: " ")
            guard parts.count == 3, let virtual = Int64(parts[0]), let wall = Int64(parts[1]), let speed = Double(parts[2]) else { return nil }
            return Anchor(virtual: Instant(milliseconds: virtual), wallUnixMs: wall, speed: speed)
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
        public var secret: String
        public var address: Address
        public var seed: UInt64
        public var token: TokenStatus
        public var contacts: [Contact]
        public var ledger: [NetworkMessage]
    }

    public func addUser(name: String, secret: String, address: Address, seed: UInt64, joined: Instant) throws {
        try db.write { db in
            try db.execute(sql: "INSERT INTO user (name, secret, address, seed, joined) VALUES (?, ?, ?, ?, ?)",
                           arguments: [name, secret, address.value, Int64(bitPattern: seed), joined.milliseconds])
        }
    }

    public func saveTokens(_ tokens: [(user: String, status: TokenStatus)]) throws {
        try db.write { db in
            for t in tokens { try db.execute(sql: "UPDATE user SET token = ? WHERE name = ?", arguments: [t.status.rawValue, t.user]) }
        }
    }

    /// Every user, in the order they joined, with its contacts and messages.
    public func users() throws -> [SavedUser] {
        try db.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM user ORDER BY joined, rowid").map { row in
                let name: String = row["name"]
                let contacts = try Row.fetchAll(db, sql: "SELECT * FROM contact WHERE user = ? ORDER BY rowid", arguments: [name]).map { c in
                    Contact(address: Address(c["address"]), handle: c["handle"], displayName: c["displayName"], muted: (c["muted"] as Int64) != 0)
                }
                let ledger = try Row.fetchAll(db, sql: "SELECT * FROM message WHERE user = ? ORDER BY rowid", arguments: [name]).compactMap { m -> NetworkMessage? in
                    guard let direction = Direction(rawValue: m["direction"]), let kind = MessageKind(rawValue: m["kind"]) else { return nil }
                    return NetworkMessage(txId: m["txId"], conversation: Address(m["conversation"]), direction: direction, kind: kind,
                                          body: m["body"], blockTime: Instant(milliseconds: m["blockTime"]))
                }
                return SavedUser(name: name, secret: row["secret"], address: Address(row["address"]),
                                 seed: UInt64(bitPattern: row["seed"]), token: TokenStatus(rawValue: row["token"]) ?? .none,
                                 contacts: contacts, ledger: ledger)
            }
        }
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
            try store.db.write { db in
                try db.execute(sql: """
                    INSERT OR IGNORE INTO message (user, txId, conversation, direction, kind, body, blockTime) VALUES (?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [user, m.txId, m.conversation.value, m.direction.rawValue, m.kind.rawValue, m.body, m.blockTime.milliseconds])
            }
        }

        func saveWorldContact(_ c: Contact) throws {
            try store.db.write { db in
                try db.execute(sql: """
                    INSERT INTO contact (user, handle, address, displayName, muted) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (user, handle) DO UPDATE SET displayName = excluded.displayName, muted = excluded.muted
                    """, arguments: [user, c.handle, c.address.value, c.displayName, c.muted ? 1 : 0])
            }
        }
    }
}
