import AppActions
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import SimWorld
import SyncCore
import SyncEngine
import Wire

/// `synchat server` (issue 17): the simulated world behind real protocols, on swift-nio,
/// many users in one world. HTTP/JSON for the indexer, joining and publishing; WebSockets
/// for the node (a JSON-RPC subscription in the style of Kaspa's wRPC) and the push relay;
/// admin endpoints (truth, faults) behind the token printed at start. One event loop owns
/// the world; the world's clock runs on scaled wall time. docs/server.md has the protocol.
public final class WorldServer: @unchecked Sendable {  // its state is touched on `loop` only
    public let adminToken: String
    /// Request bodies larger than this are refused (413) before they are read further.
    public static let maxBodyBytes = 64 * 1024
    /// Query strings and paths longer than this are refused (414).
    public static let maxURIBytes = 4 * 1024
    /// WebSocket frames larger than this close the socket (1009).
    public static let maxFrameBytes = 64 * 1024
    /// Sockets open at once, all clients together; more are refused at accept.
    public static let maxConnections = 8_192
    /// Node and push sockets one user may hold at once.
    public static let maxSocketsPerUser = 8
    /// Requests (HTTP and WebSocket) one user may make a second, in bursts of `burst`.
    public static let requestsPerSecond = 200.0
    public static let burst = 400.0

    let group: MultiThreadedEventLoopGroup
    let loop: EventLoop
    let host: WorldHost
    private var channel: NIOCore.Channel?
    private var wake: Scheduled<Void>?
    var connections = 0
    private var lastCheckpoint: UInt64 = 0
    var socketsByUser: [String: Int] = [:]
    /// Connections open by peer address (issue 28 #2: 8 200 idle connections of one peer
    /// locked everyone else out).
    var connectionsByPeer: [String: Int] = [:]
    /// The limits of issue 28 #2, each settable (`synchat server --peer-connections`,
    /// `--head-timeout`, `--idle-timeout`).
    public var maxConnectionsPerPeer = 64
    /// A request's head must arrive whole this long after the connection opened, or after the
    /// head of the body before it (a head that never completes was held forever).
    public var headTimeout = TimeAmount.seconds(10)
    /// A keep-alive connection with no request this long after its last answer is closed;
    /// so is a declared body that does not come in this long.
    public var idleTimeout = TimeAmount.seconds(30)
    private var buckets: [String: (tokens: Double, at: UInt64)] = [:]

    /// A monotonic clock in nanoseconds (rate limits, checkpoints): the system's, or a test's.
    let monotonic: () -> UInt64
    /// Whether the server runs its world on its own event loop (a real server), or is stepped
    /// by whoever owns it (`WorldPair`: one process, virtual time; nothing runs by itself).
    public let selfDriven: Bool

    public init(host: WorldHost, adminToken: String = WorldServer.newToken(),
                monotonic: @escaping () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }, selfDriven: Bool = true) {
        self.host = host
        self.adminToken = adminToken
        self.monotonic = monotonic
        self.selfDriven = selfDriven
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        loop = group.next()
    }

    /// 32 hex digits from the system's random source.
    public static func newToken() -> String {
        var g = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(format: "%08x", UInt32.random(in: .min ... .max, using: &g)) }.joined()
    }

    /// TLS from a certificate chain and a private key in PEM files (`--tls-cert`, `--tls-key`):
    /// swift-nio-ssl's server context, TLS 1.2 and later. A file that cannot be read or is not
    /// PEM is one line naming it.
    public static func tls(certificate: String, key: String) throws -> NIOSSLContext {
        let chain: [NIOSSLCertificate]
        do { chain = try NIOSSLCertificate.fromPEMFile(certificate) } catch {
            throw TLSFiles(description: "--tls-cert \(certificate): not a readable PEM certificate (\(error))")
        }
        guard !chain.isEmpty else { throw TLSFiles(description: "--tls-cert \(certificate): no certificate in it") }
        let privateKey: NIOSSLPrivateKey
        do { privateKey = try NIOSSLPrivateKey(file: key, format: .pem) } catch {
            throw TLSFiles(description: "--tls-key \(key): not a readable PEM private key (\(error))")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(privateKey))
        configuration.minimumTLSVersion = .tlsv12  // NIOSSL's default is TLS 1.0
        do { return try NIOSSLContext(configuration: configuration) } catch {
            throw TLSFiles(description: "--tls-cert \(certificate) and --tls-key \(key) do not make a TLS context (is the key the certificate's?): \(error)")
        }
    }

    public struct TLSFiles: Error, CustomStringConvertible {
        public var description: String
    }

    /// Whether an address to listen on is the machine's own (loopback): anything else carries
    /// secrets across a network, and needs TLS or `--insecure`.
    public static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" { return true }
        // An address, read as one: `127.example.net` is a name, not loopback.
        var v4 = in_addr(), v6 = in6_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        if inet_pton(AF_INET6, host, &v6) == 1 { return host == "::1" || withUnsafeBytes(of: v6) { Array($0) } == Array(repeating: 0, count: 15) + [1] }
        return false
    }

    /// Binds and starts serving; returns the port (useful with port 0: any free one). With
    /// `tls`, every connection is TLS first (https and wss).
    public func start(host bindHost: String, port: Int, tls: NIOSSLContext? = nil) throws -> Int {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 1024)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    connections += 1
                    let peer = channel.remoteAddress?.ipAddress ?? "?"
                    connectionsByPeer[peer, default: 0] += 1
                    channel.closeFuture.whenComplete { [self] _ in
                        connections -= 1
                        connectionsByPeer[peer, default: 1] -= 1
                        if connectionsByPeer[peer] == 0 { connectionsByPeer[peer] = nil }
                    }
                    guard connections <= Self.maxConnections, connectionsByPeer[peer, default: 0] <= maxConnectionsPerPeer else {
                        channel.close(promise: nil)
                        return
                    }
                    if let tls { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls)) }
                    // Stop reading a peer that does not read its answers (issue 28 #1: 820 000
                    // pipelined requests took the server to 636 MB): past the high-water mark
                    // of what it owes the socket, nothing more is read from it, and the idle
                    // timeout then closes it.
                    try channel.pipeline.syncOperations.addHandler(BackPressureHandler())
                    let requests = RequestHandler(server: self)
                    let upgrader = NIOWebSocketServerUpgrader(
                        maxFrameSize: Self.maxFrameBytes,
                        shouldUpgrade: { [self] channel, head in
                            channel.eventLoop.makeCompletedFuture { self.shouldUpgrade(head) }
                        },
                        upgradePipelineHandler: { [self] channel, head in
                            channel.eventLoop.makeCompletedFuture {
                                try self.upgraded(channel, head)
                            }
                        })
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withServerUpgrade: (upgraders: [upgrader], completionHandler: { context in
                            context.pipeline.syncOperations.removeHandler(requests, promise: nil)
                        }),
                        withErrorHandling: false)  // RequestHandler answers the parser's errors, in JSON
                    try channel.pipeline.syncOperations.addHandler(requests)
                }
            }
            .childChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(ChannelOptions.writeBufferWaterMark, value: .init(low: 32 * 1024, high: 256 * 1024))
            // Fairness on the one loop: a peer that pipelines requests gets at most one read of
            // 16 KB (about 190 requests) a turn of the loop. NIO's defaults — 4 reads of up to
            // 64 KB — let one peer's 3 000 pipelined requests run before anyone else's one
            // (`synchat-bench hostile`: another user's p50 was 512 ms while one pipelined).
            .childChannelOption(ChannelOptions.maxMessagesPerRead, value: 1)
            .childChannelOption(ChannelOptions.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 1024, initial: 4096, maximum: 16 * 1024))
        let channel = try bootstrap.bind(host: bindHost, port: port).wait()
        self.channel = channel
        loop.execute { [self] in pump() }
        return channel.localAddress?.port ?? port
    }

    /// Blocks until the server is closed.
    public func wait() throws {
        try channel?.closeFuture.wait()
    }

    public func stop() {
        try? channel?.close().wait()
        try? group.syncShutdownGracefully()
    }

    /// Runs the world up to now, then sleeps until its next event (at most a second).
    func pump() {
        host.advance()
        guard selfDriven else { return }
        let now = monotonic()
        if now - lastCheckpoint > 5_000_000_000 {
            lastCheckpoint = now
            do { try host.checkpoint() } catch { FileHandle.standardError.write(Data("synchat server: cannot write the data directory: \(error)\n".utf8)) }
        }
        wake?.cancel()
        wake = loop.scheduleTask(in: .milliseconds(host.wallMillisecondsToNextEvent)) { [self] in pump() }
    }

    /// A token bucket per user: false when this request is one too many.
    func allow(_ user: String) -> Bool {
        let now = monotonic()
        var b = buckets[user] ?? (Self.burst, now)
        b.tokens = min(Self.burst, b.tokens + Double(now - b.at) / 1e9 * Self.requestsPerSecond)
        b.at = now
        guard b.tokens >= 1 else { buckets[user] = b; return false }
        b.tokens -= 1
        buckets[user] = b
        return true
    }

    /// The user a request's `Authorization: Bearer SECRET` names, if any.
    func user(_ headers: HTTPHeaders) -> WorldHost.User? {
        bearer(headers).flatMap { host.user(secret: $0) }
    }

    /// The credential of `Authorization: Bearer CREDENTIAL`; the scheme's case does not matter
    /// (RFC 7235 §2.1: `bearer` is `Bearer`).
    func bearer(_ headers: HTTPHeaders) -> String? {
        guard let value = headers.first(name: "Authorization") else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return String(parts[1]).trimmingCharacters(in: .whitespaces)
    }

    /// What a first join must show (`"invite"` in its body), or nil for a server open to
    /// anyone (`synchat server --open`). A rejoin shows its secret instead (issue 28 #3: users
    /// are permanent with `--data`, and anyone could fill the server).
    public var invite: String? = WorldServer.newToken()

    /// Joins (a first join or a rejoin) one peer address may make a minute, in a burst as large
    /// (issue 28 #3: a join flood slowed every user and filled the server; `--peer-joins`).
    public var joinsPerMinute = 60
    private var joinBuckets: [String: (tokens: Double, at: UInt64)] = [:]

    func allowJoin(from peer: String) -> Bool {
        let now = monotonic()
        let burst = Double(joinsPerMinute)
        var b = joinBuckets[peer] ?? (burst, now)
        b.tokens = min(burst, b.tokens + Double(now - b.at) / 1e9 * burst / 60)
        b.at = now
        guard b.tokens >= 1 else { joinBuckets[peer] = b; return false }
        b.tokens -= 1
        joinBuckets[peer] = b
        return true
    }

    /// Answer bytes that cost one more request (issue 28 #4: `/v1/world` at 1 000 users is
    /// 90 KB; 190 of them a second, under a count of requests, starved another user). A
    /// request costs one, and its answer one more per `bytesPerRequest`.
    public static let bytesPerRequest = 4_096

    /// Charges `user` for an answer of `bytes`: the bucket may go below zero, and the user
    /// waits until it refills.
    func charge(_ user: String, answerBytes bytes: Int) {
        guard bytes >= Self.bytesPerRequest, var b = buckets[user] else { return }
        b.tokens = max(-Self.burst, b.tokens - Double(bytes / Self.bytesPerRequest))
        buckets[user] = b
    }

    /// Whether `user` is over its rate now, without spending a request.
    func limited(_ user: String) -> Bool {
        guard let b = buckets[user] else { return false }
        let now = monotonic()
        return min(Self.burst, b.tokens + Double(now - b.at) / 1e9 * Self.requestsPerSecond) < 1
    }

    // MARK: - Requests

    struct Answer {
        var status: HTTPResponseStatus
        var body: Data
        static func json(_ status: HTTPResponseStatus, _ value: JSONValue) -> Answer { Answer(status: status, body: value.data) }
        static func error(_ status: HTTPResponseStatus, _ message: String) -> Answer {
            .json(status, .object([("error", .string(message))]))
        }
    }

    /// One request, on the loop. `reply` is called once, maybe later (an indexer answer
    /// comes after the world's latency).
    func handle(method: HTTPMethod, uri: String, headers: HTTPHeaders, body: Data, peer: String = "?", reply: @escaping (Answer) -> Void) {
        host.advance()
        defer { pump() }
        guard uri.utf8.count <= Self.maxURIBytes else { return reply(.error(.uriTooLong, "the request line is longer than \(Self.maxURIBytes) bytes")) }
        guard let parts = URLComponents(string: uri) else { return reply(.error(.badRequest, "not a valid request path")) }
        let path = parts.path
        var query: [String: String] = [:]
        for item in parts.queryItems ?? [] {
            guard query[item.name] == nil else { return reply(.error(.badRequest, "parameter \(item.name) given twice")) }
            query[item.name] = item.value ?? ""
        }
        if path.hasPrefix("/admin/") { return reply(admin(method: method, path: path, query: query, headers: headers, body: body)) }
        if path == "/v1/join" {
            guard method == .POST else { return reply(.error(.methodNotAllowed, "\(method) \(path): use POST")) }
            guard allowJoin(from: peer) else {
                return reply(.error(.tooManyRequests, "more than \(joinsPerMinute) joins a minute from \(peer): slow down"))
            }
            return reply(join(body, headers: headers))
        }
        guard path.hasPrefix("/v1/") else { return reply(.error(.notFound, "no such endpoint: \(path.prefix(100))")) }
        if Self.socketPaths.contains(path) { return reply(socketRefusal(path: path, method: method, uri: uri, headers: headers)) }
        guard let user = user(headers) else {
            return reply(.error(.unauthorized, "\(path.prefix(100)) needs Authorization: Bearer SECRET (the secret POST /v1/join gave)"))
        }
        guard allow(user.name) else {
            return reply(.error(.tooManyRequests, "more than \(Int(Self.requestsPerSecond)) requests a second (an answer costs one more each \(Self.bytesPerRequest / 1024) KB): slow down"))
        }
        let reply: (Answer) -> Void = { [self, reply] answer in
            charge(user.name, answerBytes: answer.body.count)
            reply(answer)
        }
        switch path {
        case "/v1/world":
            guard method == .GET else { return reply(.error(.methodNotAllowed, "\(method) \(path): use GET")) }
            return reply(.json(.ok, world(of: user)))
        case "/v1/publish":
            guard method == .POST else { return reply(.error(.methodNotAllowed, "\(method) \(path): use POST")) }
            return reply(publish(body, by: user))
        case "/v1/fault":
            // A user's own fault keys: any fault of the network, on its own world only.
            guard method == .POST else { return reply(.error(.methodNotAllowed, "\(method) \(path): use POST")) }
            return reply(fault(body, user: user))
        default: break
        }
        guard path.hasPrefix("/v1/indexer/") else { return reply(.error(.notFound, "no such endpoint: \(path.prefix(100))")) }
        guard method == .GET else { return reply(.error(.methodNotAllowed, "\(method) \(path): the indexer answers GET")) }
        let call: IndexerCall
        do { call = try Self.indexerCall(path: path, query: query) } catch let e as BadRequest {
            return reply(.error(e.status, e.message))
        } catch {
            return reply(.error(.badRequest, "\(error)"))
        }
        user.world.indexer.send(call) { result in
            switch result {
            case .success(let data): reply(Answer(status: .ok, body: data))
            case .failure(let error): reply(.error(.serviceUnavailable, error.message))
            }
        }
    }

    private func admin(method: HTTPMethod, path: String, query: [String: String], headers: HTTPHeaders, body: Data) -> Answer {
        guard let credential = bearer(headers), WorldHost.constantTimeEqual(credential, adminToken) else {
            return .error(.unauthorized, "admin endpoints need the header Authorization: Bearer TOKEN (the token synchat server printed at start)")
        }
        var user: WorldHost.User?
        if let name = query["user"] {
            guard let u = host.user(named: name) else { return .error(.notFound, "no user named \(name.prefix(40))") }
            user = u
        }
        if let extra = query.keys.first(where: { $0 != "user" }) { return .error(.badRequest, "unknown parameter \(extra.prefix(40)) (expected: user)") }
        switch (method, path) {
        case (.GET, "/admin/truth"): return .json(.ok, user.map { host.truth(of: $0) } ?? host.truth)
        case (.POST, "/admin/fault"): return fault(body, user: user)
        case (_, "/admin/truth"), (_, "/admin/fault"): return .error(.methodNotAllowed, "\(method) \(path): use \(path == "/admin/truth" ? "GET" : "POST")")
        default: return .error(.notFound, "no such endpoint: \(path.prefix(100))")
        }
    }

    /// The body of a POST as a JSON object, or a clear error.
    static func jsonObject(_ body: Data, _ what: String) throws -> [String: WireValue] {
        guard let object = WireValue.parse(body)?.object else {
            throw BadRequest(message: "\(what): the body must be a JSON object")
        }
        return object
    }

    private func join(_ body: Data, headers: HTTPHeaders) -> Answer {
        let name: String
        let object: [String: WireValue]
        do {
            object = try Self.jsonObject(body, "join")
            guard let n = object["user"]?.string else { return .error(.badRequest, "join: missing \"user\" (a name)") }
            name = n
        } catch let e as BadRequest { return .error(e.status, e.message) } catch { return .error(.badRequest, "\(error)") }
        let secret = bearer(headers)
        // The invite is asked of a name that could join: a bad name, or a simulated contact's,
        // is told so first (400, 409), whatever the invite.
        if let invite, host.user(named: name) == nil, WorldHost.isValidName(name), !host.isSimulatedHandle(name) {
            guard let shown = object["invite"]?.string else {
                return .error(.forbidden, "join: \(name.prefix(32)) is new here, and joining needs the server's invite: "
                                + "synchat --server URL --user NAME --invite CODE (its operator has the code)")
            }
            guard WorldHost.constantTimeEqual(shown, invite) else {
                return .error(.forbidden, "join: that invite is not this server's; ask its operator for the code")
            }
        }
        do {
            let (user, isNew, newSecret) = try host.join(name: name, secret: secret)
            var fields: [(String, JSONValue)] = [("user", .string(user.name)), ("address", .string(user.address.value))]
            if isNew, let newSecret { fields.append(("secret", .string(newSecret))) }
            if case .object(let rest) = world(of: user) { fields += rest }
            return .json(isNew ? .created : .ok, .object(fields))
        } catch {
            switch error {
            case .badName: return .error(.badRequest, "join: a user name is 1 to 32 of a-z, 0-9, _ and -, starting with a letter or a digit")
            case .nameOfAContact: return .error(.conflict, "join: \(name) is the name of a simulated contact; choose another")
            case .wrongSecret: return .error(.unauthorized, "join: \(name) exists; rejoining needs Authorization: Bearer SECRET (the secret of its first join, kept in its profile)")
            case .full: return .error(.serviceUnavailable, "join: the server holds \(WorldHost.maxUsers) users already")
            case .storeFailed: return .error(.serviceUnavailable, "join: the server cannot write its data directory now; try again")
            }
        }
    }

    /// What a client needs to run on the server's world: its clock and speed, the user's
    /// contacts (simulated ones and the other users).
    func world(of user: WorldHost.User) -> JSONValue {
        .object([
            ("clock", .int(host.virtualNow.milliseconds)),
            ("speed", .string(host.speed.formatted(.number.grouping(.never)))),
            ("contacts", .array(contacts(of: user))),
        ])
    }

    /// The user's own contacts, then every other user as `People` wrote it once: at 1 000
    /// users the answer is about 90 KB, copied, not encoded again (issue 28 #4).
    func contacts(of user: WorldHost.User) -> [JSONValue] {
        let world = user.world
        var out = world.contacts.map { People.document($0, person: world.isPerson($0.address)) }
        let own = Set(world.contacts.map(\.address))
        let people = host.people
        out.reserveCapacity(out.count + people.count)
        for (i, c) in people.all.enumerated() where c.address != user.address && !own.contains(c.address) { out.append(people.encoded[i]) }
        return out
    }

    private func publish(_ body: Data, by user: WorldHost.User) -> Answer {
        let object: [String: WireValue]
        do { object = try Self.jsonObject(body, "publish") } catch let e as BadRequest { return .error(e.status, e.message) } catch { return .error(.badRequest, "\(error)") }
        guard let to = object["to"]?.string, !to.isEmpty else { return .error(.badRequest, "publish: missing \"to\" (an address)") }
        guard let text = object["body"]?.string else { return .error(.badRequest, "publish: missing \"body\" (the text)") }
        guard text.utf8.count <= MessageLimits.maxBodyBytes else {
            return .error(.payloadTooLarge, "publish: a message is at most \(MessageLimits.maxBodyBytes) bytes")
        }
        guard user.world.contact(address: Address(to)) != nil else {
            return .error(.badRequest, "publish: \(to.prefix(80)) is not a contact of \(user.name)")
        }
        switch host.publish(for: user, to: Address(to), body: text) {
        case .success(let p):
            return .json(.ok, .object([("message", SimIndexer.document(p.message, me: user.address)), ("spent", .array(p.spent.map { .string($0) }))]))
        case .failure(let e):
            return .error(.serviceUnavailable, e.message)  // 503: nothing was confirmed; the client tries again
        }
    }

    struct BadRequest: Error {
        var status: HTTPResponseStatus = .badRequest
        var message: String
    }

    /// The indexer call a path and its parameters ask for; a clear error naming the parameter otherwise.
    static func indexerCall(path: String, query: [String: String]) throws -> IndexerCall {
        func direction() throws -> Direction {
            switch query["direction"] {
            case "in": return .incoming
            case "out": return .outgoing
            case nil: throw BadRequest(message: "missing parameter direction (in or out)")
            case let other?: throw BadRequest(message: "direction must be in or out, not \"\(other.prefix(40))\"")
            }
        }
        func number(_ name: String, default value: Int64? = nil) throws -> Int64 {
            guard let text = query[name] else {
                if let value { return value }
                throw BadRequest(message: "missing parameter \(name) (milliseconds, a non-negative integer)")
            }
            guard let n = Int64(text), n >= 0 else { throw BadRequest(message: "\(name) must be a non-negative integer, not \"\(text.prefix(40))\"") }
            return n
        }
        func only(_ allowed: Set<String>) throws {
            if let extra = query.keys.sorted().first(where: { !allowed.contains($0) }) {
                throw BadRequest(message: "unknown parameter \(extra.prefix(40)) (expected: \(allowed.sorted().joined(separator: ", ")))")
            }
        }
        let rest = String(path.dropFirst("/v1/indexer/".count))
        switch rest {
        case "handshakes":
            try only(["direction", "since"])
            return .handshakes(try direction(), since: Instant(milliseconds: try number("since", default: 0)))
        case "contextual":
            try only(["address", "direction", "since"])
            guard let a = query["address"], !a.isEmpty else { throw BadRequest(message: "missing parameter address") }
            return .contextual(Address(a), try direction(), since: Instant(milliseconds: try number("since", default: 0)))
        case "payments":
            try only(["since", "page"])
            let page = try number("page", default: 0)
            guard page <= 1_000_000 else { throw BadRequest(message: "page is too large") }
            return .payments(since: Instant(milliseconds: try number("since", default: 0)), page: Int(page))
        case "tip":
            try only([])
            return .tip
        default:
            if rest.hasPrefix("messages/"), case let id = String(rest.dropFirst("messages/".count)), !id.isEmpty, !id.contains("/") {
                try only([])
                return .messageById(id)
            }
            throw BadRequest(status: .notFound, message: "no such endpoint: \(path.prefix(100))")
        }
    }

    private func fault(_ body: Data, user: WorldHost.User?) -> Answer {
        guard let text = String(data: body, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else {
            return .error(.badRequest, "the body must be one scenario directive in UTF-8, e.g. indexer down")
        }
        guard !text.contains("\n") else { return .error(.badRequest, "one directive per request") }
        let directive: Directive
        do { directive = try Directive(parsing: text) } catch {
            return .error(.badRequest, "\(error)")
        }
        if let refused = host.apply(directive, to: user) { return .error(.badRequest, refused) }
        return .json(.ok, .object([("applied", .string(directive.scenarioText)), ("user", user.map { .string($0.name) } ?? .null),
                                   ("at", .int(host.virtualNow.milliseconds))]))
    }
}

/// Reads one HTTP request (head, body up to the limit, end) and answers it in order.
final class RequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let server: WorldServer
    private var head: HTTPRequestHead?
    private var body = Data()
    private var tooLarge = false
    /// Closes the connection unless what it waits for comes first (issue 28 #2).
    private var deadline: Scheduled<Void>?

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
            // A peer that does not read its answers never lets that write complete: the
            // socket goes after a second whatever happens (it was held for good).
            let channel = context.channel
            channel.eventLoop.scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
        } else {
            context.close(promise: nil)
        }
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
            // The head came: now its body, within the idle timeout.
            arm(context, in: server.idleTimeout)  // a declared body that does not come
            head = h
            body = Data()
            tooLarge = false
            // A declared body over the limit gets its 413 now, not after reading it (a 1 GB
            // Content-Length was read and thrown away); the socket closes with it.
            if let declared = h.headers.first(name: "Content-Length").flatMap({ Int($0) }), declared > WorldServer.maxBodyBytes {
                self.head = nil
                context.channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
                return Self.respond(context.channel, .error(.payloadTooLarge, "the body is larger than \(WorldServer.maxBodyBytes) bytes"), keepAlive: false)
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
            let keepAlive = head.isKeepAlive && !tooLarge
            // Answered (maybe later): the next request must come within the idle timeout.
            if keepAlive { arm(context, in: server.idleTimeout) } else { deadline?.cancel() }  // an idle keep-alive
            if tooLarge {
                return Self.respond(channel, .error(.payloadTooLarge, "the body is larger than \(WorldServer.maxBodyBytes) bytes"), keepAlive: false)
            }
            let peer = channel.remoteAddress?.ipAddress ?? "?"
            unanswered += 1
            server.handle(method: head.method, uri: head.uri, headers: head.headers, body: body, peer: peer) { [self] answer in
                unanswered -= 1
                Self.respond(channel, answer, keepAlive: keepAlive)
            }
        }
    }

    static func respond(_ channel: NIOCore.Channel, _ answer: WorldServer.Answer, keepAlive: Bool) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "Content-Length", value: "\(answer.body.count)")
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        channel.write(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: answer.status, headers: headers)), promise: nil)
        channel.write(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: answer.body))), promise: nil)
        let done = channel.writeAndFlush(HTTPServerResponsePart.end(nil))
        if !keepAlive { done.whenComplete { _ in channel.close(promise: nil) } }
    }
}
