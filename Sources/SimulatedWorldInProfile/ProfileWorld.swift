import ChatStore
import GRDB
import SimulatedWorld
import SyncCore

// A profile keeps the simulated world beside the chat, so that a relaunch resumes it. The
// store knows only its own tables; the world knows only `WorldPersistence`. This is where the
// two meet, so that neither imports the other: the world's three tables are a schema part of
// the profile's store, defined, migrated, read and written here.

extension SQLiteChatStorage: WorldPersistence {
    /// The world's tables. `v1` is what the chat store's own first migration made before the
    /// part was the world's: `IF NOT EXISTS`, so a file written then keeps its rows.
    public static let worldSchema = SchemaPart(name: "world", migrations: [
        .init(id: "v1", sql: """
            CREATE TABLE IF NOT EXISTS worldState (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                seed INTEGER NOT NULL, clock INTEGER NOT NULL, tokenStatus TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS worldContact (
                address TEXT PRIMARY KEY NOT NULL, handle TEXT NOT NULL,
                displayName TEXT NOT NULL, muted INTEGER NOT NULL DEFAULT 0);
            CREATE TABLE IF NOT EXISTS worldMessage (
                txId TEXT PRIMARY KEY NOT NULL, conversation TEXT NOT NULL, direction TEXT NOT NULL,
                kind TEXT NOT NULL, body TEXT NOT NULL, blockTime INTEGER NOT NULL);
            """),
    ])

    /// Readies the world's tables for a profile that keeps its world: at launch, so that a file
    /// whose world part a newer synchat wrote is refused there, in one line, not found out at
    /// the first write (`loadWorld` and the saves ready them too).
    public func keepWorld() throws { try prepare(Self.worldSchema) }

    /// Whether this store holds a simulated world, read without migrating anything (a server's
    /// profile is checked this way: it never keeps a world, and gets no world tables).
    public func holdsWorld() -> Bool {
        (try? db.read { db in
            try db.tableExists("worldState") && (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM worldState") ?? 0) > 0
        }) ?? false
    }

    public func loadWorld() throws -> SavedWorld? {
        try prepare(Self.worldSchema)
        return try db.read { db in
            guard let head = try Row.fetchOne(db, sql: "SELECT * FROM worldState WHERE id = 1") else { return nil }
            let contacts = try Row.fetchAll(db, sql: "SELECT * FROM worldContact ORDER BY rowid").map(Self.contact)
            let ledger = try Row.fetchAll(db, sql: "SELECT * FROM worldMessage ORDER BY rowid").map { r in
                NetworkMessage(txId: r["txId"], conversation: Address(r["conversation"]),
                               direction: Direction(rawValue: r["direction"]) ?? .incoming,
                               kind: MessageKind(rawValue: r["kind"]) ?? .contextual, body: StoredText.read(r, "body"),
                               blockTime: Instant(milliseconds: r["blockTime"]))
            }
            return SavedWorld(seed: UInt64(bitPattern: head["seed"]), clock: Instant(milliseconds: head["clock"]),
                              tokenStatus: TokenStatus(rawValue: head["tokenStatus"]) ?? .none, contacts: contacts, ledger: ledger)
        }
    }

    public func saveWorldClock(seed: UInt64, clock: Instant, tokenStatus: TokenStatus) throws {
        try prepare(Self.worldSchema)
        try db.write { db in
            try db.execute(sql: """
                INSERT INTO worldState (id, seed, clock, tokenStatus) VALUES (1, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET seed = excluded.seed, clock = excluded.clock, tokenStatus = excluded.tokenStatus
                """, arguments: [Int64(bitPattern: seed), clock.milliseconds, tokenStatus.rawValue])
        }
    }

    public func saveWorldMessage(_ m: NetworkMessage) throws {
        try prepare(Self.worldSchema)
        try db.write { db in
            try db.execute(sql: "INSERT OR IGNORE INTO worldMessage (txId, conversation, direction, kind, body, blockTime) VALUES (?, ?, ?, ?, ?, ?)",
                           arguments: [m.txId, m.conversation.value, m.direction.rawValue, m.kind.rawValue, StoredText.value(m.body), m.blockTime.milliseconds])
        }
    }

    public func saveWorldContact(_ c: Contact) throws {
        try prepare(Self.worldSchema)
        try db.write { db in
            try db.execute(sql: """
                INSERT INTO worldContact (address, handle, displayName, muted) VALUES (?, ?, ?, ?)
                ON CONFLICT(address) DO UPDATE SET handle = excluded.handle, displayName = excluded.displayName, muted = excluded.muted
                """, arguments: [c.address.value, c.handle, StoredText.value(c.displayName), c.muted])
        }
    }
}
