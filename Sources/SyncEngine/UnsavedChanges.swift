import SyncCore

/// What the store could not write yet (a full disk, say), kept in memory and written again
/// later, so that the chat goes on and nothing is lost — neither what is already stored (a
/// failed transaction changes nothing) nor what arrives meanwhile.
///
/// The trouble is one fact with two states: writes land (`trouble == nil`), or they fail
/// (`trouble` says why, since the first failure). The driver logs each change of state
/// once, shows it in the status bar, and retries everything kept here until a retry writes
/// it all.
struct UnsavedChanges {
    /// Messages announced to the app but not stored, in the order they came.
    private(set) var messages: [StoredMessage] = []
    private var ids: Set<String> = []
    /// Messages announced and written, whose write has not answered yet.
    private var inFlight: [String: StoredMessage] = [:]
    /// The newest state of each contact whose write failed.
    private(set) var contacts: [Address: Contact] = [:]
    /// Conversations marked read whose write failed.
    private(set) var reads: Set<Address> = []
    /// Pushes the notification extension could not store (rule 12 processes them all the same).
    private(set) var pendingPushes: [PendingPush] = []

    mutating func contactStored(_ a: Address) { contacts[a] = nil }
    mutating func readStored(_ a: Address) { reads.remove(a) }
    mutating func takePendingPushes() -> [PendingPush] {
        defer { pendingPushes.removeAll() }
        return pendingPushes
    }
    /// Processed pending pushes whose removal failed (harmless if replayed: they are stored).
    var clearPendingPushes = false
    /// Why the store cannot write; nil while writes land.
    private(set) var trouble: String?
    /// Changes kept in memory since the trouble began (the recovery says how many it saved).
    var keptDuringTrouble: Int { keptMessages.count + keptOthers }
    private var keptMessages: Set<String> = []
    private var keptOthers = 0

    var count: Int { messages.count + contacts.count + reads.count + pendingPushes.count }

    /// Asked for every message fetched and every entry of a UTXO set; almost always empty,
    /// and an empty table still hashes the key it is asked for.
    func contains(txId: String) -> Bool { (!ids.isEmpty && ids.contains(txId)) || (!inFlight.isEmpty && inFlight[txId] != nil) }

    func message(txId: String) -> StoredMessage? {
        inFlight[txId] ?? (ids.contains(txId) ? messages.first { $0.txId == txId } : nil)
    }

    /// A message written; its write has not answered.
    mutating func writing(_ m: StoredMessage) {
        inFlight[m.txId] = m
    }

    /// Writes answered: `stored` ones are in the store; the others are kept, to be written again.
    mutating func written(_ txIds: [String], stored: Bool) {
        for id in txIds {
            guard let m = inFlight.removeValue(forKey: id) else { continue }
            if !stored, ids.insert(id).inserted {
                messages.append(m)
                keptMessages.insert(id)
            }
        }
    }

    /// Keeps a message the store could not take. False if it is kept already.
    mutating func keep(_ m: StoredMessage) -> Bool {
        guard ids.insert(m.txId).inserted else { return false }
        messages.append(m)
        keptMessages.insert(m.txId)
        return true
    }

    mutating func keep(_ contact: Contact) {
        contacts[contact.address] = contact
        keptOthers += 1
    }

    mutating func keepRead(_ conversation: Address) {
        reads.insert(conversation)
        keptOthers += 1
    }

    mutating func keep(_ push: PendingPush) {
        pendingPushes.append(push)
        keptOthers += 1
    }

    /// The kept messages were stored.
    mutating func messagesStored() {
        messages.removeAll()
        ids.removeAll()
    }

    /// A write failed. True when this starts a trouble (the change to log).
    mutating func failed(_ error: Error) -> Bool { failed(reason: "\(error)") }

    mutating func failed(reason: String) -> Bool {
        let started = trouble == nil
        trouble = Self.reason(text: reason)
        return started
    }

    /// A retry wrote everything. True when this ends a trouble.
    mutating func recovered() -> Bool {
        defer {
            trouble = nil
            keptMessages.removeAll()
            keptOthers = 0
        }
        return trouble != nil
    }

    /// A short reason for the status bar: SQLite's "database or disk is full" is "disk full".
    static func reason(text: String) -> String {
        if text.contains("disk is full") || text.contains("SQLITE_FULL") { return "disk full" }
        if text.contains("readonly") || text.contains("read-only") { return "read-only" }
        if text.contains("disk I/O") { return "disk I/O error" }
        return String(text.prefix(60))
    }
}
