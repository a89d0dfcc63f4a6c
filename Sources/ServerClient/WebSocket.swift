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
    /// Hands an outcome to the thread that owns the engine (`NetIO.post`, or the pair's transport).
    let post: (@escaping () -> Void) -> Void
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

    public init(post: @escaping (@escaping () -> Void) -> Void) { self.post = post }

    public func attach(_ channel: NIOCore.Channel) {
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
        handler.finish(code: 1006, reason: "the socket did not open: \(handler.words(error))")
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        handler.finish(code: 1006, reason: "connection lost")
        context.fireChannelInactive()
    }
}

/// Frames of an upgraded client socket: text to the owner, control frames answered.
public final class ClientFrameHandler: ChannelInboundHandler, @unchecked Sendable {  // touched on its channel's loop only
    public typealias InboundIn = WebSocketFrame
    public typealias OutboundOut = WebSocketFrame
    private let socket: WebSocket
    private let opened: (ClientSocket) -> Void
    private let text: (Data) -> Void
    private let closed: (Int, String) -> Void
    private var finished = false
    private var closeCode: Int?
    private var closeReason = ""
    private let io: NetIOPoster
    /// A network failure in a person's words (`NetIO.words`).
    let words: (Error) -> String

    public init(socket: WebSocket, opened: @escaping (ClientSocket) -> Void, text: @escaping (Data) -> Void, closed: @escaping (Int, String) -> Void,
                words: @escaping (Error) -> String = { "\($0)" }) {
        self.words = words
        self.socket = socket
        self.opened = opened
        self.text = text
        self.closed = closed
        io = NetIOPoster(socket)
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        // Added by the upgrader once the pipeline is the WebSocket's: frames may go now.
        socket.didUpgrade()
        let socket = self.socket, opened = self.opened
        io.post { opened(socket) }
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
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

    public func channelInactive(context: ChannelHandlerContext) {
        finish(code: closeCode ?? 1006, reason: closeCode == nil ? "connection lost" : closeReason)
        context.fireChannelInactive()
    }

    public func errorCaught(context: ChannelHandlerContext, error: Error) {
        closeReason = "\(error)"
        context.close(promise: nil)
    }

    /// Reports the end once.
    public func finish(code: Int, reason: String) {
        guard !finished else { return }
        finished = true
        let closed = self.closed
        io.post { closed(code, reason) }
    }
}

/// Posts a socket's outcomes to the thread that owns the engine.
struct NetIOPoster: @unchecked Sendable {
    let socket: WebSocket
    init(_ socket: WebSocket) { self.socket = socket }
    func post(_ work: @escaping () -> Void) { socket.post(work) }
}

extension WebSocket {
    /// A client WebSocket's pipeline on `channel` (on its loop), whatever carries the bytes — a
    /// socket (`NetIO`), or the in-process pair's channel (`WorldPair`), so both read the
    /// server's bytes with the same code: TLS first if given, HTTP with the upgrade, then
    /// frames to `handler`. Bytes that come in the same read as the server's `101` (its first
    /// frames, often) are passed on to the WebSocket, not dropped: NIO's HTTP client drops what
    /// follows an upgrade unless told, which lost a relay's first `contactsChanged`.
    public static func configure(_ channel: NIOCore.Channel, tls: NIOSSLClientHandler?, handler: ClientFrameHandler) throws {
        let upgrader = NIOWebSocketClientUpgrader(maxFrameSize: 1 << 16, upgradePipelineHandler: { channel, _ in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(
                    NIOWebSocketFrameAggregator(minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 64, maxAccumulatedFrameSize: 1 << 16))
                try channel.pipeline.syncOperations.addHandler(handler)
            }
        })
        // Made, added and removed on the channel's loop.
        let watcher = NIOLoopBound(UpgradeFailureWatcher(handler: handler), eventLoop: channel.eventLoop)
        if let tls { try channel.pipeline.syncOperations.addHandler(tls) }
        try channel.pipeline.syncOperations.addHTTPClientHandlers(
            leftOverBytesStrategy: .forwardBytes,
            withClientUpgrade: (upgraders: [upgrader], completionHandler: { context in
                context.pipeline.syncOperations.removeHandler(watcher.value, promise: nil)
            }))
        try channel.pipeline.syncOperations.addHandler(watcher.value)
    }

    /// The opening request of a socket to `path` (the upgrader adds its own headers).
    public static func sendOpening(_ channel: NIOCore.Channel, host: String, port: Int, path: String, token: String) {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: "\(host):\(port)")
        headers.add(name: ProtocolVersion.header, value: ProtocolVersion.headerValue)
        headers.add(name: "Authorization", value: "Bearer \(token)")
        headers.add(name: "Content-Length", value: "0")
        channel.write(HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers)), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
    }
}
