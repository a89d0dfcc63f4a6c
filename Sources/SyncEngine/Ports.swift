import Foundation
import SyncCore

// The ports through which the engine driver talks to a network. The embedded simulated world
// implements them (SimulatedWorld); nothing in the driver knows it is simulated. Replies come back
// through `ClientEndpoint`, always later on the scheduler, never re-entrantly.

/// One indexer call (docs/spec.md#terms). Each is one backend request.
public enum IndexerCall: Hashable, Sendable, CustomStringConvertible {
    /// `page`: the page of the answer (docs/server.md: an object's messages a page at a time,
    /// page 0 first, the next only when a page says it follows).
    case handshakes(Direction, since: Instant, page: Int = 0)
    case contextual(Address, Direction, since: Instant, page: Int = 0)
    case payments(since: Instant, page: Int)
    case messageById(String)
    /// The latest indexed block time of any message to or from the user (docs/spec.md#terms), for
    /// adaptive's (d): one cheap request before a poll.
    case tip
    /// The tips, and with each object's how many incoming messages of it landed after `after`
    /// and at or before `through` (docs/server.md): adaptive's (g), whose looks would otherwise
    /// see only each object's newest message, and miss a message push lost behind a later one
    /// it brought. The same one request as `tip`.
    case tipCounting(after: Instant, through: Instant)

    /// The page it asks for, for a call of an object's messages.
    public var page: Int? {
        switch self {
        case .handshakes(_, _, let p), .contextual(_, _, _, let p), .payments(_, let p): return p
        case .messageById, .tip, .tipCounting: return nil
        }
    }

    /// The request kind used to count backend requests.
    public var kind: String {
        switch self {
        case .handshakes(let d, _, _): return d == .incoming ? "handshakes_in" : "handshakes_out"
        case .contextual(_, let d, _, _): return d == .incoming ? "contextual_in" : "contextual_out"
        case .payments: return "payments"
        case .messageById: return "message_by_id"
        case .tip, .tipCounting: return "tip"
        }
    }

    public var description: String {
        switch self {
        case .handshakes(_, let since, let page): return "\(kind) since \(since.milliseconds)" + (page > 0 ? " page \(page)" : "")
        case .contextual(let a, let d, let since, let page):
            return "contextual_\(d == .incoming ? "in" : "out") \(a.value) since \(since.milliseconds)" + (page > 0 ? " page \(page)" : "")
        case .payments(let since, let page): return "payments since \(since.milliseconds) page \(page)"
        case .messageById(let id): return "message_by_id \(id)"
        case .tip: return "tip"
        case .tipCounting(let after, let through): return "tip counting after \(after.milliseconds) through \(through.milliseconds)"
        }
    }
}

public protocol IndexerPort: AnyObject {
    /// Sends one request; the reply (a JSON document, or a transport error) arrives later.
    func send(_ call: IndexerCall, reply: @escaping (Result<Data, TransportError>) -> Void)
}

public struct TransportError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    /// No retry helps: the other side refused for good (a server that no longer knows the user).
    public var final: Bool
    public init(_ message: String, final: Bool = false) {
        self.message = message
        self.final = final
    }
    public var description: String { message }
}

public protocol RealtimePort: AnyObject {
    /// Opens a connection to the node and subscribes to `address`. `forced` tears down the
    /// previous socket first. Returns the connection's id; its outcome arrives on the endpoint.
    func connect(subscribing address: Address, forced: Bool) -> Int
    /// The address's current UTXO set: the txIds of its unspent incoming outputs (one request),
    /// all of them, or (`since`) those that landed at that instant or later, oldest first.
    func requestUtxoSet(for address: Address, since: Instant?, reply: @escaping (Result<[String], TransportError>) -> Void)
    /// A keepalive ping on connection `id`. A live socket answers after a round trip; a dead
    /// or stale one never answers (the client times it out).
    func ping(connection id: Int, answered: @escaping () -> Void)
}

public protocol PushPort: AnyObject {
    /// Asks the push service for a (new) device token. Status changes arrive on the endpoint.
    func registerToken()
    /// Tells the push service to forget the device token: no push is sent any more (as a
    /// client that leaves remote push unregisters). The status becomes `none`.
    func unregisterToken()
    /// Tells the service not to push for this contact (or to push again).
    func setMuted(_ contact: Address, _ muted: Bool)
}

public protocol SystemPort: AnyObject {
    /// Asks the OS for a background refresh no earlier than `earliest`.
    func requestBackgroundRefresh(earliest: Instant)
    func cancelBackgroundRefresh()
    /// The OS's notification permission for the app.
    var notificationPermissionGranted: Bool { get }
}

/// The phone's OS as an app beside a world elsewhere has it (a client of `synchat server`): it
/// moves the app between foreground and background, calls the app as it does, and says when
/// the app is suspended, so its sockets stop being listened to. The simulated one is
/// `SimOperatingSystem`; the client takes it as a port and knows no world.
public protocol DeviceOS: SystemPort {
    var foreground: Bool { get }
    var app: ClientEndpoint? { get set }
    var suspended: (() -> Void)? { get set }
    func moveToForeground()
    func moveToBackground()
}

/// An outgoing transaction as the wallet signed it: the message, and the outputs it spends.
public struct Publication: Hashable, Sendable {
    public var message: NetworkMessage
    /// The txIds of the user's unspent outputs this transaction spends (the wallet signs
    /// them, so the client knows them). Once spent, they leave the address's UTXO set.
    public var spent: [String]

    public init(message: NetworkMessage, spent: [String]) {
        self.message = message
        self.spent = spent
    }
}

public protocol PublishPort: AnyObject {
    /// Publishes an outgoing message; `reply` gets it as the network will carry it, with the
    /// outputs it spends, or why the network cannot take it now. The in-process world
    /// replies before returning; a network replies later.
    /// `key`: the outbox entry's own name, the same at every retry of it (a server publishes
    /// one message for one key).
    func publish(from me: Address, to contact: Address, body: String, key: String, reply: @escaping (Result<Publication, TransportError>) -> Void)
}

/// Everything the driver needs from the outside world.
public struct WorldPorts {
    public var indexer: IndexerPort
    public var realtime: RealtimePort
    public var push: PushPort
    public var system: SystemPort
    public var network: PublishPort

    public init(indexer: IndexerPort, realtime: RealtimePort, push: PushPort, system: SystemPort, network: PublishPort) {
        self.indexer = indexer
        self.realtime = realtime
        self.push = push
        self.system = system
        self.network = network
    }
}

/// What the world (network, push service, OS) tells the app.
public protocol ClientEndpoint: AnyObject {
    func appDidBecomeActive()
    func appDidEnterBackground()
    func realtimeConnected(connection: Int)
    func realtimeConnectFailed(connection: Int, error: String)
    func realtimeDisconnected(connection: Int, error: String)
    func realtimeNotified(connection: Int, message: NetworkMessage)
    /// A push reached the running app (foreground): an APNs-like `userInfo` JSON object.
    func pushDelivered(payload: Data)
    /// A push reached the notification extension while the app is backgrounded.
    func notificationExtensionReceived(payload: Data)
    /// The push service dropped notifications it held for the device (FCM's "messages
    /// deleted", sent when the device is reachable again): push lost messages for sure.
    func pushMessagesDeleted()
    /// The path that brings pushes to the device closed or opened again (the networked
    /// client's relay socket): no push can count against the channel while it is closed.
    func pushPathChanged(open: Bool)
    func tokenStatusChanged(_ status: TokenStatus)
    /// The network says who the user's contacts are (the address book a world starts with, a
    /// contact added, another user who joined a server): the app learns those it did not know.
    func contactsKnown(_ contacts: [Contact])
    func backgroundRefreshGranted(task: Int)
    func backgroundRefreshExpired(task: Int)
}
