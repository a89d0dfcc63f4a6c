import Foundation
import NIOCore
import NIOHTTP1
import NIOTLS

/// What a connection refused or closed by a limit of the `ConnectionTable` is told: the
/// limit by its flag and value, never a bare close a client must guess about. On plain HTTP
/// the answer is written below the codec, before the request was read (so no request of that
/// connection was handled: any may be sent again); over TLS nothing can be said before the
/// handshake, and the connection only closes.
extension WorldServer {
    /// The limit in words: which it is, its flag and value, and what to do.
    static func words(_ limit: ConnectionTable.Limit) -> String {
        switch limit {
        case .maxConnections(let n):
            return "this server holds \(n) connections, its most (--max-connections \(n)), and nobody holds more than this address would: "
                + "try again in a moment"
        case .peerConnections(let peer, let n):
            return "\(peer) holds \(n) connections that have shown no user's secret (--peer-connections \(n)): this one was refused; "
                + "try again in a moment"
        case .peerHeads(let peer, let n):
            return "\(peer) holds \(n) connections whose first request has not come whole (--peer-heads \(n)): the oldest, this one, "
                + "was closed before its request was read"
        case .userConnections(let user, let n):
            return "\(user) holds \(n) connections (--user-connections \(n)): its oldest, this one, was closed"
        case .peerRate(let peer, let n):
            return "\(peer) opened more than \(n) connections a second (--peer-rate \(n)): this one was refused; try again in a moment"
        }
    }

    /// A connection the table refused as it came: on plain HTTP it answers `503` at once (its
    /// request, if any, unread), then closes; over TLS it closes.
    func refuse(_ channel: NIOCore.Channel, by limit: ConnectionTable.Limit, plain: Bool) throws {
        guard plain else { return channel.close(promise: nil) }
        try channel.pipeline.syncOperations.addHandler(RefuseOnOpen(RawAnswer.bytes(.error(.serviceUnavailable, Self.words(limit)), notReadRetryAfter: 1)))
    }

    /// A connection the table closed to keep a limit. One still waiting for its first head
    /// (`--peer-heads`) is told why, on plain HTTP and over TLS once its handshake is done
    /// (before, nothing can be said: it closes, and the client knows that its request never
    /// left); any other (an answer may be under way, or it is a WebSocket) closes.
    func shed(_ channel: NIOCore.Channel, by limit: ConnectionTable.Limit, plain: Bool) {
        let canSay = plain || ((try? channel.pipeline.syncOperations.handler(type: TLSHandshakeSeen.self))?.done ?? false)
        guard canSay, case .peerHeads = limit,
              let below = try? channel.pipeline.syncOperations.context(handlerType: BackPressureHandler.self) else {
            return channel.close(promise: nil)
        }
        below.writeAndFlush(NIOAny(RawAnswer.bytes(.error(.serviceUnavailable, Self.words(limit)), notReadRetryAfter: 1))).whenComplete { _ in
            channel.close(mode: .output, promise: nil)
        }
        RequestHandler.closeSoon(channel)
    }
}

/// The whole pipeline of a connection refused as it came: it writes its answer once the
/// connection is active, ends its side (a close with the peer's request unread would reset
/// the connection and destroy the answer before it is read), discards what comes, and goes
/// after a second whatever the peer does.
final class RefuseOnOpen: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    private let answer: ByteBuffer

    init(_ answer: ByteBuffer) { self.answer = answer }

    func channelActive(context: ChannelHandlerContext) {
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(answer)).whenComplete { _ in channel.close(mode: .output, promise: nil) }
        RequestHandler.closeSoon(channel)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}  // the request is not read

    func errorCaught(context: ChannelHandlerContext, error: Error) { context.close(promise: nil) }
}

/// Sits after the TLS handler of a connection: its handshake is done (`done`, and `completed`
/// is told), so it may send its first request now, and a limit that closes it can first say
/// which (`shed`).
final class TLSHandshakeSeen: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    private(set) var done = false
    private let completed: () -> Void

    init(completed: @escaping () -> Void = {}) { self.completed = completed }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event, !done {
            done = true
            completed()
        }
        context.fireUserInboundEventTriggered(event)
    }
}
