import Foundation
import NIOCore
import NIOWebSocket
import ServerProtocol
import Wire

// The node and the push relay as WebSockets. Text frames of JSON; a request has
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
        guard !closing else { return }  // its close frame is written: nothing more is read
        let frame = Frame(unwrapInboundIn(data))
        switch frame {
        case .text, .binary, .ping, .pong:
            // Every frame counts against the user's rate, control frames too: each ping costs
            // an answer. Past it one close, not an error frame for each frame over the limit
            // (which would grow the server's memory as fast as a peer can send).
            guard server.allow(user.name) else {
                return close(code: .policyViolation, reason: "more than \(Int(WorldServer.requestsPerSecond)) frames a second")
            }
        case .close, .refused:
            break
        }
        switch frame {
        case .text(let bytes):
            server.catchUp()
            defer { server.pump() }
            guard let object = WireValue.parse(Data(bytes))?.object else {
                return error(nil, "a frame must be one JSON object (\(bytes.count) bytes were not)")
            }
            // The id goes back exactly as it came (JSON-RPC 2.0 §5), its JSON text untouched:
            // not `true` as 1, not 2^53+1 rounded, not a string id as null.
            let id = RawJSON.member("id", of: bytes)
            if let id, !RawJSON.isScalar(id) { return error(nil, "an id is a string, a number or null") }
            guard let method = object["method"]?.string else { return error(id, "missing \"method\"") }
            let params = object["params"]?.object ?? [:]
            request(id: id, method: method, params: params)
        case .binary:
            // Refused (RFC 6455 §7.4.1, 1003), and counted like any frame: a flood of them
            // cost memory and every other user's latency.
            close(code: .unacceptableData, reason: "binary frames are not understood: send text frames of JSON")
        case .ping(let payload):
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: ByteBuffer(bytes: payload))), promise: nil)
        case .pong:
            break
        case .close(let code, _):
            // RFC 6455 §5.5.1: echo the peer's code.
            close(code: code.map { WebSocketErrorCode(codeNumber: Int($0)) } ?? .normalClosure, reason: "")
        case .refused(let code, let reason):
            close(code: WebSocketErrorCode(codeNumber: Int(code)), reason: reason)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed()
        context.fireChannelInactive()
    }

    /// What the frame reader refused: a message past the frame or fragment limits is 1009, a
    /// frame that breaks the protocol (a text frame inside a fragmented message, a control
    /// frame split, reserved bits) 1002. Each closes the socket with its code and a reason,
    /// never silently.
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
        send(RPC.reply(rawId: id, method, params))
    }

    func error(_ id: String?, _ message: String) {
        send(RPC.error(rawId: id, message))
    }

    /// A close frame with a code and a reason, then the end of the socket.
    func close(code: WebSocketErrorCode, reason: String) {
        guard let channel, !closing else { return }
        closing = true
        var buffer = channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        buffer.write(webSocketErrorCode: code)
        buffer.writeString(String(decoding: reason.utf8.prefix(120), as: UTF8.self))
        // A lingering close: the close frame, then our half of the stream (FIN), and nothing more
        // read; the socket closes 250 ms later. Closed at once with the peer's bytes unread, it
        // would be reset at once, and a peer that flooded would often lose the close frame to
        // the reset before reading it. A flood stops when the unread bytes fill the window.
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .connectionClose, data: buffer)).whenComplete { _ in
            channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
            let halfClosed = channel.eventLoop.makePromise(of: Void.self)
            halfClosed.futureResult.whenFailure { _ in channel.close(promise: nil) }
            channel.close(mode: .output, promise: halfClosed)
        }
        // A peer that reads nothing never lets the close frame's write complete; a flood is cut
        // off by the reset a quarter of a second later.
        channel.eventLoop.scheduleTask(in: .milliseconds(250)) { channel.close(promise: nil) }
    }
}
