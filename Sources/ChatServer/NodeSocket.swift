import NIOCore
import NIOWebSocket
import SimulatedWorld
import SyncCore
import SyncEngine
import ServerProtocol
import Wire

/// `GET /v1/node` upgraded: the realtime node. Methods: `subscribeUtxosChanged` (params
/// `addresses`: the user's own address only), answered once the node took the subscription,
/// then `utxosChangedNotification`s (the transaction, and `at`: the world's instant it left); `getUtxosByAddresses` (the UTXO set); `ping` (the
/// keepalive, answered only by a live, delivering node). A subscription the node closes
/// (`realtime down`, `flaky`) closes the socket with 1011 and the reason.
final class NodeSocket: JSONSocket, NodeSubscriber {
    private var pending: [Int: String?] = [:]  // the world's connection id → the request id to answer (raw JSON)
    private var active: Int?

    override func request(id: String?, method: String, params: [String: WireValue]) {
        let node = user.world.node
        switch NodeMethod(rawValue: method) {
        case .subscribeUtxosChanged:
            guard params["addresses"]?.array?.map(\.string) == [user.address.value] else {
                return error(id, "subscribeUtxosChanged: params.addresses must be [\"\(user.address.value)\"], the user's own address")
            }
            // A second subscription replaces the first: its entry goes, or every socket that
            // subscribed twice would leave one behind (about 4.5 KB each).
            for c in Array(pending.keys) + (active.map { [$0] } ?? []) where user.link.subscriptions[c] === self {
                user.link.subscriptions[c] = nil
            }
            pending.removeAll()
            active = nil
            let connection = node.connect(subscribing: user.address, forced: true)
            pending[connection] = id
            user.link.subscriptions[connection] = self
        case .getUtxosByAddresses:
            guard params["addresses"]?.array?.map(\.string) == [user.address.value] else {
                return error(id, "getUtxosByAddresses: params.addresses must be [\"\(user.address.value)\"], the user's own address")
            }
            // `since` (optional, milliseconds of the world's clock): only the outputs that landed then or later.
            let since = params["since"]?.int64.map { Instant(milliseconds: $0) }
            node.requestUtxoSet(for: user.address, since: since) { [weak self] result in
                switch result {
                case .success(let entries): self?.reply(id, method, [("entries", .array(entries.map { .string($0) }))])
                case .failure(let e): self?.error(id, e.message)
                }
            }
        case .ping:
            guard let active else { return error(id, "ping: no subscription on this socket") }
            node.ping(connection: active) { [weak self] in self?.reply(id, NodeMethod.ping.rawValue) }
        case .utxosChangedNotification, nil:
            error(id, "unknown method \"\(method.prefix(40))\" (expected subscribeUtxosChanged, getUtxosByAddresses, ping)")
        }
    }

    func subscribed(connection: Int) {
        guard let id = pending.removeValue(forKey: connection) else { return }
        active = connection
        reply(id, NodeMethod.subscribeUtxosChanged.rawValue)
    }

    func failed(connection: Int, error message: String) {
        if let id = pending.removeValue(forKey: connection) { return error(id, message) }
        guard connection == active else { return }
        close(code: .unexpectedServerError, reason: message)
    }

    func notify(_ message: NetworkMessage) {
        send(RPC.notification(NodeMethod.utxosChangedNotification.rawValue,
                              [("transaction", MessageDocument.encode(message, me: user.address)), ("at", .int(server.host.scheduler.now.milliseconds))]))
    }

    override func closed() {
        for c in Array(pending.keys) + (active.map { [$0] } ?? []) where user.link.subscriptions[c] === self {
            user.link.subscriptions[c] = nil
        }
    }
}
