import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOTLS
import ServerProtocol
import SyncCore
import SyncEngine

/// The client's keep-alive connections to its server, as a browser keeps them to a host: at
/// most `size` open at once, each carrying one request at a time (HTTP/1.1, no pipelining), and
/// the requests queued in order for the first connection that is free. A full catch-up of 25
/// objects goes through at most `size` connections instead of 25, so many clients behind one
/// address stay within the server's per-address limits, and each request after a connection's
/// first costs no TCP or TLS handshake.
///
/// An idle connection is closed after `idleLifetime`, well before the server's idle timeout
/// (30 s by default), so the client rarely sends on a connection the server is closing; a `GET`
/// whose reused connection closes before any byte of its answer is sent once more on a new one
/// (the server had not answered; a `GET` changes nothing). A request whose new connection ends
/// before its TLS handshake completes never left the client (nothing is sent before the
/// handshake): it goes again, whatever its method, after 0.25, 0.5, 1 s, then every 2 s until
/// its own deadline (a server at its limit of connections waiting for a first request from one
/// address, `--peer-heads`, closes the oldest, and over TLS it cannot say why). Any other request that loses its connection
/// fails, as it did with a connection of its own: a publish is not sent twice.
///
/// Every field is touched on `loop` only.
final class ConnectionPool: @unchecked Sendable {
    /// Connections open at once: six, as browsers hold to one host over HTTP/1.1. A full catch-up
    /// (25 requests of the default six contacts) takes five rounds of the server's latency
    /// instead of one; fifty clients behind one address hold 300 connections, every one of them
    /// its user's once its first request is read (`--user-connections`).
    static let size = 6
    /// An idle connection lives this long.
    static let idleLifetime = TimeAmount.seconds(10)

    let loop: EventLoop
    private let connect: (EventLoop, PooledConnection) -> EventLoopFuture<NIOCore.Channel>
    private let plain: Bool
    private var queue: [PendingRequest] = []
    private var idle: [PooledConnection] = []
    /// Connections open or opening.
    private var held = 0
    /// Connections opened whose first answer has not begun: at most one at a time, so a
    /// client that starts with 25 requests does not open six connections at once (fifty
    /// clients behind one address starting together would hold 300 connections waiting for
    /// their first request to be read, against the server's `--peer-heads`). The pool grows by
    /// one connection each answer's round trip.
    private var unproven = 0
    /// Whether a server answered plain HTTP on this pool: then a connection cut before its
    /// answer is no sign of a TLS server.
    let heardPlainHTTP = NIOLockedValueBox(false)

    init(loop: EventLoop, plain: Bool, connect: @escaping (EventLoop, PooledConnection) -> EventLoopFuture<NIOCore.Channel>) {
        self.loop = loop
        self.plain = plain
        self.connect = connect
    }

    /// Queues a request; its promise completes with the answer, or fails after `timeout`.
    func enqueue(_ request: PendingRequest, timeout: TimeAmount) {
        loop.preconditionInEventLoop()
        request.deadline = loop.scheduleTask(in: timeout) { [self] in
            if let i = queue.firstIndex(where: { $0 === request }) { queue.remove(at: i) }
            request.finish(.failure(TransportError("no answer in \(timeout.nanoseconds / 1_000_000_000) s")))
            request.connection?.abandon()
        }
        queue.append(request)
        dispatch()
    }

    /// Gives the queue's oldest requests to free connections, opening more up to `size`.
    private func dispatch() {
        while !queue.isEmpty {
            if let connection = idle.popLast() {
                connection.send(queue.removeFirst())
            } else if held < Self.size, unproven == 0 {
                held += 1
                unproven += 1
                let connection = PooledConnection(pool: self, plain: plain)
                connect(loop, connection).whenComplete { [self] result in
                    switch result {
                    case .success: release(connection)
                    case .failure(let error):
                        // Nothing answers: the oldest waiting request fails with why, as it did with a
                        // connection of its own; the next ones try a connection of their own in turn.
                        // A server that took the connection and closed it at once (a reset: at a limit
                        // of its own, over TLS) read nothing of it: the request goes again.
                        held -= 1
                        unproven -= 1
                        if !queue.isEmpty {
                            let request = queue.removeFirst()
                            if Self.isReset(error) { resendUndelivered(request) } else { request.finish(.failure(error)) }
                        }
                        dispatch()
                    }
                }
            } else {
                return
            }
        }
    }

    /// A connection is free: it takes the oldest waiting request, or waits idle for one.
    func release(_ connection: PooledConnection) {
        guard !connection.isGone else { return }  // `dropped` has counted it out
        if !queue.isEmpty { return connection.send(queue.removeFirst()) }
        idle.append(connection)
        connection.idleUntilClosed(after: Self.idleLifetime)
    }

    /// A request handed to a connection that had just closed: first in line again.
    func unsent(_ request: PendingRequest) {
        queue.insert(request, at: 0)
        dispatch()
    }

    /// A connection's first answer began: the server reads it, and another may open.
    func proven() {
        unproven -= 1
        dispatch()
    }

    /// The server answered without reading `request` (`ProtocolHeader.requestNotRead`): a limit
    /// of its own refused the connection. Nothing of it was done, so it goes again, first in
    /// line, after `delay` — whatever its method — until its own deadline.
    func notRead(_ request: PendingRequest, again delay: TimeAmount) {
        request.connection = nil
        loop.scheduleTask(in: delay) { [self] in
            guard !request.isFinished else { return }
            queue.insert(request, at: 0)
            dispatch()
        }
    }

    /// A connection closed (either side). Its request, if one was under way, is `lost`.
    /// `undelivered`: the connection ended before its TLS handshake completed, by the other side
    /// (not a certificate refused): the request never left.
    func dropped(_ connection: PooledConnection, lost request: PendingRequest?, reused: Bool, answerBegun: Bool, proven: Bool,
                 undelivered: Bool = false, error: Error? = nil) {
        if let i = idle.firstIndex(where: { $0 === connection }) { idle.remove(at: i) }
        held -= 1
        if !proven { unproven -= 1 }
        if let request {
            if undelivered {
                resendUndelivered(request)
            } else if reused, !answerBegun, request.method == .GET, !request.sentAgain {
                request.sentAgain = true
                queue.insert(request, at: 0)
            } else {
                request.finish(.failure(error ?? cutWords(answerBegun: answerBegun)))
            }
        }
        dispatch()
    }

    /// A request that never left (its connection ended before the TLS handshake, or was reset
    /// as it opened) goes again until its own deadline: after 0.25 s, 0.5 s, 1 s, then every 2 s,
    /// each with up to a quarter second more, so that a team's clients do not come back together.
    private func resendUndelivered(_ request: PendingRequest) {
        request.undeliveredResends += 1
        let wait = Int64(min(2_000, 125 << min(request.undeliveredResends, 5))) + Int64.random(in: 0...250)
        notRead(request, again: .milliseconds(wait))
    }

    /// How a connection ended before its TLS handshake was done (`failure`: nil for a clean
    /// close) says whether the other side closed it — a server at one of its limits, which
    /// over TLS cannot say which, so the request never left and is sent again — or the
    /// handshake failed on its own terms (a certificate refused, a peer that is not TLS).
    static func closedInHandshake(_ failure: Error?) -> Bool {
        guard let failure else { return true }  // a clean close
        if isReset(failure) { return true }
        if case NIOSSLError.uncleanShutdown = failure { return true }
        if case NIOSSLError.handshakeFailed(let e) = failure {
            // NIOSSL's own word for a close mid-handshake, as it comes under load (a soak's
            // 50 bots starting at once); BoringSSL's, as it comes from a quiet server.
            if case BoringSSLError.sslError(let stack) = e, stack.contains(.eofDuringHandshake) { return true }
            return "\(e)".lowercased().contains("unexpected eof")
        }
        return false
    }

    /// ECONNRESET: the server closed the connection as it opened. (A refused connect is
    /// ECONNREFUSED, though NIO's words for it say "connection reset (error set)".)
    static func isReset(_ error: Error) -> Bool {
        if let io = error as? IOError { return io.errnoCode == ECONNRESET }
        if let c = error as? NIOConnectionError { return !c.connectionErrors.isEmpty && c.connectionErrors.allSatisfy { isReset($0.error) } }
        return false
    }

    private func cutWords(answerBegun: Bool) -> Error {
        if answerBegun { return TransportError("the connection closed in the middle of the answer") }
        let guess = plain && !heardPlainHTTP.withLockedValue { $0 }
        return TransportError("the connection closed before the answer" + (guess ? " (if the server serves TLS, use https://)" : ""))
    }
}

/// A request waiting for, or carried by, a pooled connection.
final class PendingRequest: @unchecked Sendable {  // on the pool's loop only
    let method: HTTPMethod
    let head: HTTPRequestHead
    let body: Data?
    let promise: EventLoopPromise<NetIO.Answer>
    var deadline: Scheduled<Void>?
    var connection: PooledConnection?
    /// Sent once more after its reused connection closed before answering.
    var sentAgain = false
    /// Sent again after connections that ended before their TLS handshake (`ConnectionPool.dropped`).
    var undeliveredResends = 0
    private var done = false
    var isFinished: Bool { done }

    init(head: HTTPRequestHead, body: Data?, promise: EventLoopPromise<NetIO.Answer>) {
        method = head.method
        self.head = head
        self.body = body
        self.promise = promise
    }

    func finish(_ result: Result<NetIO.Answer, Error>) {
        guard !done else { return }
        done = true
        deadline?.cancel()
        connection = nil
        promise.completeWith(result)
    }
}

/// One keep-alive connection of the pool: one request at a time.
final class PooledConnection: ChannelInboundHandler, @unchecked Sendable {  // on the pool's loop only
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let pool: ConnectionPool
    private var channel: NIOCore.Channel?
    private var current: PendingRequest?
    private var served = 0
    private var status = 0
    private var body = Data()
    private var keepAlive = true
    private var answerBegun = false
    /// Whether an answer has begun on this connection yet.
    private var proven = false
    /// The answer under way says the server did not read its request: after this, send it again.
    private var notReadAgain: TimeAmount?
    private var idleClose: Scheduled<Void>?
    private var gone = false
    var isGone: Bool { gone }
    /// What NIO said went wrong, if anything, before the connection closed.
    private var failure: Error?
    /// Whether its TLS handshake completed (always, on plain HTTP): before, nothing was sent.
    private var handshaken: Bool

    init(pool: ConnectionPool, plain: Bool) {
        self.pool = pool
        handshaken = plain
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event { handshaken = true }
        context.fireUserInboundEventTriggered(event)
    }

    /// The connection ended before its handshake, and not because this side refused the
    /// server's certificate or the server does not speak TLS: the other side closed it.
    private var closedBeforeHandshake: Bool { !handshaken && ConnectionPool.closedInHandshake(failure) }

    func handlerAdded(context: ChannelHandlerContext) { channel = context.channel }

    func send(_ request: PendingRequest) {
        idleClose?.cancel()
        guard let channel, !gone else { return pool.unsent(request) }  // closed as it was handed over
        current = request
        request.connection = self
        status = 0
        body = Data()
        answerBegun = false
        channel.write(HTTPClientRequestPart.head(request.head), promise: nil)
        if let data = request.body { channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: data))), promise: nil) }
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
    }

    func idleUntilClosed(after lifetime: TimeAmount) {
        idleClose?.cancel()
        idleClose = pool.loop.scheduleTask(in: lifetime) { [weak self] in self?.channel?.close(promise: nil) }
    }

    /// Its request ran out of time: the connection goes with it (an answer may still come on it).
    func abandon() {
        current = nil
        channel?.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            answerBegun = true
            status = Int(head.status.code)
            keepAlive = head.isKeepAlive
            notReadAgain = head.headers.first(name: ProtocolHeader.requestNotRead) == nil ? nil
                : .seconds(Int64(min(5, max(1, head.headers.first(name: "Retry-After").flatMap { Int($0) } ?? 1))))
            pool.heardPlainHTTP.withLockedValue { $0 = true }
            if !proven {
                proven = true
                pool.proven()
            }
        case .body(let buffer):
            guard let request = current else { return }  // an answer given up on (over the cap, or late)
            // An answer is read up to the most the protocol has (`MessageLimits.maxAnswerBytes`):
            // past it, the request fails in words and the connection goes, the rest unread.
            guard body.count + buffer.readableBytes <= MessageLimits.maxAnswerBytes else {
                current = nil
                body = Data()
                request.finish(.failure(TransportError(
                    "the server's answer is longer than the \(MessageLimits.maxAnswerBytes / (1 << 20)) MiB a client reads; not read")))
                return context.close(promise: nil)
            }
            body.append(contentsOf: buffer.readableBytesView)
        case .end:
            let request = current
            current = nil
            served += 1
            if let again = notReadAgain, let request {
                pool.notRead(request, again: again)
                return context.close(promise: nil)
            }
            request?.finish(.success(NetIO.Answer(status: status, body: body)))
            body = Data()
            if keepAlive, !gone { pool.release(self) } else { context.close(promise: nil) }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        failure = failure ?? error
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        guard !gone else { return }
        gone = true
        idleClose?.cancel()
        let lost = current
        current = nil
        // A reset of a connection the server closed while idle is no failure worth a word: the
        // pool sends a GET again; anything else says what NIO said.
        pool.dropped(self, lost: lost, reused: served > 0, answerBegun: answerBegun, proven: proven, undelivered: closedBeforeHandshake, error: failure)
    }
}
