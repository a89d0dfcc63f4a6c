import Foundation
import NIOCore
import NIOWebSocket
import Wire

// The node and the push relay as WebSockets (issue 17). Text frames of JSON; a request has
// an `id`, a `method` and `params`; its answer has the same `id` and `method` with `params`,
// or an `error` object with a `message`; a notification has a `method` and no `id`.
// Protocol pings are answered as RFC 6455 says, but they prove nothing about the node: the
// engine's keepalive is the application-level `ping` method, which a stale socket never
// answers.

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
