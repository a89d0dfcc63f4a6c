import Foundation
import GRDB

/// Tables another module keeps in a store, beside the chat's: their schema and its migrations
/// are that module's, not the store's (the profile's world is one: SimulatedWorldInProfile).
/// Each migration is recorded as `name/id`, so that a store opened by a program that does not
/// know the part leaves its tables alone, and one that knows an older version of the part refuses
/// the file when it is asked to use it (not before).
public struct SchemaPart: Sendable {
    public let name: String
    public let migrations: [Migration]

    public struct Migration: Sendable {
        public let id: String
        public let sql: String
        public init(id: String, sql: String) {
            self.id = id
            self.sql = sql
        }
    }

    public init(name: String, migrations: [Migration]) {
        precondition(!name.isEmpty && !name.contains("/"), "a schema part's name is one word")
        self.name = name
        self.migrations = migrations
    }

    var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        for step in migrations {
            m.registerMigration("\(name)/\(step.id)") { db in try db.execute(sql: step.sql) }
        }
        return m
    }
}

extension SQLiteChatStorage {
    /// Brings `part`'s tables up to date, once for this store (later calls cost a lock). A
    /// migration of the part this binary does not know: a newer synchat wrote the file.
    package func prepare(_ part: SchemaPart) throws {
        // Held through the check and the migration: two threads never both migrate.
        partsLock.lock()
        defer { partsLock.unlock() }
        guard !preparedParts.contains(part.name) else { return }
        let migrator = part.migrator
        let applied = try db.read { db in try migrator.appliedIdentifiers(db) }
        let known = Set(migrator.migrations)
        if let newer = applied.filter({ $0.hasPrefix(part.name + "/") && !known.contains($0) }).sorted().last {
            throw StoreError(path: path, message: "written by a newer synchat (schema \(newer)); upgrade synchat, or use another --profile")
        }
        try migrator.migrate(db)
        preparedParts.insert(part.name)
    }
}
