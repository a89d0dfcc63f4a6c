import Directives
import Foundation
import SyncCore
import SyncEngine

/// Where a user's world calls its app back: the server's side of that user's sockets. The
/// node's callbacks go to the socket whose subscription opened that connection; pushes and
/// token changes to the push relay's socket, or wait for it (a phone's push service holds
/// what it could not deliver, up to `maxHeldPushes`).
public final class UserLink: ClientEndpoint {
    /// A node socket's subscription, by the world's connection id.
    public var subscriptions: [Int: NodeSubscriber] = [:]
    public weak var pushSocket: PushSubscriber? {
        didSet {
            guard let pushSocket else { return }
            pushSocket.faults(faults)  // a client that connects again learns them anew
            if let tokenStatus { pushSocket.tokenStatus(tokenStatus) }
            for p in heldPushes { pushSocket.push(p) }
            heldPushes.removeAll()
        }
    }
    /// Told when the user's contacts change: another user joined (nil: ask for them all).
    public var contactsChanged: ((Contact?) -> Void)?
    public private(set) var tokenStatus: TokenStatus?
    /// The user's world's faults, as the world told them: each change goes to the client.
    public var faults = WorldFaults.none {
        didSet { if faults != oldValue { pushSocket?.faults(faults) } }
    }
    public private(set) var heldPushes: [Data] = []
    public static let maxHeldPushes = 100

    public func appDidBecomeActive() {}
    public func appDidEnterBackground() {}
    public func backgroundRefreshGranted(task: Int) {}
    public func backgroundRefreshExpired(task: Int) {}

    public func realtimeConnected(connection: Int) { subscriptions[connection]?.subscribed(connection: connection) }
    public func realtimeConnectFailed(connection: Int, error: String) {
        subscriptions.removeValue(forKey: connection)?.failed(connection: connection, error: error)
    }
    public func realtimeDisconnected(connection: Int, error: String) {
        subscriptions.removeValue(forKey: connection)?.failed(connection: connection, error: error)
    }
    public func realtimeNotified(connection: Int, message: NetworkMessage) { subscriptions[connection]?.notify(message) }

    /// The server's world keeps no device model (`push model` is the simulated world's): its
    /// held pushes are the relay's, above.
    public func pushMessagesDeleted() {}
    public func pushPathChanged(open: Bool) {}

    public func pushDelivered(payload: Data) { deliver(payload) }
    public func notificationExtensionReceived(payload: Data) { deliver(payload) }

    private func deliver(_ payload: Data) {
        if let pushSocket { return pushSocket.push(payload) }
        heldPushes.append(payload)
        if heldPushes.count > Self.maxHeldPushes { heldPushes.removeFirst() }
    }

    /// The server's clients learn their contacts from joining and `GET /v1/world`.
    public func contactsKnown(_ contacts: [Contact]) {}

    /// Writes a token's change where the server keeps it, before the client is told.
    var tokenKept: ((TokenStatus) -> Void)?

    public func tokenStatusChanged(_ status: TokenStatus) {
        tokenKept?(status)
        tokenStatus = status
        pushSocket?.tokenStatus(status)
    }

    /// The token as a restarted server's store kept it, for the relay's next opening.
    func restoredToken(_ status: TokenStatus) { tokenStatus = status }
}

/// A node socket, as the world sees it.
public protocol NodeSubscriber: AnyObject {
    func subscribed(connection: Int)
    func failed(connection: Int, error: String)
    func notify(_ message: NetworkMessage)
}

/// A push relay socket, as the world sees it.
public protocol PushSubscriber: AnyObject {
    func push(_ payload: Data)
    func tokenStatus(_ status: TokenStatus)
    /// A directive of the app for the client to do (`synchat fault --user NAME background`).
    func directive(_ d: Directive)
    /// The faults the user's world has now, each time they change (whoever changed them: the
    /// user's keys, `synchat fault`, the operator, the world itself) and when the socket opens.
    func faults(_ faults: WorldFaults)
}
