import Foundation
import NIOCore
import NIOHTTP1

extension WorldServer {
    /// One HTTP request without a socket (`WorldPair`, in process): the same `handle` a
    /// connection's handler calls. `reply` runs once, maybe later (an indexer answer comes
    /// after the world's latency, when the world is advanced).
    public func serve(_ method: HTTPMethod, _ uri: String, headers: HTTPHeaders, body: Data, peer: String,
                      reply: @escaping (_ status: Int, _ body: Data) -> Void) {
        handle(method: method, uri: uri, headers: headers, body: body, peer: peer) { answer in reply(Int(answer.status.code), answer.body) }
    }

    /// A WebSocket opening without a socket: the node's or the push relay's handlers go on
    /// `channel` (an `EmbeddedChannel`, already active), exactly as an upgraded connection's
    /// do; or the refusal a connection would have been answered, as status and body.
    public func upgrade(_ channel: NIOCore.Channel, _ head: HTTPRequestHead) -> (status: Int, body: Data)? {
        host.advance()
        defer { pump() }
        let path = URLComponents(string: head.uri)?.path ?? ""
        let connection = ObjectIdentifier(channel)
        guard shouldUpgrade(head, connection: connection) != nil else {
            let refusal = socketRefusal(connection: connection, path: path, method: head.method, uri: head.uri, headers: head.headers)
            return (Int(refusal.status.code), refusal.body)
        }
        do { try upgraded(channel, head) } catch { return (500, Data("{\"error\":\"\(error)\"}".utf8)) }
        return nil
    }
}
