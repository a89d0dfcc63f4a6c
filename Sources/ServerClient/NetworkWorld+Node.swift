import Dispatch
import Foundation
import NIOHTTP1
import ServerProtocol
import SyncCore
import SyncEngine
import Wire
/// The node: a WebSocket per subscription, JSON-RPC requests and notifications.
extension NetworkWorld {
    /// One subscription's socket and its requests in flight.
    final class NodeConnection {
        let id: Int
        var socket: ClientSocket?
        var subscribed = false
        /// The app is listening: false once the OS suspended it (then nothing reaches it).
        var listened = true
        var nextRequest = 1
        var pending: [Int: (Result<WireValue, TransportError>) -> Void] = [:]
        init(id: Int) { self.id = id }
    }

    /// The OS suspended the app: its sockets are no longer listened to. A connect still in
    /// flight fails, as the embedded node fails one that completes in the background; were its
    /// answer dropped without a word, the engine would say `connecting` for good.
    func stopListening() {
        guard let connection = node else { return }
        let connecting = connection.listened && !connection.subscribed
        connection.listened = false
        guard connecting else { return }  // a live socket dies silently: the engine distrusts it already
        connection.socket?.close()
        scheduler.schedule(after: .zero, "connect refused") { [weak self] in
            self?.app?.realtimeConnectFailed(connection: connection.id, error: "app suspended")
        }
    }

    func nodeFrame(_ connection: NodeConnection, _ data: Data) {
        guard connection.listened, let app else { return }
        switch RPC.read(data) {
        case .answer(let id, let result)?:
            connection.pending.removeValue(forKey: id)?(result.mapError { TransportError($0.message) })
        case .notification(NodeMethod.utxosChangedNotification.rawValue, let params)? where connection === node:
            notified(params, on: connection, to: app)
        default:
            break
        }
    }

    /// A transaction the node notified, read as the message it is.
    private func notified(_ params: WireValue, on connection: NodeConnection, to app: ClientEndpoint) {
        guard let tx = params["transaction"] else { notice?("node: a notification without its transaction"); return }
        do {
            let message = try MessageDocument.decode(tx, me: me, now: scheduler.now, at: "node notification")
            if let onNotified, let at = params["at"]?.int64 {
                onNotified(message, Instant(milliseconds: at), virtualNow)
            }
            app.realtimeNotified(connection: connection.id, message: message)
        } catch {
            notice?("node: \(error)")
        }
    }

    func call(_ connection: NodeConnection, _ method: NodeMethod, _ params: [(String, JSONValue)],
                      reply: @escaping (Result<WireValue, TransportError>) -> Void) {
        guard let socket = connection.socket else { return reply(.failure(TransportError("node: not connected"))) }
        let id = connection.nextRequest
        connection.nextRequest += 1
        connection.pending[id] = reply
        socket.send(RPC.request(id: id, method.rawValue, params))
    }
}

extension NetworkWorld: RealtimePort {
    public func connect(subscribing address: Address, forced: Bool) -> Int {
        nextConnection += 1
        let connection = NodeConnection(id: nextConnection)
        // A new connection replaces the old socket, forced or not.
        node?.socket?.close()
        node?.listened = false
        node = connection
        guard os.foreground else {
            scheduler.schedule(after: .zero, "connect refused") { [weak self] in
                self?.app?.realtimeConnectFailed(connection: connection.id, error: "app suspended")
            }
            return connection.id
        }
        connection.socket = io.openSocket(Route.node, token: secret, opened: { [weak self] _ in
            guard let self else { return }
            call(connection, .subscribeUtxosChanged, [("addresses", .array([.string(me.value)]))]) { [weak self] result in
                guard let self, connection.listened else { return }
                switch result {
                case .success where !os.foreground:
                    // The app went to the background while the socket opened: the OS would not
                    // let it connect, as the embedded node says (otherwise `b`, `f`, `b`
                    // quickly would leave `connecting` on the bar for minutes).
                    connection.listened = false
                    app?.realtimeConnectFailed(connection: connection.id, error: "app suspended")
                    connection.socket?.close()
                case .success:
                    connection.subscribed = true
                    serverHeard()
                    app?.realtimeConnected(connection: connection.id)
                case .failure(let e):
                    // Said once: the socket's end that follows is not news to the app.
                    connection.listened = false
                    app?.realtimeConnectFailed(connection: connection.id, error: e.message)
                    connection.socket?.close()
                }
            }
        }, text: { [weak self] data in
            self?.nodeFrame(connection, data)
        }, closed: { [weak self] code, reason in
            guard let self else { return }
            for (_, reply) in connection.pending { reply(.failure(TransportError("node: socket closed"))) }
            connection.pending.removeAll()
            connection.socket = nil
            guard connection.listened else { return }  // the app was not listening: it learns nothing
            connection.listened = false
            var why = reason.isEmpty ? "socket closed: " + Frame.closeWords(code: code, reason: reason) : reason
            if reason.hasSuffix("HTTP 401") {
                checkKnown(NetIO.Answer(status: 401, body: Data()))
                why = unknownWords
            }
            if connection.subscribed {
                app?.realtimeDisconnected(connection: connection.id, error: why)
            } else {
                app?.realtimeConnectFailed(connection: connection.id, error: why)
            }
        })
        return connection.id
    }

    public func requestUtxoSet(for address: Address, since: Instant?, reply: @escaping (Result<[String], TransportError>) -> Void) {
        guard let connection = node, connection.subscribed, connection.listened else {
            scheduler.schedule(after: .zero, "utxo set refused") { reply(.failure(TransportError("node: not connected"))) }
            return
        }
        var params: [(String, JSONValue)] = [("addresses", .array([.string(me.value)]))]
        if let since { params.append(("since", .int(since.milliseconds))) }
        call(connection, .getUtxosByAddresses, params) { result in
            reply(result.flatMap { params in
                guard let list = params["entries"]?.array else { return .failure(TransportError("node: a UTXO set without entries")) }
                let entries = list.compactMap(\.string)
                guard entries.count == list.count else { return .failure(TransportError("node: a UTXO set entry that is not a txId")) }
                return .success(entries)
            })
        }
    }

    public func ping(connection id: Int, answered: @escaping () -> Void) {
        guard let connection = node, connection.id == id, connection.subscribed else { return }  // never answered
        call(connection, .ping, []) { result in
            if case .success = result, connection.listened { answered() }
        }
    }
}
