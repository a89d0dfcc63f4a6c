// The domain of docs/spec.md#terms: contacts, messages and the channels that carry them.

/// A network address (a contact's, or the user's own).
public struct Address: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var value: String
    public init(_ value: String) { self.value = value }
    public static func < (a: Address, b: Address) -> Bool { a.value < b.value }
    public var description: String { value }
}

public enum MessageKind: String, Sendable, CaseIterable, Codable {
    case contextual, handshake, payment
}

public enum Direction: String, Sendable, Codable {
    case incoming, outgoing
}

/// The channel that first brought a message to the client. `sent` marks the user's own
/// outgoing messages, stored when they are published.
public enum Channel: String, Sendable, CaseIterable, Codable {
    case realtime, push, fetch, background, sent
}

/// A contact is also a conversation (docs/spec.md#terms).
public struct Contact: Hashable, Sendable {
    public var address: Address
    public var handle: String
    public var displayName: String
    public var muted: Bool

    public init(address: Address, handle: String, displayName: String, muted: Bool = false) {
        self.address = address
        self.handle = handle
        self.displayName = displayName
        self.muted = muted
    }
}

/// A message as the network knows it: what any channel can carry.
public struct NetworkMessage: Hashable, Sendable {
    public var txId: String
    public var conversation: Address
    public var direction: Direction
    public var kind: MessageKind
    public var body: String
    public var blockTime: Instant

    public init(txId: String, conversation: Address, direction: Direction, kind: MessageKind, body: String, blockTime: Instant) {
        self.txId = txId
        self.conversation = conversation
        self.direction = direction
        self.kind = kind
        self.body = body
        self.blockTime = blockTime
    }
}

/// A message as the client stores it: the network message plus when and how it arrived.
public struct StoredMessage: Hashable, Sendable {
    public var message: NetworkMessage
    public var receivedAt: Instant
    public var via: Channel

    public init(message: NetworkMessage, receivedAt: Instant, via: Channel) {
        self.message = message
        self.receivedAt = receivedAt
        self.via = via
    }

    public var txId: String { message.txId }
}

/// docs/spec.md rule 15.
public enum NotificationMode: String, Sendable, CaseIterable, Codable {
    case remotePush = "remote-push"
    case backgroundFetch = "background-fetch"
    case off
}

public enum PreviewMode: String, Sendable, CaseIterable, Codable {
    case message, contact, hidden
}

/// The push token's lifecycle (docs/spec.md#terms): `new → registered → active`, and `expired` / `invalid`.
/// `none` means no token has been requested yet.
public enum TokenStatus: String, Sendable, CaseIterable, Codable {
    case none, new, registered, active, expired, invalid
}

/// docs/spec.md "Push reliability".
public enum PushState: String, Sendable, CaseIterable, Codable {
    case disabled, unknown, reliable, unreliable
}

/// What asked for a catch-up sync (docs/spec.md#catch-up-gate). `poll` is the fallback poller of rule 13,
/// `trailing` adaptive's improvement (c), which the spec describes but does not name, and
/// `retry` the second try of a catch-up that failed.
public enum CatchUpTrigger: String, Sendable, CaseIterable, Codable {
    case appActive = "app-active"
    case subscriptionRestart = "subscription-restart"
    case rpcRestored = "rpc-restored"
    case pushUnreliable = "push-unreliable"
    case manual
    case poll
    /// Improvement (c): the catch-up a debounced foreground trigger left for later.
    case trailing
    /// A catch-up that failed in the foreground, tried again (see `CatchUpGate`).
    case retry
    /// Improvement (e): the indexer's tip showed what push has not brought while realtime is
    /// not live; a targeted sync of the objects that moved.
    case pushCheck = "push-check"
    /// Improvement (h): the closing look's tips showed what push did not bring in a realtime
    /// outage it was trusted to cover; a targeted sync of the objects short.
    case closingLook = "closing-look"
    /// The push service dropped notifications it held (FCM's "messages deleted"): a full,
    /// forced catch-up, as the service's documentation asks.
    case messagesDeleted = "messages-deleted"
    /// Rule 14: the sync of a background refresh the OS granted. It never asks the gate: it
    /// runs, or is skipped, by the refresh's own rule.
    case backgroundRefresh = "background-refresh"
}

public enum Lifecycle: String, Sendable, Codable {
    /// Launched but not yet foregrounded (rule 10: the first foreground forces nothing).
    case launched
    case foreground
    case background
}

/// The largest message body the client writes (UTF-8 bytes). The network's documents carry
/// at most 64 KiB per string; a body well under that leaves room for escaping and for a
/// push's preview, and keeps the compose line small enough to edit at once.
public enum MessageLimits {
    public static let maxBodyBytes = 16 * 1024
    /// The most a client reads of one HTTP answer (docs/server.md#what-the-server-promises): a
    /// page of the indexer holds at most `conversationPageSize` messages (25 payments), each at
    /// most 16 KiB, which JSON's escapes make at most 6 times longer (`\u0001`).
    public static let maxAnswerBytes = 8 * 1024 * 1024
    /// Messages a page of handshakes or of one conversation's: 64 × (16 KiB × 6 + its fields)
    /// stays under `maxAnswerBytes`.
    public static let conversationPageSize = 64
}
