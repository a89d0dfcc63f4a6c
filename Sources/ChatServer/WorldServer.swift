import Directives
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import SimulatedWorld
import SyncCore
import SyncEngine
import ServerProtocol
import Wire


/// `synchat server`: the simulated world behind real protocols, on swift-nio,
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
    private var lastCheckpoint: UInt64 = 0
    var socketsByUser: [String: Int] = [:]
    /// Upgrades refused for the moment's reason (sockets, rate), by connection, until the
    /// request's answer says it (`socketRefusal`) or the connection closes.
    var refusedUpgrades: [ObjectIdentifier: Answer] = [:]
    var refusalsWatched: Set<ObjectIdentifier> = []
    /// Connections open at once, by holder: a peer (an IPv4 address, an IPv6 /64) until a
    /// request shows a user's secret, then the user. At most `maxConnections` in all
    /// (`--max-connections`), `maxConnectionsPerPeer` unauthenticated ones a peer
    /// (`--peer-connections`), `maxConnectionsPerUser` a user (`--user-connections`); at the
    /// cap, the holder of the most gives way to a newcomer.
    public internal(set) var connections = ConnectionTable()
    public var maxConnections: Int {
        get { connections.maxConnections }
        set { connections.maxConnections = newValue }
    }
    /// Connections a peer may hold that wait for their first request head (`--peer-heads`);
    /// its newest closes its oldest.
    public var maxWaitingPerPeer: Int {
        get { connections.maxWaitingPerPeer }
        set { connections.maxWaitingPerPeer = newValue }
    }
    public var maxConnectionsPerPeer: Int {
        get { connections.maxPerPeer }
        set { connections.maxPerPeer = newValue }
    }
    public var maxConnectionsPerUser: Int {
        get { connections.maxPerUser }
        set { connections.maxPerUser = newValue }
    }
    /// A request's head must arrive whole this long after the connection opened, or after the
    /// head of the body before it (a head that never completes would hold the connection forever).
    public var headTimeout = TimeAmount.milliseconds(ServerLimits.defaults.headTimeout.milliseconds)
    /// A keep-alive connection with no request this long after its last answer is closed;
    /// so is a declared body that does not come in this long.
    public var idleTimeout = TimeAmount.milliseconds(ServerLimits.defaults.idleTimeout.milliseconds)
    /// A node or push socket silent this long is pinged (`--ping-after`)…
    public var pingAfter = TimeAmount.milliseconds(ServerLimits.defaults.pingAfter.milliseconds)
    /// …and closed when nothing answers within this (`--pong-timeout`).
    public var pongTimeout = TimeAmount.milliseconds(ServerLimits.defaults.pongTimeout.milliseconds)
    /// Indexer answers one user may have pending at once (`--pending-answers`): each waits in
    /// the world until its latency has passed, whether or not its connection is still there.
    /// As many as one burst of the rate limit, so a client's full sync (a request for each
    /// object of each contact, all at once) is never refused by it.
    public var maxPendingAnswers = ServerLimits.defaults.pendingAnswers
    var pendingAnswers: [String: Int] = [:]
    /// The longest delay or latency a user's own fault may set (`--fault-max`): what a demo
    /// needs, not ten years of answers held in memory.
    public var maxUserFaultDuration = ServerLimits.defaults.faultMax
    /// Bytes of message text one user may have the server keep (`--user-quota`): what it
    /// published and what its `receive` lines made its contacts write.
    public var userQuotaBytes = ServerLimits.defaults.userQuotaBytes
    /// Each user's bytes kept so far, counted from its world's ledger at first need.
    var storedBytes: [String: Int] = [:]
    /// Where the server says what an operator should know (stderr; a test's own).
    public var log: (String) -> Void = { FileHandle.standardError.write(Data("synchat server: \($0)\n".utf8)) }
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


    /// The peer a connection counts against: its address, or its IPv6 /64.
    static func peer(_ channel: NIOCore.Channel) -> String {
        ConnectionTable.peer(ofAddress: channel.remoteAddress?.ipAddress ?? "?")
    }

    /// Binds and starts serving; returns the port (useful with port 0: any free one). With
    /// `tls`, every connection is TLS first (https and wss).
    public func start(host bindHost: String, port: Int, tls: NIOSSLContext? = nil) throws -> Int {
        Self.raiseFileLimit(toHold: maxConnections)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 1024)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    let peer = Self.peer(channel)
                    // Before anything is built for it (a pipeline, a TLS handshake's key
                    // exchange and signature): one address's flood of new connections costs
                    // the loop an accept and a close each past its rate.
                    guard newConnections.allow(peer, now: monotonic()) else {
                        refusedByRate(peer)
                        return try refuse(channel, by: .peerRate(peer: peer, perSecond: connectionsPerSecondPerPeer), plain: tls == nil)
                    }
                    let id = ObjectIdentifier(channel)
                    let admission = connections.admit(id, peer: peer, waiting: tls == nil) { [weak self, weak channel] limit in
                        if let self, let channel { shed(channel, by: limit, plain: tls == nil) }
                    }
                    if case .refused(let limit) = admission {
                        return try refuse(channel, by: limit, plain: tls == nil)
                    }
                    channel.closeFuture.whenComplete { [self] _ in connections.remove(id) }
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
            .childChannelOption(ChannelOptions.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 512, maximum: 16 * 1024))
        let channel = try bootstrap.bind(host: bindHost, port: port).wait()
        self.channel = channel
        loop.execute { [self] in pump() }
        return channel.localAddress?.port ?? port
    }

    /// A connection's pipeline, on its channel's loop: TLS first if given, then HTTP, with the
    /// upgrade to the node's or the push relay's WebSocket. A real socket's (`start`) and the
    /// in-process pair's (`WorldPair`), which puts the same bytes through it.
    public func configureConnection(_ channel: NIOCore.Channel, tls: NIOSSLContext?) throws {
        if let tls {
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
            let id = ObjectIdentifier(channel), peer = Self.peer(channel)
            try channel.pipeline.syncOperations.addHandler(TLSHandshakeSeen { [weak self] in self?.connections.mayRequest(id, peer: peer) })
        }
        // Stop reading a peer that does not read its answers (820 000
        // pipelined requests would take the server to 636 MB): past the high-water mark
        // of what it owes the socket, nothing more is read from it, and the idle
        // timeout then closes it.
        try channel.pipeline.syncOperations.addHandler(BackPressureHandler())
        let requests = RequestHandler(server: self)
        let upgrader = NIOWebSocketServerUpgrader(
            maxFrameSize: Self.maxFrameBytes,
            shouldUpgrade: { [self] channel, head in
                channel.eventLoop.makeCompletedFuture {
                    let connection = ObjectIdentifier(channel)
                    let headers = self.shouldUpgrade(head, connection: connection)
                    // Forgotten when the connection closes (once a connection, however many it is refused).
                    if headers == nil, self.refusedUpgrades[connection] != nil, self.refusalsWatched.insert(connection).inserted {
                        channel.closeFuture.whenComplete { [self] _ in
                            self.refusedUpgrades[connection] = nil
                            self.refusalsWatched.remove(connection)
                        }
                    }
                    return headers
                }
            },
            upgradePipelineHandler: { [self] channel, head in
                channel.eventLoop.makeCompletedFuture {
                    try self.upgraded(channel, head)
                }
            })
        // The handler goes with the upgrade, on the channel's loop, where it was made.
        let upgradedAway = NIOLoopBound(requests, eventLoop: channel.eventLoop)
        let upgrade: NIOHTTPServerUpgradeConfiguration = (upgraders: [upgrader], completionHandler: { context in
            context.pipeline.syncOperations.removeHandler(upgradedAway.value, promise: nil)
        })
        try channel.pipeline.syncOperations.configureHTTPServerPipeline(
            withServerUpgrade: upgrade,
            withErrorHandling: false)  // RequestHandler answers the parser's errors, in JSON
        try UpgradeOnAsk.replaceUpgradeHandler(in: channel.pipeline.syncOperations, upgrade: upgrade) { [self] channel, head in
            connections.headRead(ObjectIdentifier(channel), peer: Self.peer(channel), user: user(head.headers)?.name)
        }
        try channel.pipeline.syncOperations.addHandler(requests)
    }

    /// A process starts with room for 1 024 open files on many systems: too few for the
    /// connection cap, and accepting past it fails. The soft limit goes up to what the cap
    /// needs, within the hard limit.
    static func raiseFileLimit(toHold connections: Int) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let wanted = rlim_t(connections + 256)
        guard limit.rlim_cur < wanted else { return }
        limit.rlim_cur = min(wanted, limit.rlim_max)
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
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
    /// Brings the world up to now before a request is answered: all of it in process (virtual
    /// time: nothing runs by itself), a bounded step on a real server (its pump runs the rest).
    func catchUp() {
        if selfDriven { _ = host.advance(atMost: WorldHost.eventsPerTurn) } else { host.advance() }
    }

    func pump() {
        guard selfDriven else { return host.advance() }
        // A bounded step: a world far behind (thousands of users at ×60) is caught up over
        // several turns of the loop, which answers its sockets between them; the whole
        // backlog at once kept the loop for 20 minutes, and no join was answered.
        let caughtUp = host.advance(atMost: WorldHost.eventsPerTurn)
        let now = monotonic()
        if now - lastCheckpoint > 5_000_000_000 {
            lastCheckpoint = now
            host.pauseAway { socketsByUser[$0.name, default: 0] > 0 }
            HeapTrim.now()
            do { try host.checkpoint() } catch { FileHandle.standardError.write(Data("synchat server: cannot write the data directory: \(error)\n".utf8)) }
        }
        wake?.cancel()
        wake = loop.scheduleTask(in: .milliseconds(caughtUp ? host.wallMillisecondsToNextEvent : 0)) { [self] in pump() }
    }

    /// What a first join must show (`"invite"` in its body), or nil for a server open to
    /// anyone (`synchat server --open`). A rejoin shows its secret instead: users are
    /// permanent with `--data`, and anyone could fill the server.
    public var invite: String? = WorldServer.newToken()

    /// Joins (a first join or a rejoin) one peer address may make a minute, in a burst as large
    /// (`--peer-joins`): a join flood slowed every user and filled the server.
    public var joinsPerMinute = ServerLimits.defaults.peerJoins {
        didSet { joins = Self.joinLimiter(joinsPerMinute) }
    }
    var joins = WorldServer.joinLimiter(ServerLimits.defaults.peerJoins)
    static func joinLimiter(_ perMinute: Int) -> RateLimiter<String> { RateLimiter(perSecond: Double(perMinute) / 60, burst: Double(perMinute)) }

    /// New connections one peer address may open a second (`--peer-rate`), in bursts of
    /// `ConnectionTable.peerRateBurst` times as many; past it a connection is refused as it comes.
    public var connectionsPerSecondPerPeer = ServerLimits.defaults.peerRate {
        didSet { newConnections = Self.newConnectionLimiter(connectionsPerSecondPerPeer) }
    }
    var newConnections = WorldServer.newConnectionLimiter(ServerLimits.defaults.peerRate)
    static func newConnectionLimiter(_ n: Int) -> RateLimiter<String> {
        RateLimiter(perSecond: Double(n), burst: Double(n * ConnectionTable.peerRateBurst))
    }
    /// Connections refused by `--peer-rate` since the log last said so, by peer; the log says
    /// it at most once a minute.
    var refusedByRate: [String: Int] = [:]
    var saidRefusedByRate: UInt64?

    /// Counts a connection `--peer-rate` refused, and says so in the log at most once a minute:
    /// an operator learns of a flood (or of a team that needs a higher rate) without a line per connection.
    func refusedByRate(_ peer: String) {
        refusedByRate[peer, default: 0] += 1
        let now = monotonic()
        if let said = saidRefusedByRate, now &- said < 60_000_000_000 { return }
        saidRefusedByRate = now
        let top = refusedByRate.sorted { $0.value > $1.value }.prefix(3).map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        log("connections refused past --peer-rate \(connectionsPerSecondPerPeer) (new connections a second from one address): \(top)"
            + (refusedByRate.count > 3 ? " and \(refusedByRate.count - 3) more addresses" : ""))
        refusedByRate = [:]
    }

    /// Wrong invites the whole server takes a minute, from every address together, in a burst
    /// as large (`--failed-invites`), however many addresses guess. Past it, every
    /// first join is refused until the count refills, the right invite too (checking it would
    /// be one more guess), and the log says so once.
    public var failedInvitesPerMinute = ServerLimits.defaults.failedInvites {
        didSet { failedInvites = Self.inviteLimiter(failedInvitesPerMinute) }
    }
    var failedInvites = WorldServer.inviteLimiter(ServerLimits.defaults.failedInvites)
    static func inviteLimiter(_ perMinute: Int) -> RateLimiter<Int> { RateLimiter(perSecond: Double(perMinute) / 60, burst: Double(perMinute)) }
    var saidInvitesGuessed = false
    /// The shortest invite an operator may set (`--invite`): 16 characters of a code drawn as
    /// the server draws its own (hex digits) are 2^64 codes; at 30 guesses a minute the whole
    /// server over, a year of guessing finds one with a chance of about 1 in 10^12.
    public static let minimumInviteLength = 16

    /// Answer bytes that cost one more request (`/v1/world` at 1 000 users is 90 KB; 190 of
    /// them a second, under a count of requests, starved another user). A request costs one,
    /// and its answer one more per `bytesPerRequest`.
    public static let bytesPerRequest = 4_096
}
