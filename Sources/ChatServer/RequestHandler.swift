import Foundation
import NIOCore
import NIOHTTP1

/// Reads one HTTP request (head, body up to the limit, end) and answers it in order.
final class RequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let server: WorldServer
    private var head: HTTPRequestHead?
    private var body = Data()
    private var tooLarge = false
    /// Closes the connection unless what it waits for comes first.
    private var deadline: Scheduled<Void>?
    /// Requests of this connection read so far: a WebSocket opens only on the first.
    private var requestsRead = 0

    init(server: WorldServer) { self.server = server }

    func handlerAdded(context: ChannelHandlerContext) {
        arm(context, in: server.headTimeout)  // the first request's head
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()  // upgraded to a WebSocket, or closed
        deadline = nil
    }

    /// Closes the connection after `delay` unless re-armed or cancelled first.
    private func arm(_ context: ChannelHandlerContext, in delay: TimeAmount) {
        deadline?.cancel()
        let channel = context.channel
        deadline = channel.eventLoop.scheduleTask(in: delay) { channel.close(promise: nil) }
    }

    /// Requests read whose answer is not written yet.
    private var unanswered = 0

    /// The parser's own errors (a broken request line or head): answered 400 with a JSON
    /// line, as every other refusal is, when no answer has begun (one after another would
    /// break the stream; NIO's own handler gave an empty body); the socket closes once the
    /// answer is written, or after a second at most, whatever else it holds.
    func errorCaught(context: ChannelHandlerContext, error: Error) {
        guard let parser = error as? HTTPParserError else { return context.fireErrorCaught(error) }  // a refused upgrade says so itself
        deadline?.cancel()
        if unanswered == 0 {
            Self.respond(context.channel, .error(.badRequest, "not an HTTP/1.1 request this server can read (\(Self.words(parser)))"), keepAlive: false)
            Self.closeSoon(context.channel)
        } else {
            context.close(promise: nil)
        }
    }

    /// A peer that does not read its answers never lets a last write complete: the socket goes
    /// after a second whatever happens.
    static func closeSoon(_ channel: NIOCore.Channel) {
        channel.eventLoop.scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
    }

    /// What the parser found, in words.
    static func words(_ e: HTTPParserError) -> String {
        switch e {
        case .invalidMethod: return "the method is not a method"
        case .invalidURL: return "the path is not a path"
        case .invalidVersion: return "the HTTP version is not one"
        case .headerOverflow: return "the head is too large"
        case .invalidHeaderToken, .invalidContentLength, .unexpectedContentLength, .invalidChunkSize, .invalidConstant,
             .invalidCharactersUsed, .lfExpected:
            return "a malformed head"
        default: return "a malformed request"
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h):
            requestsRead += 1
            // The head came: now its body, within the idle timeout.
            arm(context, in: server.idleTimeout)  // a declared body that does not come
            head = h
            body = Data()
            tooLarge = false
            // A declared body over the limit gets its 413 now, not after reading it (a 1 GB
            // Content-Length is not read only to be thrown away); the socket closes with it.
            if let declared = h.headers.first(name: "Content-Length").flatMap({ Int($0) }), declared > WorldServer.maxBodyBytes {
                self.head = nil
                context.channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
                Self.respond(context.channel, .error(.payloadTooLarge, "the body is larger than \(WorldServer.maxBodyBytes) bytes"), keepAlive: false)
                return
            }
            // RFC 7231 §5.1.1: a client that waits for 100 Continue gets it.
            if h.headers.first(name: "Expect")?.lowercased() == "100-continue" {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: h.version, status: .continue))), promise: nil)
            }
        case .body(let b):
            if body.count + b.readableBytes > WorldServer.maxBodyBytes { tooLarge = true } else { body.append(contentsOf: b.readableBytesView) }
        case .end:
            guard let head else { return }
            self.head = nil
            let channel = context.channel
            // After a CONNECT the parser reads nothing more (the rest would be a tunnel's): the
            // refusal is the connection's last answer.
            if head.method == .CONNECT {
                deadline?.cancel()
                return RawAnswer.write(channel, .error(.methodNotAllowed, "CONNECT: this server is no proxy; it answers GET and POST"))
            }
            let keepAlive = head.isKeepAlive && !tooLarge
            // Answered (maybe later): the next request must come within the idle timeout.
            if keepAlive { arm(context, in: server.idleTimeout) } else { deadline?.cancel() }  // an idle keep-alive
            if tooLarge {
                Self.respond(channel, .error(.payloadTooLarge, "the body is larger than \(WorldServer.maxBodyBytes) bytes"), keepAlive: false)
                return
            }
            // The parser stops after a request that asks for an upgrade: when it is not
            // upgraded (refused, or not the connection's first), the requests after it are read
            // by a new parser once its answer is out.
            let resume = ParserReset.stopsParser(head) && keepAlive, isHead = head.method == .HEAD
            let finish: (NIOCore.Channel, WorldServer.Answer) -> Void = { channel, answer in
                let written = Self.respond(channel, answer, keepAlive: keepAlive, head: isHead)
                if resume { written.whenSuccess { ParserReset.resume(channel) } }
            }
            if let problem = Self.problem(head, first: requestsRead == 1) { return finish(channel, .error(.badRequest, problem)) }
            unanswered += 1
            // The answer may come much later (an indexer's latency): it holds neither the
            // connection nor this handler, so a request whose connection is gone costs only
            // the world's entry for it.
            server.handle(method: head.method, uri: head.uri, headers: head.headers, body: body, peer: WorldServer.peer(channel),
                          connection: ObjectIdentifier(channel)) { [weak self, weak channel] answer in
                self?.unanswered -= 1
                guard let channel, channel.isActive else { return }
                finish(channel, answer)
            }
        }
    }

    /// What makes a request one this server refuses before reading it further, or nil: an
    /// HTTP/1.1 request without exactly one Host (RFC 7230 §5.4), an upgrade that is not the
    /// connection's first request.
    static func problem(_ head: HTTPRequestHead, first: Bool) -> String? {
        if let host = WorldServer.hostProblem(head) { return host }
        if !first, ParserReset.stopsParser(head) {
            return "a WebSocket opens with the first request of a connection (RFC 6455 §4.1): open a new connection for it"
        }
        return nil
    }

    /// Writes an answer; the future completes once its last byte is handed to the socket. The
    /// answer to HEAD has the length of its body, and no body.
    @discardableResult
    static func respond(_ channel: NIOCore.Channel, _ answer: WorldServer.Answer, keepAlive: Bool, head: Bool = false) -> EventLoopFuture<Void> {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "Content-Length", value: "\(answer.body.count)")
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        channel.write(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: answer.status, headers: headers)), promise: nil)
        if !head { channel.write(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: answer.body))), promise: nil) }
        let done = channel.writeAndFlush(HTTPServerResponsePart.end(nil))
        if !keepAlive { done.whenComplete { _ in channel.close(promise: nil) } }
        return done
    }
}
