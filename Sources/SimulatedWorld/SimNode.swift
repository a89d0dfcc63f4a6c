import SyncCore
import SyncEngine

/// The realtime node (docs/spec.md#terms): a subscription that notifies the txs of the user's address
/// (incoming, and the user's own spends) about a second after their block time. It only lives while the app is in the foreground: on
/// background the OS kills the socket *silently* (the app is never told). Faults: `down`
/// (connect fails, a live connection closes with an error), `stale` (the current connection
/// stops delivering without any error), `flaky P%` (each notification drops the connection
/// with probability P).
public final class SimNode: RealtimePort {
    public var down = false {
        didSet { if down && !oldValue { closeWithError("node went down") } }
    }
    public var flakyPercent: Double = 0
    /// The device has no network (`network off`): connects fail and a live socket closes.
    public var deviceOffline = false {
        didSet { if deviceOffline && !oldValue { closeWithError("network unreachable") } }
    }
    /// Ground truth: UTXO-set requests served.
    public private(set) var utxoRequests = 0
    public private(set) var connectsServed = 0
    /// Ground truth: whether the realtime channel delivered `txId` to the app (the world's history).
    public func delivered(_ txId: String) -> Bool { history.realtimeDelivered(txId) }
    /// Ground truth: how many messages the realtime channel delivered to the app.
    public var deliveredCount: Int { history.realtimeDeliveredCount }
    private let history: WorldHistory

    public struct Connection: Equatable, Sendable {
        public var id: Int
        public var alive: Bool
        public var stale: Bool
    }

    public private(set) var connection: Connection?
    weak var world: SimulatedWorld?
    private let me: Address
    private let scheduler: Scheduler
    private let timings: WorldTimings
    private var latencies: RandomStream
    private var utxoLatencies: RandomStream
    private var pingLatencies: RandomStream
    private var nextId = 0

    init(seed: UInt64, me: Address, scheduler: Scheduler, timings: WorldTimings, history: WorldHistory) {
        self.history = history
        self.me = me
        self.scheduler = scheduler
        self.timings = timings
        self.latencies = RandomStream(seed: seed, concern: "connect-latency")
        self.utxoLatencies = RandomStream(seed: seed, concern: "utxo-latency")
        self.pingLatencies = RandomStream(seed: seed, concern: "ping-latency")
    }

    public func connect(subscribing address: Address, forced: Bool) -> Int {
        nextId += 1
        let id = nextId
        // A new connection replaces the old socket, forced or not; the old one is gone.
        connection = nil
        world?.faultsMayHaveChanged()  // a stale one ends with it
        let delay = latencies.interval(timings.connectLatency.low, timings.connectLatency.high)
        world?.wakeUps.traffic(at: scheduler.now)
        scheduler.schedule(after: delay, "connect \(id)") { [self] in
            guard let client = world?.client else { return }
            guard world?.os.foreground ?? false else {
                client.realtimeConnectFailed(connection: id, error: "app suspended")
                return
            }
            if deviceOffline {
                client.realtimeConnectFailed(connection: id, error: "no network")
                return
            }
            if down {
                client.realtimeConnectFailed(connection: id, error: "node unreachable")
                return
            }
            connectsServed += 1
            connection = Connection(id: id, alive: true, stale: false)
            client.realtimeConnected(connection: id)
        }
        return id
    }

    /// The UTXO set of the user's address (one request): unspent incoming txIds (those that
    /// landed at `since` or later, or all), after a request latency; fails while the node is down.
    public func requestUtxoSet(for address: Address, since: Instant?, reply: @escaping (Result<[String], TransportError>) -> Void) {
        // A device without network never reaches the node: no request.
        guard !deviceOffline else {
            scheduler.schedule(after: .milliseconds(50), "no network") { reply(.failure(TransportError("no network"))) }
            return
        }
        utxoRequests += 1
        world?.wakeUps.requestSent(at: scheduler.now)
        let delay = utxoLatencies.interval(timings.requestLatency.low, timings.requestLatency.high)
        scheduler.schedule(after: delay, "utxo set") { [self] in
            if deviceOffline { reply(.failure(TransportError("no network"))); return }
            world?.wakeUps.traffic(at: scheduler.now)
            if down { reply(.failure(TransportError("node unreachable"))); return }
            let entries = world?.utxos(since: since) ?? []
            utxoBytes += Self.utxoReplyBytes(entries)
            bytesServed.append((scheduler.now, Self.utxoReplyBytes(entries)))
            largestUtxoReply = max(largestUtxoReply, entries.count)
            reply(.success(entries))
        }
    }

    /// Ground truth: bytes of the UTXO-set replies served, as the modelled wire document
    /// `{"entries":[{"txId":"…","blockDaaScore":…},…]}`: it grows with the entries.
    public private(set) var utxoBytes = 0
    /// Ground truth: each UTXO-set reply's bytes with when it left (a chart's bytes lane).
    public private(set) var bytesServed: [(at: Instant, bytes: Int)] = []
    /// Ground truth: the most entries one UTXO-set reply carried.
    public private(set) var largestUtxoReply = 0
    /// Ground truth: bytes of the realtime notifications delivered (each message's document).
    public private(set) var realtimeBytes = 0

    /// The size of a UTXO-set reply of `entries` (a txId and a 13-digit score each): the
    /// document's length, counted without writing it.
    public static func utxoReplyBytes(_ entries: [String]) -> Int {
        let envelope = #"{"entries":[]}"#.utf8.count
        let perEntry = #"{"txId":"","blockDaaScore":0000000000000}"#.utf8.count
        return envelope + entries.reduce(0) { $0 + perEntry + $1.utf8.count } + max(0, entries.count - 1)
    }

    /// A keepalive: answered after a round trip only if connection `id` is still the live,
    /// delivering one when the answer is due. A stale socket swallows it without a word.
    public func ping(connection id: Int, answered: @escaping () -> Void) {
        let delay = pingLatencies.interval(.milliseconds(20), .milliseconds(300))
        world?.wakeUps.traffic(at: scheduler.now)
        scheduler.schedule(after: delay, "keepalive \(id)") { [self] in
            guard let c = connection, c.id == id, c.alive, !c.stale, !down, !deviceOffline else { return }
            answered()
        }
    }

    /// The OS suspended the app: the socket dies, and nobody tells the app.
    func appSuspended() {
        connection?.alive = false
    }

    /// Fault `stale`: the current connection stops delivering, silently.
    public func makeStale() {
        connection?.stale = true
    }

    func schedule(_ message: NetworkMessage, after delay: Interval, flakyDraw: Double) {
        scheduler.schedule(after: delay, "realtime notify") { [self] in
            guard let c = connection, c.alive, !c.stale, let client = world?.client else { return }
            if flakyPercent > 0, flakyDraw * 100 < flakyPercent {
                closeWithError("connection dropped (flaky network)")
                return
            }
            history.markRealtimeDelivered(message.txId, at: scheduler.now)
            world?.wakeUps.traffic(at: scheduler.now)
            if let me = world?.me { realtimeBytes += MessageDocument.encode(message, me: me).data.count }
            client.realtimeNotified(connection: c.id, message: message)
        }
    }

    private func closeWithError(_ error: String) {
        guard let c = connection, c.alive else { return }
        connection?.alive = false
        scheduler.schedule(after: .zero, "realtime close") { [weak self] in
            self?.world?.client?.realtimeDisconnected(connection: c.id, error: error)
        }
    }
}
