import SyncCore

/// What the engine may read of the store: local lookups, never a write (writes leave the
/// engine as `.write` effects, performed by the runner on `ChatStorage`). The engine reads
/// only through `StoreView`, which sees these through what is not written yet.
public protocol StoreReading: AnyObject {
    func loadState() -> PersistedEngineState?
    func contacts() -> [Contact]
    func hasMessage(txId: String) -> Bool
    func message(txId: String) -> StoredMessage?
    func cursor(_ object: SyncObject) -> SyncCursor
    /// A page of a conversation's history, oldest first: its latest `limit` messages older
    /// than `before` (the newest when nil), and every other message of the oldest instant
    /// among them, so that a page never splits an instant and the next page can start
    /// strictly before it. Fewer than `limit` means the history's start is in the page.
    func messages(in conversation: Address, before: Instant?, limit: Int) -> [StoredMessage]
    func messageCount() -> Int
    /// The newest block time per conversation, for "most recent conversations".
    func lastActivity() -> [Address: Instant]
    /// Unread counts of every conversation with unread messages: what the engine starts
    /// counting from (`UnreadCounts`).
    func unreadCounts() -> [Address: Int]
    func pendingPushes() -> [PendingPush]
    /// Messages written and not yet taken by the network, oldest first.
    func outbox() -> [OutgoingMessage]
}

/// The engine's one way to read the store: what is stored, seen through the writes asked and
/// not answered yet (`StoreWrites`: a cursor as written) and what failed writes carried
/// (`UnsavedChanges`: kept in memory, so that reads see it and nothing is lost); and the
/// state of a store in trouble — when it is tried again, what the trouble kept.
struct StoreView {
    private let store: any StoreReading
    /// The store's writes in flight, the cursors and state they carry, a retry's batch.
    var writes: StoreWrites
    /// What the store could not write yet.
    var unsaved = UnsavedChanges()
    /// When the writes that failed are tried again, while they are owed.
    var retryAt: Instant?
    /// How many changes the trouble kept in memory, said when it ends.
    var keptBeforeRecovery = 0
    /// The outbox could not be written: written again with the rest of a store retry.
    var outboxUnsaved = false

    /// The view of `store`, and the learned state it saved (nil for a first launch).
    init(_ store: any StoreReading) {
        self.store = store
        self.writes = StoreWrites(lastSaved: store.loadState())
    }

    /// The learned state the store last took: at launch, what an earlier run saved (nil for a
    /// first launch).
    var lastSaved: PersistedEngineState? { writes.lastSaved }
    func contacts() -> [Contact] { store.contacts() }
    func unreadCounts() -> [Address: Int] { store.unreadCounts() }
    func messageCount() -> Int { store.messageCount() }
    func outbox() -> [OutgoingMessage] { store.outbox() }
    func lastActivity() -> [Address: Instant] { store.lastActivity() }
    func page(of conversation: Address, before: Instant?, limit: Int) -> [StoredMessage] {
        store.messages(in: conversation, before: before, limit: limit)
    }

    /// Whether the app has the message: stored, or kept in memory.
    func has(_ txId: String) -> Bool { unsaved.contains(txId: txId) || store.hasMessage(txId: txId) }
    /// Whether the store itself has the message (what a launch finds).
    func isStored(_ txId: String) -> Bool { store.hasMessage(txId: txId) }
    /// A message the app has: kept in memory while the store cannot write, or stored.
    func message(txId: String) -> StoredMessage? { unsaved.message(txId: txId) ?? store.message(txId: txId) }
    /// A sync object's cursor: as written, even if the write has not answered yet.
    func cursor(_ object: SyncObject) -> SyncCursor { writes.cursor(object) ?? store.cursor(object) }
    /// The pushes waiting in the extension's store (rule 12): stored, then kept in memory.
    func pendingPushes() -> [PendingPush] { store.pendingPushes() + unsaved.pendingPushes }
    /// The same, taking those kept in memory: they are stored as messages now.
    mutating func takePendingPushes() -> [PendingPush] { store.pendingPushes() + unsaved.takePendingPushes() }
}
