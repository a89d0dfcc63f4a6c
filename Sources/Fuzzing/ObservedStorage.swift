import SyncCore
import SyncEngine

/// A storage that records every cursor write with its instant and forwards everything to an
/// in-memory store, so that the fuzzer can check rule 9 from outside the engine.
public final class ObservedStorage: ChatStorage {
    public let inner = InMemoryChatStorage()
    /// The run's clock; set once the run's scheduler exists.
    public var clock: () -> Instant = { .zero }
    /// Every cursor write in order: when, which object, the value before and after.
    public private(set) var cursorWrites: [(at: Instant, object: SyncObject, before: SyncCursor, after: SyncCursor)] = []

    public init() {}

    public func commit(_ messages: [StoredMessage], cursor: (SyncObject, SyncCursor)?) throws -> [StoredMessage] {
        let before = cursor.map { inner.cursor($0.0) }
        let fresh = try inner.commit(messages, cursor: cursor)
        if let (object, after) = cursor, let before {
            cursorWrites.append((clock(), object, before, after))
        }
        return fresh
    }

    public func loadState() -> PersistedEngineState? { inner.loadState() }
    public func saveState(_ state: PersistedEngineState) throws { try inner.saveState(state) }
    public func contacts() -> [Contact] { inner.contacts() }
    public func upsertContact(_ contact: Contact) throws { try inner.upsertContact(contact) }
    public func hasMessage(txId: String) -> Bool { inner.hasMessage(txId: txId) }
    public func message(txId: String) -> StoredMessage? { inner.message(txId: txId) }
    public func cursor(_ object: SyncObject) -> SyncCursor { inner.cursor(object) }
    public func messages(in conversation: Address) -> [StoredMessage] { inner.messages(in: conversation) }
    public func messages(in conversation: Address, before: Instant?, limit: Int) -> [StoredMessage] {
        inner.messages(in: conversation, before: before, limit: limit)
    }
    public func messageCount() -> Int { inner.messageCount() }
    public func allMessages() -> [StoredMessage] { inner.allMessages() }
    public func lastActivity() -> [Address: Instant] { inner.lastActivity() }
    public func unreadCounts() -> [Address: Int] { inner.unreadCounts() }
    public func markRead(_ conversation: Address) throws { try inner.markRead(conversation) }
    public func pendingPushes() -> [PendingPush] { inner.pendingPushes() }
    public func appendPendingPush(_ push: PendingPush) throws { try inner.appendPendingPush(push) }
    public func removePendingPushes() throws { try inner.removePendingPushes() }
    public func outbox() -> [OutgoingMessage] { inner.outbox() }
    public func saveOutbox(_ messages: [OutgoingMessage]) throws { try inner.saveOutbox(messages) }
}
