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
import ServerProtocol
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
    /// Requests a second per user (`requestsPerSecond`, in bursts of `burst`).
    /// Each person's contact document, written once, in the order of `host.people`.
    var encodedPeople: [JSONValue] = []
    var requests = RateLimiter<String>(perSecond: WorldServer.requestsPerSecond, burst: WorldServer.burst)

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
                    try configureConnection(channel, tls: tls)
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

    /// A connection's pipeline, on its channel's loop: TLS first if given, then HTTP, with the
    /// upgrade to the node's or the push relay's WebSocket. A real socket's (`start`) and the
    /// in-process pair's (`WorldPair`), which puts the same bytes through it.
    public func configureConnection(_ channel: NIOCore.Channel, tls: NIOSSLContext?) throws {
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
        // The handler goes with the upgrade, on the channel's loop, where it was made.
        let upgradedAway = NIOLoopBound(requests, eventLoop: channel.eventLoop)
        try channel.pipeline.syncOperations.configureHTTPServerPipeline(
            withServerUpgrade: (upgraders: [upgrader], completionHandler: { context in
                context.pipeline.syncOperations.removeHandler(upgradedAway.value, promise: nil)
            }),
            withErrorHandling: false)  // RequestHandler answers the parser's errors, in JSON
        try channel.pipeline.syncOperations.addHandler(requests)
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

    /// What a first join must show (`"invite"` in its body), or nil for a server open to
    /// anyone (`synchat server --open`). A rejoin shows its secret instead: users are
    /// permanent with `--data`, and anyone could fill the server.
    public var invite: String? = WorldServer.newToken()

    /// Joins (a first join or a rejoin) one peer address may make a minute, in a burst as large
    /// (`--peer-joins`): a join flood slowed every user and filled the server.
    public var joinsPerMinute = 60 {
        didSet { joins = RateLimiter(perSecond: Double(joinsPerMinute) / 60, burst: Double(joinsPerMinute)) }
    }
    var joins = RateLimiter<String>(perSecond: 1, burst: 60)

    /// Answer bytes that cost one more request (`/v1/world` at 1 000 users is 90 KB; 190 of
    /// them a second, under a count of requests, starved another user). A request costs one,
    /// and its answer one more per `bytesPerRequest`.
    public static let bytesPerRequest = 4_096
}
