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

/// The client's sockets, on swift-nio: HTTP requests (on a pool of keep-alive connections,
/// `ConnectionPool`) and WebSockets. NIO's thread does the I/O; every outcome is posted to the
/// `inbox` and runs on the thread that owns the engine when it calls `drain()`, so the
/// engine and its runner stay on one thread. `wakeDescriptor` becomes readable when
/// something is posted: a loop waits on it beside the terminal.
public final class NetIO: ServerTransport, @unchecked Sendable {  // the inbox is guarded by `lock`; the rest is immutable
    public let host: String
    public let port: Int
    /// TLS (https and wss), or nil for plain http and ws.
    public let tls: NIOSSLContext?
    let group: MultiThreadedEventLoopGroup
    private let ownsGroup: Bool
    private let lock = NSLock()
    private var posted: [() -> Void] = []
    private let pipe: (read: Int32, write: Int32)
    /// The keep-alive connections every request goes through (`ConnectionPool`).
    private var pool: ConnectionPool!
    /// Wall seconds a request may take before it fails.
    public static let requestTimeout: Int64 = 30
    /// Where a network failure's detail goes (`--log`): a person reads `words(for:)`, the
    /// log keeps what NIO said.
    public var log: ((String) -> Void)?

    /// A network failure in a person's words: what happened and what to check, never NIO's
    /// type names (`Connection errors: SingleConnectionFailure(target: [IPv4]…`). The detail
    /// goes to `log`.
    public func words(for error: Error) -> String {
        let detail = "\(error)"
        log?("network: \(host):\(port): \(detail)")
        if let t = error as? TransportError { return t.message }
        let lower = detail.lowercased()
        let what: String
        if lower.contains("connection refused") || lower.contains("econnrefused") || lower.contains("connectionrefused") {
            what = "nothing answers at \(host):\(port) (is synchat server running there?)"
        } else if error is NIOSSLError || error is BoringSSLError || error is NIOSSLExtraError || lower.contains("certificate") || lower.contains("handshake"),
                  lower.contains("uncleanshutdown") || lower.contains("unexpected eof") || lower.contains("eof during handshake"), !lower.contains("certificate") {
            // The other side closed during the handshake: a server at a limit of its own (it
            // cannot say which before the handshake) more often than a stranger to TLS.
            what = "\(host):\(port) closed the connection during the TLS handshake (a server at one of its connection limits closes so, "
                + "over TLS it cannot say which; the request had not left)"
        } else if error is NIOSSLError || error is BoringSSLError || error is NIOSSLExtraError || lower.contains("certificate") || lower.contains("handshake") {
            what = "the TLS handshake with \(host):\(port) failed: its certificate is not trusted here, or it does not speak TLS "
                + "(a private CA: give --ca FILE; a server without TLS: use http://)"
        } else if tls == nil, !pool.heardPlainHTTP.withLockedValue({ $0 }), lower.contains("eof") || lower.contains("reset") {
            what = "the connection to \(host):\(port) was cut (if the server serves TLS, use https://)"
        } else if lower.contains("timeout") || lower.contains("timed out") {
            what = "\(host):\(port) did not answer in time"
        } else if lower.contains("reset") || lower.contains("broken pipe") || lower.contains("eof") || lower.contains("closed") {
            what = "the connection to \(host):\(port) was cut"
        } else if lower.contains("resolve") || lower.contains("unknown host") || lower.contains("name or service") {
            what = "cannot find the host \(host)"
        } else if lower.contains("unreachable") {
            what = "no route to \(host):\(port)"
        } else {
            what = "the network failed talking to \(host):\(port)"
        }
        return what
    }

    /// `group`: an event loop group shared by many clients in one process (a bench); by
    /// default the client has one thread of its own.
    /// How long a WebSocket may take from its connection to the server's `101`: a server that
    /// accepts and never answers the opening is a socket closed (1006), so the reconnect's
    /// backoff runs, not a `connecting` forever.
    let openingTimeout: TimeAmount

    public init(host: String, port: Int, group: MultiThreadedEventLoopGroup? = nil, tls: NIOSSLContext? = nil,
                openingTimeout: TimeAmount = .seconds(15)) {
        self.openingTimeout = openingTimeout
        self.host = host
        self.port = port
        self.tls = tls
        self.group = group ?? MultiThreadedEventLoopGroup(numberOfThreads: 1)
        ownsGroup = group == nil
        var fds: [Int32] = [0, 0]
        if Foundation.pipe(&fds) != 0 { fds = [-1, -1] }
        for fd in fds where fd >= 0 { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        pipe = (fds[0], fds[1])
        pool = ConnectionPool(loop: self.group.next(), plain: tls == nil) { [unowned self] loop, connection in
            openPooled(on: loop, connection)
        }
    }

    deinit {
        // The last reference may go on the group's own thread (a socket's handler held it):
        // a synchronous shutdown there is NIO's fatal "must not be called when on an
        // EventLoop" (CI found it). Shut down without waiting.
        if ownsGroup { group.shutdownGracefully { _ in } }
        close(pipe.read)
        close(pipe.write)
    }

    /// A client's TLS: the system's trust roots, or only the CA in `caFile` (PEM) for a
    /// server whose certificate a private CA signed. The server's name or IP address is
    /// checked against its certificate.
    public static func tls(caFile: String?) throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12  // NIOSSL's default is TLS 1.0
        if let caFile {
            let roots: [NIOSSLCertificate]
            do { roots = try NIOSSLCertificate.fromPEMFile(caFile) } catch {
                throw TransportError("--ca \(caFile): not a readable PEM certificate")
            }
            guard !roots.isEmpty else { throw TransportError("--ca \(caFile): no certificate in it") }
            configuration.trustRoots = .certificates(roots)
        }
        do { return try NIOSSLContext(configuration: configuration) } catch { throw TransportError("TLS: \(error)") }
    }

    /// The TLS handler a new connection starts with, if any. SNI names a host, never an IP
    /// address: for one, the certificate's IP address entries are checked against the peer.
    func tlsHandler() throws -> NIOSSLClientHandler? {
        guard let tls else { return nil }
        let isAddress = host.contains(":") || host.split(separator: ".").allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
        return try NIOSSLClientHandler(context: tls, serverHostname: isAddress ? nil : host)
    }

    /// Readable when something was posted.
    public var wakeDescriptor: Int32? { pipe.read }

    /// Runs `work` on the owner's thread at its next `drain()`.
    func post(_ work: @escaping () -> Void) {
        lock.lock()
        posted.append(work)
        lock.unlock()
        var byte: UInt8 = 1
        _ = write(pipe.write, &byte, 1)
    }

    /// Runs what the network posted, in order. Returns how many.
    @discardableResult
    public func drain() -> Int {
        var buffer = [UInt8](repeating: 0, count: 256)
        while read(pipe.read, &buffer, buffer.count) > 0 {}
        lock.lock()
        let work = posted
        posted.removeAll()
        lock.unlock()
        for w in work { w() }
        return work.count
    }

    /// Waits until something is posted or `milliseconds` pass (no terminal: a headless loop).
    public func wait(milliseconds: Int32) {
        var p = pollfd(fd: pipe.read, events: Int16(POLLIN), revents: 0)
        _ = poll(&p, 1, milliseconds)
    }

    // MARK: - HTTP

    /// An HTTP answer: status and body.
    public struct Answer: Sendable {
        public var status: Int
        public var body: Data
        public init(status: Int, body: Data) {
            self.status = status
            self.body = body
        }
        /// The server's `{"error": …}` line, or the status.
        public var error: String {
            ErrorDocument.message(body, status: status)
        }
    }

    /// One request; `reply` runs on the owner's thread (a transport failure says why).
    public func request(_ method: HTTPMethod, _ path: String, body: Data?, token: String?,
                        reply: @escaping (Result<Answer, TransportError>) -> Void) {
        // `reply` runs on the owner's thread only (`post`), never on NIO's.
        let reply = OwnerThreadOnly(reply)
        requestFuture(method, path, body: body, token: token).whenComplete { [self] result in
            post { reply.value(result.mapError { TransportError(self.words(for: $0)) }) }
        }
    }

    /// The same, waited for on the calling thread (before the loop starts: joining).
    public func requestNow(_ method: HTTPMethod, _ path: String, body: Data?, token: String?) throws -> Answer {
        try requestFuture(method, path, body: body, token: token).wait()
    }

    private func requestFuture(_ method: HTTPMethod, _ path: String, body: Data?, token: String?) -> EventLoopFuture<Answer> {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: "\(host):\(port)")
        headers.add(name: ProtocolVersion.header, value: ProtocolVersion.headerValue)
        headers.add(name: "Content-Length", value: "\(body?.count ?? 0)")
        if body != nil { headers.add(name: "Content-Type", value: "application/json") }
        if let token { headers.add(name: "Authorization", value: "Bearer \(token)") }
        let head = HTTPRequestHead(version: .http1_1, method: method, uri: path, headers: headers)
        let promise = pool.loop.makePromise(of: Answer.self)
        let request = PendingRequest(head: head, body: body, promise: promise)
        pool.loop.execute { [pool] in pool.enqueue(request, timeout: .seconds(Self.requestTimeout)) }
        return promise.futureResult
    }

    /// A new connection of the pool, with its handlers: TLS if any, HTTP, and the connection's own.
    private func openPooled(on loop: EventLoop, _ connection: PooledConnection) -> EventLoopFuture<NIOCore.Channel> {
        ClientBootstrap(group: loop)
            .connectTimeout(.seconds(10))
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls = try tlsHandler() { try channel.pipeline.syncOperations.addHandler(tls) }
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(connection)
                }
            }
            .connect(host: host, port: port)
    }

    // MARK: - WebSockets

    /// Opens a WebSocket to `path`. `opened` runs once it is upgraded; `text` for each text
    /// frame; `closed` once, with the close code (1006 when none came) and reason.
    public func openSocket(_ path: String, token: String, opened: @escaping (ClientSocket) -> Void,
                           text: @escaping (Data) -> Void, closed: @escaping (Int, String) -> Void) -> ClientSocket {
        let socket = WebSocket(post: { [self] in post($0) })
        let handler = ClientFrameHandler(socket: socket, opened: opened, text: text, closed: closed, words: { [unowned self] in words(for: $0) })
        let bootstrap = ClientBootstrap(group: group.next())
            .connectTimeout(.seconds(10))
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture { try WebSocket.configure(channel, tls: try tlsHandler(), handler: handler) }
            }
        bootstrap.connect(host: host, port: port).whenComplete { [host, port] result in
            switch result {
            case .failure(let error): handler.finish(code: 1006, reason: self.words(for: error))
            case .success(let channel):
                socket.attach(channel)
                WebSocket.sendOpening(channel, host: host, port: port, path: path, token: token)
                let wait = self.openingTimeout
                channel.eventLoop.scheduleTask(in: wait) {
                    guard !socket.state.upgraded else { return }
                    handler.finish(code: 1006, reason: "no answer to the WebSocket opening in \(wait.nanoseconds / 1_000_000_000) s")
                    channel.close(promise: nil)
                }
            }
        }
        return socket
    }
}

/// A value NIO's thread only carries, to be used on the thread that owns the engine (`NetIO.post`):
/// the closures of the owner's, which are not Sendable, cross the event loop this way.
struct OwnerThreadOnly<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
