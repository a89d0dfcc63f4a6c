import Foundation
import GRDB
import SyncCore
import SyncEngine

/// What the engine learned and keeps across launches (rule 5), the settings, the contacts,
/// the pending pushes (rule 12) and the outbox.
extension SQLiteChatStorage {
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
}
