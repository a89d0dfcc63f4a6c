import Foundation
import SyncCore

/// Everything that reaches the sans-IO `Engine`, each handled at an instant
/// (`Engine.handle(_:now:)`). Replies to its effects carry the id the effect gave.
public enum EngineInput {
    // MARK: The user and the app
    /// Cold start of the app process (before the OS makes it active).
    case launched
    /// The user renames a contact (its handle, mute and the rest stay).
    case rename(Address, String)
    /// The user writes to a contact; the engine asks for `.publish`.
    case send(to: Address, text: String)
    case setMuted(Address, Bool)
    case setMode(NotificationMode)
    case setPreview(PreviewMode)
    /// "Sync now": forced, joins a running sync (rules 6, 8).
    case syncNow
    case markRead(Address)
    /// The conversation on screen (nil: none). While the app is in the foreground, an
    /// incoming message of it is read the moment it is stored, so that what the badge counts
    /// does not depend on when a screen got round to showing it.
    case viewing(Address?)
    /// A write of the profile's world failed (it shares the store's disk).
    case worldWriteFailed(Error)

    // MARK: The OS
    case becameActive
    case enteredBackground
    case tokenStatus(TokenStatus)
    /// The network names the user's contacts: those the app does not know are added.
    case contactsKnown([Contact])
    case permission(granted: Bool)
    case refreshGranted(task: Int)
    case refreshExpired(task: Int)

    // MARK: The network, and replies to effects
    /// The reply to `.connect`: the id of the connection being opened.
    case connectionOpened(Int)
    case connected(Int)
    case connectFailed(Int, error: String)
    case disconnected(Int, error: String)
    /// The node notified a tx on connection `id`.
    case realtimeTx(connection: Int, NetworkMessage)
    /// The node answered keepalive `ping`.
    case pingAnswered(ping: Int)
    /// A push reached the running app (an APNs-like `userInfo` JSON object).
    case pushDelivered(Data)
    /// A push reached the notification extension while backgrounded.
    case extensionReceived(Data)
    /// The push service dropped what it held for the device (FCM's "messages deleted").
    case pushMessagesDeleted
    /// The path that brings pushes to the app closed (`open` false: the networked client's relay
    /// socket, its server gone) or opened again: a gap that blames no channel.
    case pushPath(open: Bool)
    case indexerReplied(id: Int, Result<Data, TransportError>)
    case utxoSetReplied(id: Int, Result<[String], TransportError>)
    /// The reply to `.publish`: the message as the network carries it, with what it spent;
    /// or why the network could not take it (it stays in the outbox and is tried again).
    case published(id: Int, Result<Publication, TransportError>)
    /// "Retry now": every failed message of the outbox goes again at once.
    case retrySends
    /// The reply to `.retryWorldWrites`: nil when all of it was written.
    case worldWritesRetried(Error?)
    /// The reply to `.write`: nil when the store wrote it, else why not.
    case written(id: Int, failure: String?)

    // MARK: Time
    /// `Engine.nextDeadline` has come (a spurious one does nothing).
    case deadline

    // MARK: Looking at it
    /// An inspector opened (or closed): while on, the engine sends `.inspection` events.
    case inspect(Bool)
}

/// What the `Engine` wants done. The runner performs each, in order, and hands the replies
/// back as inputs with the same id.
public enum Effect: Equatable, Sendable {
    /// Open a realtime connection and subscribe; reply `.connectionOpened(id)` at once, then
    /// `.connected` / `.connectFailed` when the node answers. `forced`: tear the old socket down.
    case connect(forced: Bool)
    /// Ping the node on `connection`; `.pingAnswered(ping)` if it answers.
    case ping(connection: Int, ping: Int)
    /// Ask the node for the address's UTXO set (the outputs that landed at `since` or later,
    /// or all of them); reply `.utxoSetReplied(id, …)`.
    case requestUtxoSet(id: Int, since: Instant?)
    /// One indexer call (a backend request); reply `.indexerReplied(id, …)`.
    case indexer(id: Int, IndexerCall)
    /// Publish a message; reply `.published(id, …)`.
    case publish(id: Int, to: Address, body: String, key: String)
    case registerToken
    case unregisterToken
    /// Tell the push service not to push for a contact (or to push again).
    case setMuted(Address, Bool)
    case requestBackgroundRefresh(earliest: Instant)
    case cancelBackgroundRefresh
    /// Write again what the profile's world could not write before; reply `.worldWritesRetried`.
    case retryWorldWrites
    /// Write to the store; reply `.written(id, …)`.
    case write(id: Int, StoreWrite)
}

/// A write the engine asks of the store (`Effect.write`); the runner performs it on its
/// `ChatStorage` and replies `.written(id, failure:)`.
public enum StoreWrite: Equatable, Sendable {
    /// Messages, and the cursor that covers them, in one transaction (rule 9).
    case messages([StoredMessage], cursor: CursorMove?)
    case state(PersistedEngineState)
    case contact(Contact)
    case markRead(Address)
    case appendPendingPush(PendingPush)
    case removePendingPushes
    /// The whole outbox, replacing what the store had (a handful of rows at most).
    case outbox([OutgoingMessage])
}

/// A sync object's cursor moved to `cursor` (rule 9).
public struct CursorMove: Equatable, Sendable {
    public var object: SyncObject
    public var cursor: SyncCursor

    public init(object: SyncObject, cursor: SyncCursor) {
        self.object = object
        self.cursor = cursor
    }
}
