import SyncCore

/// The engine state that survives restarts (docs/spec.md rule 5).
public struct PersistedEngineState: Hashable, Sendable {
    public var reliability: PushReliability.Persisted
    public var gate: CatchUpGate.Persisted
    public var mode: NotificationMode
    public var preview: PreviewMode
    /// The last token status the app was told: without it a restart would read "no token",
    /// call push disabled (rule 1) and forget what it had learned.
    public var tokenStatus: TokenStatus

    public init(reliability: PushReliability.Persisted = .init(), gate: CatchUpGate.Persisted = .init(),
                mode: NotificationMode = .remotePush, preview: PreviewMode = .message, tokenStatus: TokenStatus = .none) {
        self.reliability = reliability
        self.gate = gate
        self.mode = mode
        self.preview = preview
        self.tokenStatus = tokenStatus
    }
}

/// A push the notification extension stored while the app was backgrounded (rule 12).
public struct PendingPush: Hashable, Sendable {
    public var message: NetworkMessage
    public var arrivedAt: Instant

    public init(message: NetworkMessage, arrivedAt: Instant) {
        self.message = message
        self.arrivedAt = arrivedAt
    }
}

public struct StorageError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Full-text search of the stored messages: a read for screens, not the engine's.
public protocol MessageSearching: AnyObject {
    /// Messages whose words start with every term of `query` (see `SearchQuery`), in one
    /// conversation or in all, the newest first, at most `limit`.
    func search(_ query: SearchQuery, in conversation: Address?, limit: Int) -> [StoredMessage]
}

/// The persistence port: messages, cursors, contacts, learned state; its reads are the
/// engine's (`StoreReading`), the rest is the runner's writes and the screens' reads.
/// Implementations must make `commit` atomic: the messages and the cursor that covers them
/// land together or not at all (rule 9), and a txId is stored at most once, keeping the
/// first channel.
public protocol ChatStorage: StoreReading {
    func saveState(_ state: PersistedEngineState) throws
    func upsertContact(_ contact: Contact) throws
    /// Stores the messages not yet stored and sets `cursor`, atomically. Returns the messages
    /// that were new, in the order given.
    func commit(_ messages: [StoredMessage], cursor: (SyncObject, SyncCursor)?) throws -> [StoredMessage]
    func messages(in conversation: Address) -> [StoredMessage]
    /// Every stored message, in storage order.
    func allMessages() -> [StoredMessage]
    /// Rows whose txId an earlier row already has (the measure "duplicates", docs/simulate.md): 0 for
    /// a store that keeps its promise. A store on disk counts them without reading every row.
    func duplicateCount() -> Int
    func markRead(_ conversation: Address) throws
    func appendPendingPush(_ push: PendingPush) throws
    func removePendingPushes() throws
    /// Replaces the outbox.
    func saveOutbox(_ messages: [OutgoingMessage]) throws
}

extension ChatStorage {
    public func duplicateCount() -> Int {
        var ids = Set<String>()
        return allMessages().reduce(0) { $0 + (ids.insert($1.txId).inserted ? 0 : 1) }
    }
}

/// Where `InMemoryChatStorage` keeps its message rows: in memory (`InMemoryMessageRows`), or
/// in a temporary SQLite file for a run bigger than memory (`simulate --store disk`).
/// Either answers the same, in the same order.
public protocol StoredMessageRows: AnyObject {
    /// Stores `m` unless its txId is stored; true when it was new.
    func insert(_ m: StoredMessage) -> Bool
    func message(txId: String) -> StoredMessage?
    /// Whether a row has `txId`, without reading it: the engine asks for every entry of a
    /// UTXO set, which grows with the history.
    func contains(txId: String) -> Bool
    var count: Int { get }
    /// Every row, in storage order.
    func all() -> [StoredMessage]
    /// A conversation's rows, in storage order.
    func messages(in conversation: Address) -> [StoredMessage]
    /// See `ChatStorage.messages(in:before:limit:)`: block-time order, then storage order.
    func messages(in conversation: Address, before: Instant?, limit: Int) -> [StoredMessage]
    /// The rows newest stored first, until `body` returns false.
    func newestFirst(_ body: (StoredMessage) -> Bool)
    /// Rows whose txId an earlier row has (see `ChatStorage.duplicateCount`).
    func duplicateCount() -> Int
}

/// Message rows in memory.
public final class InMemoryMessageRows: StoredMessageRows {
    private var byTxId: [String: Int] = [:]
    private var ordered: [StoredMessage] = []
    private var byConversation: [Address: [Int]] = [:]

    public init() {}

    /// Room for about `messages` rows, made at once (see `InMemoryWorldHistory.reserveCapacity`).
    public func reserveCapacity(_ messages: Int) {
        byTxId.reserveCapacity(messages)
        ordered.reserveCapacity(messages)
    }

    public func insert(_ m: StoredMessage) -> Bool {
        guard byTxId[m.txId] == nil else { return false }
        byTxId[m.txId] = ordered.count
        byConversation[m.message.conversation, default: []].append(ordered.count)
        ordered.append(m)
        return true
    }

    public func message(txId: String) -> StoredMessage? { byTxId[txId].map { ordered[$0] } }
    public func contains(txId: String) -> Bool { byTxId[txId] != nil }
    public var count: Int { ordered.count }
    public func all() -> [StoredMessage] { ordered }

    public func messages(in conversation: Address) -> [StoredMessage] {
        (byConversation[conversation] ?? []).map { ordered[$0] }
    }

    public func messages(in conversation: Address, before: Instant?, limit: Int) -> [StoredMessage] {
        // Block-time order, then storage order, as SQLite's `ORDER BY blockTime, id`.
        let older = (byConversation[conversation] ?? []).filter { before == nil || ordered[$0].message.blockTime < before! }
            .sorted { (ordered[$0].message.blockTime, $0) < (ordered[$1].message.blockTime, $1) }
        guard older.count > limit, limit > 0 else { return older.map { ordered[$0] } }
        let boundary = ordered[older[older.count - limit]].message.blockTime
        return older.filter { ordered[$0].message.blockTime >= boundary }.map { ordered[$0] }
    }

    public func newestFirst(_ body: (StoredMessage) -> Bool) {
        for m in ordered.reversed() where !body(m) { return }
    }

    /// The rows less the txIds they hold.
    public func duplicateCount() -> Int { ordered.count - byTxId.count }
}

/// The in-memory store: for `simulate` runs and `--ephemeral`. A reference type, so that an
/// engine restarted on the same instance finds everything the previous one stored. Its
/// message rows are in memory unless given (`StoredMessageRows`); the rest (learned state,
/// cursors, counters, pending pushes, the outbox) is small whatever the history.
public final class InMemoryChatStorage: ChatStorage, MessageSearching {
    private var state: PersistedEngineState?
    private var contactList: [Contact] = []
    private let rows: StoredMessageRows
    private var cursors: [SyncObject: SyncCursor] = [:]
    private var unread: [Address: Int] = [:]
    private var activity: [Address: Instant] = [:]
    private var pending: [PendingPush] = []
    /// Test hook: a commit for which this returns true fails before writing anything.
    public var failCommit: ((_ messages: [StoredMessage], _ cursor: SyncObject?) -> Bool)?

    public init(rows: StoredMessageRows = InMemoryMessageRows()) { self.rows = rows }

    /// Room for about `messages` rows when they are kept in memory.
    public func reserveCapacity(_ messages: Int) { (rows as? InMemoryMessageRows)?.reserveCapacity(messages) }

    public func loadState() -> PersistedEngineState? { state }
    public func saveState(_ state: PersistedEngineState) throws { self.state = state }

    public func contacts() -> [Contact] { contactList }

    public func upsertContact(_ contact: Contact) throws {
        if let i = contactList.firstIndex(where: { $0.address == contact.address }) {
            contactList[i] = contact
        } else {
            contactList.append(contact)
        }
    }

    public func hasMessage(txId: String) -> Bool { rows.contains(txId: txId) }

    public func message(txId: String) -> StoredMessage? { rows.message(txId: txId) }

    public func commit(_ messages: [StoredMessage], cursor: (SyncObject, SyncCursor)?) throws -> [StoredMessage] {
        if let failCommit, failCommit(messages, cursor?.0) {
            throw StorageError("simulated storage failure")
        }
        var fresh: [StoredMessage] = []
        for m in messages where rows.insert(m) {
            if m.message.direction == .incoming { unread[m.message.conversation, default: 0] += 1 }
            activity[m.message.conversation] = max(activity[m.message.conversation] ?? m.message.blockTime, m.message.blockTime)
            fresh.append(m)
        }
        if let (object, value) = cursor { cursors[object] = value }
        return fresh
    }

    public func cursor(_ object: SyncObject) -> SyncCursor { cursors[object] ?? SyncCursor() }

    public func messages(in conversation: Address) -> [StoredMessage] { rows.messages(in: conversation) }

    public func messages(in conversation: Address, before: Instant?, limit: Int) -> [StoredMessage] {
        rows.messages(in: conversation, before: before, limit: limit)
    }

    public func messageCount() -> Int { rows.count }
    public func allMessages() -> [StoredMessage] { rows.all() }
    public func duplicateCount() -> Int { rows.duplicateCount() }

    public func lastActivity() -> [Address: Instant] { activity }

    public func unreadCounts() -> [Address: Int] { unread.filter { $0.value > 0 } }
    public func markRead(_ conversation: Address) throws { unread[conversation] = 0 }

    public func pendingPushes() -> [PendingPush] { pending }
    public func appendPendingPush(_ push: PendingPush) throws { pending.append(push) }
    public func removePendingPushes() throws { pending.removeAll() }
    private var outboxRows: [OutgoingMessage] = []
    public func outbox() -> [OutgoingMessage] { outboxRows }
    public func saveOutbox(_ messages: [OutgoingMessage]) throws { outboxRows = messages }

    /// A scan of every message: the same answers as the SQLite index, for tests and tools.
    public func search(_ query: SearchQuery, in conversation: Address?, limit: Int) -> [StoredMessage] {
        var hits: [StoredMessage] = []
        if limit > 0 {
            rows.newestFirst { m in
                if conversation == nil || m.message.conversation == conversation, query.matches(m.message.body) { hits.append(m) }
                return hits.count < limit
            }
        }
        return hits.sorted { ($0.message.blockTime, $0.message.txId) > ($1.message.blockTime, $1.message.txId) }
    }
}

extension ChatStorage {
    /// Carries out one write the engine asked for (`Effect.write`): the one place a
    /// `StoreWrite` becomes a call of the store, for the runner and the tests alike.
    public func apply(_ write: StoreWrite) throws {
        switch write {
        case .messages(let messages, let cursor): _ = try commit(messages, cursor: cursor.map { ($0.object, $0.cursor) })
        case .state(let state): try saveState(state)
        case .contact(let c): try upsertContact(c)
        case .markRead(let a): try markRead(a)
        case .appendPendingPush(let p): try appendPendingPush(p)
        case .removePendingPushes: try removePendingPushes()
        case .outbox(let messages): try saveOutbox(messages)
        }
    }
}
