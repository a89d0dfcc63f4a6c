import Foundation
import NIOCore
import NIOHTTP1
import NIOWebSocket
import SimWorld
import SyncCore
import SyncEngine
import Wire

// The node and the push relay as WebSockets (issue 17). Text frames of JSON; a request has
// an `id`, a `method` and `params`; its answer has the same `id` and `method` with `params`,
// or an `error` object with a `message`; a notification has a `method` and no `id`.
// Protocol pings are answered as RFC 6455 says, but they prove nothing about the node: the
// engine's keepalive is the application-level `ping` method, which a stale socket never
// answers.

extension WorldServer {
    static let socketPaths: Set<String> = ["/v1/node", "/v1/push"]

    /// The headers to upgrade with, or nil to let the request through to `handle`, which
    /// says why not.
    func shouldUpgrade(_ head: HTTPRequestHead) -> HTTPHeaders? {
        let path = URLComponents(string: head.uri)?.path ?? ""
        guard Self.socketPaths.contains(path), Self.upgradeProblem(head) == nil, let user = user(head.headers) else { return nil }
        guard socketsByUser[user.name, default: 0] < Self.maxSocketsPerUser, allow(user.name) else { return nil }
        return HTTPHeaders()
    }

    /// What makes a request no WebSocket opening handshake (RFC 6455 §4.2.1), or nil. NIO's
    /// upgrader checks the version; a POST, a missing `Connection: Upgrade` and a key that
    /// is not 16 bytes were upgraded all the same (issue 28 #9).
    static func upgradeProblem(_ head: HTTPRequestHead) -> String? {
        guard head.method == .GET else { return "a WebSocket opens with GET, not \(head.method)" }
        let connection = head.headers[canonicalForm: "Connection"].map { $0.lowercased() }
        guard connection.contains("upgrade") else { return "a WebSocket opening needs Connection: Upgrade" }
        guard head.headers[canonicalForm: "Upgrade"].contains(where: { $0.lowercased() == "websocket" }) else {
            return "a WebSocket opening needs Upgrade: websocket"
        }
        let keys = head.headers["Sec-WebSocket-Key"]
        guard keys.count == 1, let key = Data(base64Encoded: keys[0].trimmingCharacters(in: .whitespaces)), key.count == 16 else {
            return "Sec-WebSocket-Key must be one nonce of 16 bytes in base64"
        }
        return nil
    }

    /// Why a request to a socket's path was not upgraded.
    func socketRefusal(path: String, method: HTTPMethod = .GET, uri: String = "", headers: HTTPHeaders) -> Answer {
        if headers[canonicalForm: "Upgrade"].contains(where: { $0.lowercased() == "websocket" }),
           let problem = Self.upgradeProblem(HTTPRequestHead(version: .http1_1, method: method, uri: uri, headers: headers)) {
            return .error(.badRequest, problem)
        }
        guard let user = user(headers) else {
            return .error(.unauthorized, "\(path) needs Authorization: Bearer SECRET (the secret POST /v1/join gave)")
        }
        if socketsByUser[user.name, default: 0] >= Self.maxSocketsPerUser {
            return .error(.tooManyRequests, "\(user.name) holds \(Self.maxSocketsPerUser) sockets already")
        }
        if limited(user.name) {
            return .error(.tooManyRequests, "more than \(Int(Self.requestsPerSecond)) requests a second: slow down")
        }
        return .error(.upgradeRequired, "\(path) is a WebSocket: connect with Upgrade: websocket")
    }

    /// The pipeline of an upgraded socket: fragments joined up to the frame limit, then the
    /// node's or the push relay's handler.
    func upgraded(_ channel: NIOCore.Channel, _ head: HTTPRequestHead) throws {
        let path = URLComponents(string: head.uri)?.path ?? ""
        guard let user = user(head.headers) else { throw ChannelError.inputClosed }
        socketsByUser[user.name, default: 0] += 1
        channel.closeFuture.whenComplete { [self] _ in socketsByUser[user.name, default: 1] -= 1 }
        try channel.pipeline.syncOperations.addHandler(FrameRules())
        try channel.pipeline.syncOperations.addHandler(
            NIOWebSocketFrameAggregator(minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 64, maxAccumulatedFrameSize: Self.maxFrameBytes))
        if path == "/v1/node" {
            try channel.pipeline.syncOperations.addHandler(NodeSocket(server: self, user: user))
        } else {
            try channel.pipeline.syncOperations.addHandler(PushSocket(server: self, user: user))
        }
    }
}

/// RFC 6455 §5.1–5.2 on every frame a client sends, before fragments are joined: it is masked,
/// and its reserved bits are clear (no extension was agreed). A frame that breaks either is
/// the socket's last (1002); NIO's decoder lets both through.
final class FrameRules: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame

    enum Broken: Error {
        case unmasked, reservedBits
    }

    private var broken = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !broken else { return }
        let frame = unwrapInboundIn(data)
        if frame.maskKey == nil || frame.rsv1 || frame.rsv2 || frame.rsv3 {
            broken = true
            return context.fireErrorCaught(frame.maskKey == nil ? Broken.unmasked : Broken.reservedBits)
        }
        context.fireChannelRead(data)
    }
}

/// What both sockets share: frames in and out, control frames, bad frames, limits.
class JSONSocket: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    let server: WorldServer
    let user: WorldHost.User
    var channel: NIOCore.Channel?
    var closing = false

    init(server: WorldServer, user: WorldHost.User) {
        self.server = server
        self.user = user
    }

    func handlerAdded(context: ChannelHandlerContext) { channel = context.channel }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            var data = frame.unmaskedData
            let bytes = data.readBytes(length: data.readableBytes) ?? []
            server.host.advance()
            defer { server.pump() }
            guard server.allow(user.name) else {
                // An error frame for each frame over the limit grew the server's memory as fast
                // as a peer could send (issue 28 #1): one close instead.
                return close(code: .policyViolation, reason: "more than \(Int(WorldServer.requestsPerSecond)) requests a second")
            }
            guard let object = WireValue.parse(Data(bytes))?.object else {
                return send(.object([("error", .object([("message", .string("a frame must be one JSON object (\(bytes.count) bytes were not)"))]))]))
            }
            // The id goes back exactly as it came (JSON-RPC 2.0 §5): `true` was answered 1,
            // 2^53+1 rounded, and string ids null (issue 28 #9).
            let id = RawJSON.member("id", of: bytes)
            if let id, !RawJSON.isScalar(id) { return error(nil, "an id is a string, a number or null") }
            guard let method = object["method"]?.string else { return error(id, "missing \"method\"") }
            let params = object["params"]?.object ?? [:]
            request(id: id, method: method, params: params)
        case .binary:
            // Refused (RFC 6455 §7.4.1, 1003), and counted like any frame: a flood of them
            // cost memory and every other user's latency (issue 28 #1).
            _ = server.allow(user.name)
            close(code: .unacceptableData, reason: "binary frames are not understood: send text frames of JSON")
        case .ping:
            var payload = frame.unmaskedData
            let bytes = payload.readBytes(length: payload.readableBytes) ?? []
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: ByteBuffer(bytes: bytes))), promise: nil)
        case .connectionClose:
            // RFC 6455 §5.5.1: echo the peer's code; a code no peer may send is a protocol error.
            var payload = frame.unmaskedData
            guard payload.readableBytes != 1 else { return close(code: .protocolError, reason: "a close frame of one byte") }
            guard let code = payload.readInteger(as: UInt16.self) else { return close(code: .normalClosure, reason: "") }
            let allowed = (1000...1003).contains(code) || (1007...1011).contains(code) || (3000...4999).contains(code)
            guard allowed, payload.readString(length: payload.readableBytes) != nil || payload.readableBytes == 0 else {
                return close(code: .protocolError, reason: "close code \(code) is not one a peer may send")
            }
            close(code: WebSocketErrorCode(codeNumber: Int(code)), reason: "")
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed()
        context.fireChannelInactive()
    }

    /// What the frame reader refused: a message past the frame or fragment limits is 1009, a
    /// frame that breaks the protocol (a text frame inside a fragmented message, a control
    /// frame split, reserved bits) 1002. They vanished without a reply (issue 28 #9).
    func errorCaught(context: ChannelHandlerContext, error: Error) {
        switch error {
        case NIOWebSocketFrameAggregator.Error.accumulatedFrameSizeIsTooLarge, NIOWebSocketFrameAggregator.Error.tooManyFragments:
            close(code: .messageTooLarge, reason: "a message is at most \(WorldServer.maxFrameBytes) bytes in at most 64 fragments")
        case let e as NIOWebSocketError where e == .invalidFrameLength:
            close(code: .messageTooLarge, reason: "a frame is at most \(WorldServer.maxFrameBytes) bytes")
        case FrameRules.Broken.unmasked:
            close(code: .protocolError, reason: "a client's frames must be masked")
        case FrameRules.Broken.reservedBits:
            close(code: .protocolError, reason: "reserved bits set, and no extension was agreed")
        default:
            close(code: .protocolError, reason: "that frame breaks RFC 6455")
        }
    }

    /// A request frame; subclasses answer.
    func request(id: String?, method: String, params: [String: WireValue]) {}
    /// The socket went away.
    func closed() {}

    func send(_ value: JSONValue) {
        guard let channel, !closing else { return }
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(bytes: value.data)), promise: nil)
    }

    func reply(_ id: String?, _ method: String, _ params: [(String, JSONValue)] = []) {
        send(.object([("id", id.map { .raw($0) } ?? .null), ("method", .string(method)), ("params", .object(params))]))
    }

    func error(_ id: String?, _ message: String) {
        send(.object([("id", id.map { .raw($0) } ?? .null), ("error", .object([("message", .string(message))]))]))
    }

    /// A close frame with a code and a reason, then the end of the socket.
    func close(code: WebSocketErrorCode, reason: String) {
        guard let channel, !closing else { return }
        closing = true
        var buffer = channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        buffer.write(webSocketErrorCode: code)
        buffer.writeString(String(decoding: reason.utf8.prefix(120), as: UTF8.self))
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .connectionClose, data: buffer)).whenComplete { _ in
            channel.close(promise: nil)
        }
    }
}

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
        switch method {
        case "subscribeUtxosChanged":
            guard params["addresses"]?.array?.map(\.string) == [user.address.value] else {
                return error(id, "subscribeUtxosChanged: params.addresses must be [\"\(user.address.value)\"], the user's own address")
            }
            // A second subscription replaces the first: its entry goes, or every socket that
            // subscribed twice left one behind (about 4.5 KB each, issue 28 #8).
            for c in Array(pending.keys) + (active.map { [$0] } ?? []) where user.link.subscriptions[c] === self {
                user.link.subscriptions[c] = nil
            }
            pending.removeAll()
            active = nil
            let connection = node.connect(subscribing: user.address, forced: true)
            pending[connection] = id
            user.link.subscriptions[connection] = self
        case "getUtxosByAddresses":
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
        case "ping":
            guard let active else { return error(id, "ping: no subscription on this socket") }
            node.ping(connection: active) { [weak self] in self?.reply(id, "ping") }
        default:
            error(id, "unknown method \"\(method.prefix(40))\" (expected subscribeUtxosChanged, getUtxosByAddresses, ping)")
        }
    }

    func subscribed(connection: Int) {
        guard let id = pending.removeValue(forKey: connection) else { return }
        active = connection
        reply(id, "subscribeUtxosChanged")
    }

    func failed(connection: Int, error message: String) {
        if let id = pending.removeValue(forKey: connection) { return error(id, message) }
        guard connection == active else { return }
        close(code: .unexpectedServerError, reason: message)
    }

    func notify(_ message: NetworkMessage) {
        send(.object([("method", .string("utxosChangedNotification")),
                      ("params", .object([("transaction", SimIndexer.document(message, me: user.address)),
                                          ("at", .int(server.host.scheduler.now.milliseconds))]))]))
    }

    override func closed() {
        for c in Array(pending.keys) + (active.map { [$0] } ?? []) where user.link.subscriptions[c] === self {
            user.link.subscriptions[c] = nil
        }
    }
}

/// `GET /v1/push` upgraded: the push relay the phone's OS holds. It delivers while the app
/// is in the background (the OS, not the app, holds the socket). Methods: `registerToken`,
/// `unregisterToken`, `setMuted` (params `contact`, `muted`); notifications: `tokenStatus`
/// (params `status`), `push` (params `payload`: the APNs-style userInfo as a JSON string),
/// `contactsChanged` (another user joined: params `joined`, the new contact; without it, ask
/// `GET /v1/world`), `directive` (params `line`: a
/// directive of the app for the client to do, sent by `synchat fault --user NAME`). One push socket a user: a
/// newer one replaces the older, which is closed with 1008.
final class PushSocket: JSONSocket, PushSubscriber {
    override func handlerAdded(context: ChannelHandlerContext) {
        super.handlerAdded(context: context)
        if let older = user.link.pushSocket as? PushSocket, older !== self {
            older.close(code: .policyViolation, reason: "replaced by a newer push socket")
        }
        user.link.pushSocket = self
        user.link.contactsChanged = { [weak self] joined in
            self?.send(.object([("method", .string("contactsChanged")),
                                ("params", .object(joined.map { [("joined", People.document($0))] } ?? []))]))
        }
        // A user who joined between this client's join and this socket was told to nobody:
        // the two could never see each other (issue 28 #11). Each new relay socket starts
        // with a contactsChanged, so the client asks for its contacts once more.
        user.link.contactsChanged?(nil)
    }

    override func request(id: String?, method: String, params: [String: WireValue]) {
        let push = user.world.push
        switch method {
        case "registerToken": push.registerToken(); reply(id, method)
        case "unregisterToken": push.unregisterToken(); reply(id, method)
        case "setMuted":
            // `muted`: true or false (1 or 0, as the client has sent it, too).
            guard let contact = params["contact"]?.string, let muted = params["muted"]?.bool ?? params["muted"]?.int64.flatMap({ [0, 1].contains($0) ? $0 == 1 : nil }) else {
                return error(id, "setMuted: params must have contact (an address) and muted (true or false)")
            }
            // Only a contact of the user's (any string was kept, 60 KB names included), and
            // saved with the contact, so a mute outlives a restart (issue 28 #8).
            guard let c = user.world.contact(address: Address(contact)) else {
                return error(id, "setMuted: \(contact.prefix(80)) is not a contact of \(user.name)")
            }
            push.setMuted(c.address, muted)
            user.world.setMuted(handle: c.handle, muted)
            reply(id, method)
        default:
            error(id, "unknown method \"\(method.prefix(40))\" (expected registerToken, unregisterToken, setMuted)")
        }
    }

    func push(_ payload: Data) {
        send(.object([("method", .string("push")), ("params", .object([("payload", .string(String(decoding: payload, as: UTF8.self)))]))]))
    }

    func tokenStatus(_ status: TokenStatus) {
        send(.object([("method", .string("tokenStatus")), ("params", .object([("status", .string(status.rawValue))]))]))
    }

    func directive(_ line: String) {
        send(.object([("method", .string("directive")), ("params", .object([("line", .string(line))]))]))
    }

    func faults(_ words: [String]) {
        send(.object([("method", .string("faults")), ("params", .object([("active", .array(words.map { .string($0) }))]))]))
    }

    override func closed() {
        if user.link.pushSocket === self {
            user.link.pushSocket = nil
            user.link.contactsChanged = nil
        }
    }
}

/// The raw text of a top-level member of a JSON object, as the peer wrote it (a JSON-RPC id
/// must go back exactly: no number read into a double, no `true` read as 1). The document
/// was already accepted by `JSONSerialization`; this only finds where the value lies.
enum RawJSON {
    /// The value of `key` in the object `bytes`, or nil when it has no such member.
    static func member(_ key: String, of bytes: [UInt8]) -> String? {
        var i = 0
        func ws() { while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 } }
        /// Skips a string starting at `i` (at its quote); returns its raw contents.
        func string() -> [UInt8]? {
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { return nil }
            let start = i + 1
            i += 1
            while i < bytes.count, bytes[i] != UInt8(ascii: "\"") { i += bytes[i] == UInt8(ascii: "\\") ? 2 : 1 }
            guard i < bytes.count else { return nil }
            defer { i += 1 }
            return Array(bytes[start..<i])
        }
        /// Skips any value starting at `i`.
        func value() -> Bool {
            guard i < bytes.count else { return false }
            switch bytes[i] {
            case UInt8(ascii: "\""): return string() != nil
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                while i < bytes.count {
                    switch bytes[i] {
                    case UInt8(ascii: "\""): guard string() != nil else { return false }; continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 { i += 1; return true }
                    default: break
                    }
                    i += 1
                }
                return false
            default:
                while i < bytes.count, ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
                return true
            }
        }
        ws()
        guard i < bytes.count, bytes[i] == UInt8(ascii: "{") else { return nil }
        i += 1
        while true {
            ws()
            guard let name = string() else { return nil }
            ws()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return nil }
            i += 1
            ws()
            let start = i
            guard value() else { return nil }
            // A key is compared after JSON unescaping only in the plain case; an escaped "id"
            // is not an id here (JSONSerialization's reading gave it no special role either).
            if name == Array(key.utf8) { return String(decoding: bytes[start..<i], as: UTF8.self) }
            ws()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ",") else { return nil }
            i += 1
        }
    }

    /// A string, a number, true, false or null: what an id may be.
    static func isScalar(_ raw: String) -> Bool {
        guard let c = raw.first else { return false }
        return c != "{" && c != "["
    }
}

// MARK: - In process

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
        guard shouldUpgrade(head) != nil else {
            let refusal = socketRefusal(path: path, method: head.method, uri: head.uri, headers: head.headers)
            return (Int(refusal.status.code), refusal.body)
        }
        do { try upgraded(channel, head) } catch { return (500, Data("{\"error\":\"\(error)\"}".utf8)) }
        return nil
    }
}
