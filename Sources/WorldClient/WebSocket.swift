import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import ServerProtocol
import SyncCore
import SyncEngine
import Wire

/// One client WebSocket: send text frames (masked, as a client must), close.
public final class WebSocket: ClientSocket, @unchecked Sendable {  // `channel` and `upgraded` are guarded by `lock`
    private let io: NetIO
    private let lock = NSLock()
    private var channel: NIOCore.Channel?
    private var closeAsked = false
    /// The upgrade completed: the pipeline takes frames. Before it, it is HTTP's, and a frame
    /// written there stopped the process (NIO: "tried to decode as type HTTPPart… but found
    /// WebSocketFrame"): `b` just after `f` closed a socket still opening.
    private var upgraded = false

    /// Whether the channel is there (connected) and the upgrade done; for tests.
    var state: (attached: Bool, upgraded: Bool) {
        lock.lock()
        defer { lock.unlock() }
        return (channel != nil, upgraded)
    }

    /// The upgrade completed (on the channel's loop).
    func didUpgrade() {
        lock.lock()
        upgraded = true
        lock.unlock()
    }

    init(io: NetIO) { self.io = io }

    func attach(_ channel: NIOCore.Channel) {
        lock.lock()
        self.channel = channel
        let close = closeAsked
        lock.unlock()
        if close { channel.close(promise: nil) }
    }

    public func send(_ value: JSONValue) {
        lock.lock()
        let channel = upgraded ? self.channel : nil
        lock.unlock()
        guard let channel else { return }
        let data = value.data
        channel.eventLoop.execute {
            let frame = WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: ByteBuffer(bytes: data))
            channel.writeAndFlush(frame, promise: nil)
        }
    }

    /// Closes the socket (a close frame, then the end); nothing more is reported but `closed`.
    public func close() {
        lock.lock()
        closeAsked = true
        let channel = self.channel
        let upgraded = self.upgraded
        lock.unlock()
        guard let channel else { return }
        // Still opening: there is no WebSocket to close yet, only the connection.
        guard upgraded else { return channel.close(promise: nil) }
        channel.eventLoop.execute {
            var buffer = channel.allocator.buffer(capacity: 2)
            buffer.write(webSocketErrorCode: .normalClosure)
            channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: buffer))
                .whenComplete { _ in channel.close(promise: nil) }
        }
    }
}

/// A refused upgrade (401, 426, 429…) ends the socket with its reason.
final class UpgradeFailureWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    let handler: ClientFrameHandler
    init(handler: ClientFrameHandler) { self.handler = handler }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) {
            handler.finish(code: 1006, reason: "the server refused the socket: HTTP \(head.status.code)")
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        handler.finish(code: 1006, reason: "the server refused the socket: \(error)")
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        handler.finish(code: 1006, reason: "connection lost")
        context.fireChannelInactive()
    }
}

/// Frames of an upgraded client socket: text to the owner, control frames answered.
final class ClientFrameHandler: ChannelInboundHandler, @unchecked Sendable {  // touched on its channel's loop only
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame
    private let socket: WebSocket
    private let opened: (ClientSocket) -> Void
    private let text: (Data) -> Void
    private let closed: (Int, String) -> Void
    private var finished = false
    private var closeCode: Int?
    private var closeReason = ""
    private let io: NetIOPoster

    init(socket: WebSocket, opened: @escaping (ClientSocket) -> Void, text: @escaping (Data) -> Void, closed: @escaping (Int, String) -> Void) {
        self.socket = socket
        self.opened = opened
        self.text = text
        self.closed = closed
        io = NetIOPoster(socket)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // Added by the upgrader once the pipeline is the WebSocket's: frames may go now.
        socket.didUpgrade()
        let socket = self.socket, opened = self.opened
        io.post { opened(socket) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch Frame(unwrapInboundIn(data)) {
        case .text(let bytes):
            let text = self.text
            let data = Data(bytes)
            io.post { text(data) }
        case .ping(let payload):
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: ByteBuffer(bytes: payload))), promise: nil)
        case .close(let code, let reason):
            closeCode = code.map(Int.init) ?? 1005
            closeReason = reason
            context.close(promise: nil)
        case .refused(let code, let reason):
            closeCode = Int(code)
            closeReason = "the server sent \(reason)"
            context.close(promise: nil)
        case .binary, .pong:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(code: closeCode ?? 1006, reason: closeCode == nil ? "connection lost" : closeReason)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        closeReason = "\(error)"
        context.close(promise: nil)
    }

    /// Reports the end once.
    func finish(code: Int, reason: String) {
        guard !finished else { return }
        finished = true
        let closed = self.closed
        io.post { closed(code, reason) }
    }
}

/// Posts a socket's outcomes to its `NetIO`.
struct NetIOPoster: @unchecked Sendable {
    let socket: WebSocket
    init(_ socket: WebSocket) { self.socket = socket }
    func post(_ work: @escaping () -> Void) { socket.ioForPosting.post(work) }
}

extension WebSocket {
    var ioForPosting: NetIO { io }
}
