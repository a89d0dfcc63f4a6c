import Foundation
import NIOCore
import NIOHTTP1
import NIOWebSocket
import ServerProtocol

/// Opening the node's and the push relay's WebSockets (RFC 6455 §4): who may, and the
/// pipeline an upgraded connection gets.
extension WorldServer {
    /// The headers to upgrade with, or nil to let the request through to `handle`, which
    /// says why not (a missing or other protocol version first, as for every request). A
    /// refusal that depends on the moment (the user's sockets, its rate) is decided here
    /// once and kept for the connection's answer (`refusedUpgrades`), so the
    /// answer says the reason it was refused for: asked again a few milliseconds later, a
    /// bucket that refilled a token would make a rate-limited upgrade look like no upgrade (426).
    func shouldUpgrade(_ head: HTTPRequestHead, connection: ObjectIdentifier? = nil) -> HTTPHeaders? {
        let path = URLComponents(string: head.uri)?.path ?? ""
        guard Route.sockets.contains(path), versionRefused(head.headers) == nil, Self.upgradeProblem(head) == nil,
              let user = user(head.headers) else { return nil }
        let refusal: Answer
        if socketsByUser[user.name, default: 0] >= Self.maxSocketsPerUser {
            refusal = Self.tooManySockets(user.name)
        } else if !allow(user.name) {
            refusal = Self.overRate
        } else {
            return HTTPHeaders()
        }
        if let connection { refusedUpgrades[connection] = refusal }
        return nil
    }

    static func tooManySockets(_ user: String) -> Answer {
        .error(.tooManyRequests, "\(user) holds \(maxSocketsPerUser) sockets already")
    }

    static var overRate: Answer { .error(.tooManyRequests, "more than \(Int(requestsPerSecond)) requests a second: slow down") }

    /// What makes a request no WebSocket opening handshake (RFC 6455 §4.2.1), or nil. NIO's
    /// upgrader checks the version, and would upgrade a POST, a missing `Connection: Upgrade`
    /// and a key that is not 16 bytes all the same.
    static func upgradeProblem(_ head: HTTPRequestHead) -> String? {
        guard head.method == .GET else { return "a WebSocket opens with GET, not \(head.method)" }
        if let host = hostProblem(head) { return host }
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

    /// Why a request to a socket's path was not upgraded: the refusal `shouldUpgrade` kept for
    /// the connection, or, for a request it was not asked about, why it is none.
    func socketRefusal(connection: ObjectIdentifier? = nil, path: String, method: HTTPMethod = .GET, uri: String = "", headers: HTTPHeaders) -> Answer {
        if let connection, let kept = refusedUpgrades.removeValue(forKey: connection) { return kept }
        if let refused = versionRefused(headers) { return refused }
        if headers[canonicalForm: "Upgrade"].contains(where: { $0.lowercased() == "websocket" }),
           let problem = Self.upgradeProblem(HTTPRequestHead(version: .http1_1, method: method, uri: uri, headers: headers)) {
            return .error(.badRequest, problem)
        }
        guard let user = user(headers) else {
            return .error(.unauthorized, "\(path) needs Authorization: Bearer SECRET (the secret POST \(Route.join) gave)")
        }
        if socketsByUser[user.name, default: 0] >= Self.maxSocketsPerUser { return Self.tooManySockets(user.name) }
        if limited(user.name) { return Self.overRate }
        return .error(.upgradeRequired, "\(path) is a WebSocket: connect with Upgrade: websocket")
    }

    /// The pipeline of an upgraded socket: fragments joined up to the frame limit, then the
    /// node's or the push relay's handler.
    func upgraded(_ channel: NIOCore.Channel, _ head: HTTPRequestHead) throws {
        let path = URLComponents(string: head.uri)?.path ?? ""
        guard let user = user(head.headers) else { throw ChannelError.inputClosed }
        let name = user.name
        socketsByUser[name, default: 0] += 1
        host.seen(user)
        channel.closeFuture.whenComplete { [self] _ in
            socketsByUser[name, default: 1] -= 1
            if let user = host.user(named: name) { host.seen(user) }  // away counts from the last socket's end
        }
        try channel.pipeline.syncOperations.addHandler(SocketSilence(pingAfter: pingAfter, pongWithin: pongTimeout))
        try channel.pipeline.syncOperations.addHandler(FrameRules())
        try channel.pipeline.syncOperations.addHandler(
            NIOWebSocketFrameAggregator(minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 64, maxAccumulatedFrameSize: Self.maxFrameBytes))
        if path == Route.node {
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

/// NIO's upgrade handler keeps a buffer of 16 messages from the moment a connection opens,
/// about 1.2 KB, until the connection's first request: 8 192 connections that never finish a
/// head hold 9.7 MB of it (`synchat-bench hostile crowd`). This one stands in its place and
/// puts NIO's there only when the first request asks to upgrade; either way it leaves after
/// the first head, as NIO's does, so an upgrade asked after another request is refused in words.
final class UpgradeOnAsk: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart

    private let make: (ChannelPipeline.SynchronousOperations) -> HTTPServerUpgradeHandler?
    private let firstHead: (NIOCore.Channel, HTTPRequestHead) -> Void

    private init(firstHead: @escaping (NIOCore.Channel, HTTPRequestHead) -> Void,
                 make: @escaping (ChannelPipeline.SynchronousOperations) -> HTTPServerUpgradeHandler?) {
        self.make = make
        self.firstHead = firstHead
    }

    /// Swaps the upgrade handler `configureHTTPServerPipeline` added for one made on demand,
    /// with the same encoder and the same HTTP handlers to remove once upgraded. `firstHead` is
    /// told when the connection's first request head is whole, upgrade or not.
    static func replaceUpgradeHandler(in pipeline: ChannelPipeline.SynchronousOperations, upgrade: NIOHTTPServerUpgradeConfiguration,
                                      firstHead: @escaping (NIOCore.Channel, HTTPRequestHead) -> Void) throws {
        let eager = try pipeline.handler(type: HTTPServerUpgradeHandler.self)
        let stand = UpgradeOnAsk(firstHead: firstHead) { now in
            guard let encoder = try? now.handler(type: HTTPResponseEncoder.self),
                  let decoder = try? now.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self) else { return nil }
            var extra: [RemovableChannelHandler] = [decoder]
            if let pipelining = try? now.handler(type: HTTPServerPipelineHandler.self) { extra.append(pipelining) }
            if let validator = try? now.handler(type: NIOHTTPResponseHeadersValidator.self) { extra.append(validator) }
            return HTTPServerUpgradeHandler(upgraders: upgrade.upgraders, httpEncoder: encoder, extraHTTPHandlers: extra,
                                            upgradeCompletionHandler: upgrade.completionHandler)
        }
        try pipeline.addHandler(stand, position: .after(eager))
        pipeline.removeHandler(eager, promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let head) = unwrapInboundIn(data) else { return context.fireChannelRead(data) }
        firstHead(context.channel, head)
        if !head.headers[canonicalForm: "upgrade"].isEmpty, let upgrader = make(context.pipeline.syncOperations) {
            do { try context.pipeline.syncOperations.addHandler(upgrader, position: .after(self)) } catch { return context.fireErrorCaught(error) }
        }
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
