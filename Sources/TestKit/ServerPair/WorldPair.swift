import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOWebSocket
import ServerProtocol
import SimulatedWorld
import SyncCore
import SyncEngine
import ServerClient
import ChatServer
import Wire

/// A clock that moves only when told: the wall clock (Unix ms) of the server and the
/// monotonic clock (ns) of the server and its clients, in step.
public final class ManualClock: @unchecked Sendable {  // one thread: the pair's owner
    public private(set) var nanoseconds: UInt64 = 1_000_000_000
    /// The wall clock at `nanoseconds` 0.
    public let wallBase: Int64

    public init(wallBase: Int64 = 1_800_000_000_000) { self.wallBase = wallBase }

    public var wallUnixMs: Int64 { wallBase + Int64(nanoseconds / 1_000_000) }
    public func advance(milliseconds: Int64) { nanoseconds += UInt64(max(0, milliseconds)) * 1_000_000 }
}

/// `synchat server` and its clients in one process, on one thread, in virtual time,
/// as quinn's `Pair` drives two endpoints: the real `WorldServer` (its request
/// handling and its socket handlers on NIO's `EmbeddedChannel`) and the real `NetworkWorld`
/// and `NetworkSession` of each client, joined by `InProcessTransport` instead of sockets.
/// Nothing runs by itself: `run(for:)` moves the clock to whatever is due next on either side.
public final class WorldPair {
    public let clock: ManualClock
    public private(set) var host: WorldHost
    public private(set) var server: WorldServer
    public private(set) var clients: [Client] = []
    /// False between `crash()` and `restart(store:)`: nothing answers.
    public private(set) var serving = true
    private let settings: (seed: UInt64, contacts: Int, traffic: Double, speed: Double)

    /// One client: the TUI's session with no screen, on its transport.
    public final class Client {
        public let name: String
        public let transport: InProcessTransport
        public let world: NetworkWorld
        public let session: NetworkSession
        public let secret: String
        init(name: String, transport: InProcessTransport, world: NetworkWorld, session: NetworkSession, secret: String) {
            self.name = name
            self.transport = transport
            self.world = world
            self.session = session
            self.secret = secret
        }
    }

    /// A server (a new world, or `store`'s) on a manual clock.
    public init(seed: UInt64 = 1, contacts: Int = 2, trafficPerHour: Double = 0, speed: Double = 60, store: ServerStore? = nil,
                clock: ManualClock = ManualClock()) throws {
        self.clock = clock
        settings = (seed, contacts, trafficPerHour, speed)
        host = try WorldHost(seed: seed, contacts: contacts, trafficPerHour: trafficPerHour, speed: speed, store: store,
                             wallClock: { clock.wallUnixMs })
        server = WorldServer(host: host, monotonic: { clock.nanoseconds }, selfDriven: false)
        server.invite = nil
    }

    /// Joins `name` (a first join, or a rejoin with `secret`), and starts its app.
    @discardableResult
    /// `settle`: false leaves the client's app unstepped (a join race: another joins before
    /// this one's relay socket opens).
    public func join(_ name: String, secret: String? = nil, invite: String? = nil, policy: SyncPolicy = .adaptive,
                     storage: ChatStorage = InMemoryChatStorage(), peer: String? = nil, adminToken: String? = nil,
                     settle settles: Bool = true) throws -> Client {
        let transport = InProcessTransport(server: serving ? server : nil, peer: peer ?? "127.0.0.\(clients.count % 250 + 2)")
        let secrets = SecretInMemory(secret)
        let (session, _) = try NetworkSession.join(transport, user: name, invite: invite, secrets: secrets, storage: storage, policy: policy,
                                                   adminToken: adminToken,
                                                   os: { SimOperatingSystem(seed: StableHash.fnv1a(name), scheduler: $0, timings: WorldTimings()) },
                                                   clock: { [clock] in clock.nanoseconds })
        session.start()
        let client = Client(name: name, transport: transport, world: session.world, session: session, secret: session.world.secret)
        clients.append(client)
        if settles { settle() }
        return client
    }

    /// Takes a client away (its app quit): its sockets close.
    public func leave(_ client: Client) {
        client.transport.closeAll()
        clients.removeAll { $0 === client }
        settle()
    }

    /// The server process dies (`kill -9`): no checkpoint, every socket drops, nothing answers
    /// until `restart`. What its store holds is what a killed server leaves.
    public func crash() {
        serving = false
        for c in clients { c.transport.serverGone() }
        host.store?.close()
        settle()
    }

    /// The network between the server and its clients is cut: every socket drops and nothing
    /// answers, while the server runs on, its world and faults as they were.
    public func cutNetwork() {
        for c in clients { c.transport.serverGone() }
        settle()
    }

    /// The network is back: the clients find the same server by themselves.
    public func healNetwork() {
        for c in clients { c.transport.server = server }
        settle()
    }

    /// A new server process on `store` (the crashed one's folder): it resumes the world where
    /// the store left it, its clock on the same wall clock; the clients find it by themselves.
    public func restart(store: ServerStore?) throws {
        precondition(!serving, "restart(store:) follows crash()")
        host = try WorldHost(seed: settings.seed, contacts: settings.contacts, trafficPerHour: settings.traffic, speed: settings.speed,
                             store: store, wallClock: { [clock] in clock.wallUnixMs })
        server = WorldServer(host: host, monotonic: { [clock] in clock.nanoseconds }, selfDriven: false)
        server.invite = nil
        serving = true
        for c in clients { c.transport.server = server }
        settle()
    }

    /// Wall milliseconds until something is due on either side (at most a second).
    private var nextDue: Int64 {
        var next = serving ? host.wallMillisecondsToNextEvent : 1000
        for c in clients { next = min(next, Int64(c.world.wallMillisecondsToNextEvent(cap: 1000))) }
        return next
    }

    /// Runs everything due now on both sides until nothing more comes.
    public func settle() {
        for pass in 0..<10_000 {
            precondition(pass < 9_999, "WorldPair.settle: still busy after 10 000 passes (a livelock)")
            if serving { host.advance() }
            var brought = 0
            for c in clients {
                brought += c.transport.collect()
                c.world.step()
                brought += c.transport.collect()
            }
            brought += clients.reduce(0) { $0 + $1.transport.pendingCount }
            if brought == 0 { return }
        }
    }

    /// Runs `milliseconds` of wall time (the world's clock moves `speed` times as much), a step
    /// at a time to whatever is due next on either side.
    public func run(milliseconds: Int64) {
        precondition(milliseconds >= 0, "run(milliseconds:) goes forward")
        let end = clock.nanoseconds + UInt64(milliseconds) * 1_000_000
        settle()
        while clock.nanoseconds < end {
            let left = Int64((end - clock.nanoseconds) / 1_000_000)
            clock.advance(milliseconds: max(1, min(nextDue, left)))
            settle()
        }
    }

    /// Runs until `condition` holds or `milliseconds` of wall time pass; whether it held.
    @discardableResult
    public func run(upTo milliseconds: Int64, until condition: () -> Bool) -> Bool {
        precondition(milliseconds >= 0, "run(upTo:) goes forward")
        let end = clock.nanoseconds + UInt64(milliseconds) * 1_000_000
        settle()
        while !condition() {
            guard clock.nanoseconds < end else { return false }
            clock.advance(milliseconds: max(1, min(nextDue, Int64((end - clock.nanoseconds) / 1_000_000))))
            settle()
        }
        return true
    }
}

/// The client's side of the pair: requests go to `WorldServer.serve`, WebSockets are the
/// server's own socket handlers on an `EmbeddedChannel`, written to as a client's masked
/// frames and read back as the server's. Every outcome waits for `drain()`, as `NetIO`'s do.
public final class InProcessTransport: ServerTransport {
    /// The server, or nil while it is down (nothing answers).
    var server: WorldServer?
    let peer: String
    private var inbox: [() -> Void] = []
    private var sockets: [InProcessWire] = []
    /// Requests the server has not answered yet: a crash answers them "connection reset", as a
    /// socket would (an indexer's answer comes later, on a clock a dead server never moves).
    private var outstanding: [Int: (Result<NetIO.Answer, TransportError>) -> Void] = [:]
    private var lastRequest = 0

    init(server: WorldServer?, peer: String) {
        self.server = server
        self.peer = peer
    }

    var pendingCount: Int { inbox.count }

    func post(_ work: @escaping () -> Void) { inbox.append(work) }

    public var wakeDescriptor: Int32? { nil }

    public func words(for error: Error) -> String { (error as? TransportError)?.message ?? "\(error)" }

    static func headers(_ token: String?, body: Data?) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: "127.0.0.1:7420")
        headers.add(name: ProtocolVersion.header, value: ProtocolVersion.headerValue)
        headers.add(name: "Content-Length", value: "\(body?.count ?? 0)")
        if let token { headers.add(name: "Authorization", value: "Bearer \(token)") }
        return headers
    }

    static let refused = TransportError("nothing answers at 127.0.0.1:7420 (is synchat server running there?)")

    /// The server process died: every socket drops with no close frame.
    func serverGone() {
        server = nil
        for s in sockets { s.drop() }
        collect()
        let lost = outstanding.sorted { $0.key < $1.key }.map(\.value)
        outstanding.removeAll()
        for reply in lost { post { reply(.failure(TransportError("the connection to 127.0.0.1:7420 was cut"))) } }
    }

    /// The next requests to a path that a test wants cut (`[path: how many]`): each fails as
    /// a connection cut before its answer would.
    public var cutNext: [String: Int] = [:]
    /// Requests sent, by path (what a test counts).
    public private(set) var sent: [String: Int] = [:]

    public func request(_ method: HTTPMethod, _ path: String, body: Data?, token: String?,
                        reply: @escaping (Result<NetIO.Answer, TransportError>) -> Void) {
        sent[path, default: 0] += 1
        guard let server else { return post { reply(.failure(Self.refused)) } }
        if let n = cutNext[path], n > 0 {
            cutNext[path] = n - 1
            return post { reply(.failure(TransportError("the connection to 127.0.0.1:7420 was cut"))) }
        }
        lastRequest += 1
        let id = lastRequest
        outstanding[id] = reply
        server.serve(method, path, headers: Self.headers(token, body: body), body: body ?? Data(), peer: peer) { [weak self] status, data in
            // A server that crashed meanwhile answers nothing: its request was cut already.
            guard let self, let reply = outstanding.removeValue(forKey: id) else { return }
            post { reply(.success(NetIO.Answer(status: status, body: data))) }
        }
    }

    public func requestNow(_ method: HTTPMethod, _ path: String, body: Data?, token: String?) throws -> NetIO.Answer {
        guard let server else { throw Self.refused }
        var answer: NetIO.Answer?
        server.serve(method, path, headers: Self.headers(token, body: body), body: body ?? Data(), peer: peer) { status, data in
            answer = NetIO.Answer(status: status, body: data)
        }
        guard let answer else { throw TransportError("\(path): no answer at once (in process, requestNow takes only what answers at once)") }
        return answer
    }

    public func openSocket(_ path: String, token: String, opened: @escaping (ClientSocket) -> Void,
                           text: @escaping (Data) -> Void, closed: @escaping (Int, String) -> Void) -> ClientSocket {
        let socket = WebSocket(post: { [weak self] in self?.post($0) })
        let handler = ClientFrameHandler(socket: socket, opened: opened, text: text, closed: closed)
        let wire = InProcessWire(client: EmbeddedChannel(), socket: socket, handler: handler)
        // The connection reaches the server at the next drain, as a connection takes its time:
        // a user who joins meanwhile is not announced on it.
        post { [self] in
            guard !wire.ended else { return }
            guard let server else { return handler.finish(code: 1006, reason: Self.refused.message) }
            do {
                try wire.connect(server: server, peer: peer)
                socket.attach(wire.client)
                WebSocket.sendOpening(wire.client, host: "127.0.0.1", port: 7420, path: path, token: token)
            } catch {
                return handler.finish(code: 1006, reason: "in process: \(error)")
            }
            sockets.append(wire)
            wire.carry()
        }
        return socket
    }

    /// Carries the bytes each socket has to carry, both ways, until none move: what the
    /// client's handler made of them waits for `drain()`. Returns how many chunks moved.
    @discardableResult
    func collect() -> Int {
        var n = 0
        for s in sockets { n += s.carry() }
        sockets.removeAll { $0.ended }
        return n
    }

    /// Every socket closed as the app closes it (a close frame, then the end).
    func closeAll() {
        for s in sockets { s.clientCloses() }
        collect()
    }

    @discardableResult
    public func drain() -> Int {
        collect()
        let work = inbox
        inbox.removeAll()
        for w in work { w() }
        return work.count
    }
}

/// One WebSocket of the pair, as bytes on a wire: the client's pipeline (`WebSocket.configure`,
/// NetIO's own) on one `EmbeddedChannel`, the server's (`WorldServer.configureConnection`, a
/// real connection's) on another, and what each writes carried to the other. Everything one
/// side wrote since the last carry goes over as one read, as TCP may deliver it: a server's
/// `101` and its first frames arrive together, which is how a client that dropped the bytes
/// after the `101` lost a relay's first `contactsChanged` (real processes saw it; frames handed
/// over one by one never could).
final class InProcessWire {
    let client: EmbeddedChannel
    let server = EmbeddedChannel()
    let socket: WebSocket
    let handler: ClientFrameHandler
    private(set) var ended = false

    init(client: EmbeddedChannel, socket: WebSocket, handler: ClientFrameHandler) {
        self.client = client
        self.socket = socket
        self.handler = handler
    }

    func connect(server world: WorldServer, peer: String) throws {
        try world.configureConnection(server, tls: nil)
        try server.connect(to: SocketAddress(ipAddress: peer, port: 40_000)).wait()
        try WebSocket.configure(client, tls: nil, handler: handler)
        try client.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 7420)).wait()
    }

    /// All the bytes `from` wrote since the last time, as one buffer (nil: none).
    private static func written(_ from: EmbeddedChannel) -> ByteBuffer? {
        from.embeddedEventLoop.run()
        var all: ByteBuffer?
        while let chunk = try? from.readOutbound(as: ByteBuffer.self) {
            var chunk = chunk
            if all == nil { all = chunk } else { all!.writeBuffer(&chunk) }
        }
        return all
    }

    /// Carries bytes both ways until none move; an end on one side ends the other. Returns
    /// how many chunks moved.
    @discardableResult
    func carry() -> Int {
        guard !ended else { return 0 }
        var moved = 0
        while true {
            var any = false
            if let bytes = Self.written(client), server.isActive {
                _ = try? server.writeInbound(bytes)
                any = true
            }
            if let bytes = Self.written(server), client.isActive {
                _ = try? client.writeInbound(bytes)
                any = true
            }
            client.embeddedEventLoop.run()
            server.embeddedEventLoop.run()
            guard any else { break }
            moved += 1
        }
        if !server.isActive || !client.isActive {
            // A side that closed: its peer sees the connection end once the bytes are over.
            if server.isActive { _ = try? server.close().wait() }
            if client.isActive { _ = try? client.close().wait() }
            client.embeddedEventLoop.run()
            server.embeddedEventLoop.run()
            ended = true
            moved += 1
        }
        return moved
    }

    /// The app closes the socket: its close frame, then the end.
    func clientCloses() {
        socket.close()
        carry()
    }

    /// The server's process is gone: the connection ends with no close frame.
    func drop() {
        _ = try? client.close().wait()
        client.embeddedEventLoop.run()
        ended = true
    }
}
