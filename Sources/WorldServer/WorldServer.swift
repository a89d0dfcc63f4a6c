import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Simulation
import SimWorld
import SyncCore
import SyncEngine

/// `synchat server` (issue 17, a first step): the simulated world behind real protocols, on
/// swift-nio. This step serves the **indexer** as HTTP/JSON — the same documents the
/// embedded world answers with (`503` while it is down, its latency as asked) — and the
/// admin endpoints: ground truth and faults, behind the token printed at start. One event
/// loop owns the world; the world's clock runs on scaled wall time.
///
/// Routes (all answers JSON; errors are `{"error": "one line"}`):
/// - `GET /v1/indexer/handshakes?direction=in|out&since=MS`
/// - `GET /v1/indexer/contextual?address=ADDRESS&direction=in|out&since=MS`
/// - `GET /v1/indexer/payments?since=MS&page=N`
/// - `GET /v1/indexer/messages/TXID`
/// - `GET /v1/indexer/tip`
/// - `GET /admin/truth`, `POST /admin/fault` (body: a scenario directive, e.g. `indexer down`),
///   with `Authorization: Bearer TOKEN`.
public final class WorldServer: @unchecked Sendable {  // its state is touched on `loop` only
    public let adminToken: String
    /// Request bodies larger than this are refused (413) before they are read further.
    public static let maxBodyBytes = 64 * 1024
    /// Query strings and paths longer than this are refused (414).
    public static let maxURIBytes = 4 * 1024

    private let group: MultiThreadedEventLoopGroup
    private let loop: EventLoop
    private let host: WorldHost
    private var channel: NIOCore.Channel?
    private var wake: Scheduled<Void>?

    public init(host: WorldHost, adminToken: String = WorldServer.newToken()) {
        self.host = host
        self.adminToken = adminToken
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        loop = group.next()
    }

    /// 32 hex digits from the system's random source.
    public static func newToken() -> String {
        var g = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(format: "%08x", UInt32.random(in: .min ... .max, using: &g)) }.joined()
    }

    /// Binds and starts serving; returns the port (useful with port 0: any free one).
    public func start(host bindHost: String, port: Int) throws -> Int {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(RequestHandler(server: self))
                }
            }
            .childChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
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
    private func pump() {
        host.advance()
        wake?.cancel()
        wake = loop.scheduleTask(in: .milliseconds(host.wallMillisecondsToNextEvent)) { [self] in pump() }
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
    func handle(method: HTTPMethod, uri: String, headers: HTTPHeaders, body: Data, reply: @escaping (Answer) -> Void) {
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
        if path.hasPrefix("/admin/") {
            guard headers.first(name: "Authorization") == "Bearer \(adminToken)" else {
                return reply(.error(.unauthorized, "admin endpoints need the header Authorization: Bearer TOKEN (the token synchat server printed at start)"))
            }
            switch (method, path) {
            case (.GET, "/admin/truth"): return reply(.json(.ok, host.truth))
            case (.POST, "/admin/fault"): return reply(fault(body))
            case (_, "/admin/truth"), (_, "/admin/fault"): return reply(.error(.methodNotAllowed, "\(method) \(path): use \(path == "/admin/truth" ? "GET" : "POST")"))
            default: return reply(.error(.notFound, "no such endpoint: \(path)"))
            }
        }
        guard path.hasPrefix("/v1/indexer/") else { return reply(.error(.notFound, "no such endpoint: \(path)")) }
        guard method == .GET else { return reply(.error(.methodNotAllowed, "\(method) \(path): the indexer answers GET")) }
        let call: IndexerCall
        do { call = try Self.indexerCall(path: path, query: query) } catch let e as BadRequest {
            return reply(.error(e.status, e.message))
        } catch {
            return reply(.error(.badRequest, "\(error)"))
        }
        host.world.indexer.send(call) { result in
            switch result {
            case .success(let data): reply(Answer(status: .ok, body: data))
            case .failure(let error): reply(.error(.serviceUnavailable, error.message))
            }
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

    private func fault(_ body: Data) -> Answer {
        guard let text = String(data: body, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else {
            return .error(.badRequest, "the body must be one scenario directive in UTF-8, e.g. indexer down")
        }
        guard !text.contains("\n") else { return .error(.badRequest, "one directive per request") }
        let directive: Directive
        do {
            let scenario = try ScenarioParser.parse("contacts 0\nat 0s " + text, file: "fault")
            guard let d = scenario.steps.first?.directive else { return .error(.badRequest, "not a directive: \(text.prefix(80))") }
            directive = d
        } catch let e as ScenarioError {
            return .error(.badRequest, e.message)
        } catch {
            return .error(.badRequest, "\(error)")
        }
        if let refused = host.apply(directive) { return .error(.notImplemented, refused) }
        return .json(.ok, .object([("applied", .string(directive.scenarioText)), ("at", .int(host.virtualNow.milliseconds))]))
    }
}

/// Reads one HTTP request (head, body up to the limit, end) and answers it in order.
final class RequestHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let server: WorldServer
    private var head: HTTPRequestHead?
    private var body = Data()
    private var tooLarge = false

    init(server: WorldServer) { self.server = server }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h):
            head = h
            body = Data()
            tooLarge = false
        case .body(let b):
            if body.count + b.readableBytes > WorldServer.maxBodyBytes { tooLarge = true } else { body.append(contentsOf: b.readableBytesView) }
        case .end:
            guard let head else { return }
            self.head = nil
            let channel = context.channel
            let keepAlive = head.isKeepAlive && !tooLarge
            if tooLarge {
                return Self.respond(channel, .error(.payloadTooLarge, "the body is larger than \(WorldServer.maxBodyBytes) bytes"), keepAlive: false)
            }
            server.handle(method: head.method, uri: head.uri, headers: head.headers, body: body) { answer in
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
