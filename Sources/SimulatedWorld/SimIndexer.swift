import Foundation
import SyncCore
import SyncEngine
import Wire

/// The indexer (REST-like backend, docs/spec.md#terms): stores each message once indexed, answers the
/// calls of `IndexerCall` with JSON documents after a latency, and counts every request.
/// Faults: `down` (calls fail), `latency` (every call takes exactly that long).
public final class SimIndexer: IndexerPort {
    public var down = false
    public var latency: Interval?
    /// The device has no network (`network off`): every call fails.
    public var deviceOffline = false
    /// Test knob: the next N replies are malformed JSON documents.
    public var malformedReplies = 0
    /// Test knob (the wire fuzzer): may replace a reply document on its way out; returns nil
    /// to leave it as it is.
    public var rewriteReply: ((IndexerCall, Data) -> Data?)?
    /// Ground truth: replies the rewrite replaced.
    public private(set) var rewrittenReplies = 0
    /// Test knob: calls for which this returns true fail with a server error.
    public var failingCalls: ((IndexerCall) -> Bool)?
    /// Ground truth: every request received, by kind.
    public private(set) var requestsByKind: [String: Int] = [:]
    public var requests: Int { requestsByKind.values.reduce(0, +) }
    /// Ground truth: bytes of the reply documents served, by the call's kind (an error
    /// reply is counted as its status line's words).
    public private(set) var bytesByKind: [String: Int] = [:]
    /// Ground truth: each reply's bytes with when it left (a chart's bytes lane).
    public private(set) var bytesServed: [(at: Instant, bytes: Int)] = []
    /// Ground truth: every call received, with when it was received.
    public var calls: [(at: Instant, call: IndexerCall)] { history.calls }

    /// Ground truth: the radio's wake-ups (the world's).
    var wakeUps: WakeUps?
    private let me: Address
    private let scheduler: Scheduler
    private let timings: WorldTimings
    private var latencies: RandomStream
    /// What was indexed, and the calls received: the world's history.
    private let history: WorldHistory

    init(seed: UInt64, me: Address, scheduler: Scheduler, timings: WorldTimings, history: WorldHistory) {
        self.history = history
        self.me = me
        self.scheduler = scheduler
        self.timings = timings
        self.latencies = RandomStream(seed: seed, concern: "request-latency")
    }

    /// The latest block time indexed, of any message to or from the user, and of each sync
    /// object (the `tip` call).
    private var latestIndexed: Instant?
    private var latestByObject: [SyncObject: Instant] = [:]

    /// The message is indexed: visible to queries from now on.
    func add(_ m: NetworkMessage) {
        history.index(m, at: scheduler.now)
        latestIndexed = max(latestIndexed ?? m.blockTime, m.blockTime)
        let object = SyncObject(holding: m)
        latestByObject[object] = max(latestByObject[object] ?? m.blockTime, m.blockTime)
    }

    public var indexedCount: Int { history.indexedCount }
    /// Ground truth: messages carried in replies, all calls together (a message fetched
    /// twice counts twice): the work a catch-up gives the simulation besides the traffic.
    public private(set) var messagesServed = 0

    public func send(_ call: IndexerCall, reply: @escaping (Result<Data, TransportError>) -> Void) {
        // A device without network never reaches the backend: no request, no bytes.
        guard !deviceOffline else {
            scheduler.schedule(after: .milliseconds(50), "no network") { reply(.failure(TransportError("no network"))) }
            return
        }
        requestsByKind[call.kind, default: 0] += 1
        history.recordCall(call, at: scheduler.now)
        wakeUps?.requestSent(at: scheduler.now)
        let delay = latency ?? latencies.interval(timings.requestLatency.low, timings.requestLatency.high)
        scheduler.schedule(after: delay, "indexer reply") { [self] in
            if deviceOffline {
                reply(.failure(TransportError("no network")))
                return
            }
            wakeUps?.traffic(at: scheduler.now)
            if down {
                bytesByKind[call.kind, default: 0] += "indexer unavailable (503)".utf8.count
                reply(.failure(TransportError("indexer unavailable (503)")))
                return
            }
            if let failingCalls, failingCalls(call) {
                reply(.failure(TransportError("indexer internal error (500)")))
                return
            }
            if malformedReplies > 0 {
                malformedReplies -= 1
                reply(.success(Data("{\"messages\": [{\"txId\": 42}".utf8)))
                return
            }
            let document = answer(call)
            bytesByKind[call.kind, default: 0] += document.count
            bytesServed.append((scheduler.now, document.count))
            if let rewriteReply, let other = rewriteReply(call, document) {
                rewrittenReplies += 1
                reply(.success(other))
                return
            }
            reply(.success(document))
        }
    }

    /// The query is evaluated when the reply leaves, as a server would.
    private func answer(_ call: IndexerCall) -> Data {
        if case .tip = call { return tips(counting: nil) }
        if case .tipCounting(let after, let through) = call { return tips(counting: (after, through)) }
        var nextPage: Int?
        let found: [NetworkMessage]
        switch call {
        case .handshakes(let d, let since, let page):
            let size = timings.conversationPageSize
            let (messages, more) = history.indexed(.handshakes(d), since: since, offset: page * size, limit: size)
            found = messages
            if more { nextPage = page + 1 }
        case .contextual(let a, let d, let since, let page):
            let size = timings.conversationPageSize
            let (messages, more) = history.indexed(.contextual(a, d), since: since, offset: page * size, limit: size)
            found = messages
            if more { nextPage = page + 1 }
        case .payments(let since, let page):
            let size = timings.paymentsPageSize
            let (messages, more) = history.indexed(.payments, since: since, offset: page * size, limit: size)
            found = messages
            if more { nextPage = page + 1 }
        case .messageById(let id):
            found = history.indexedMessage(txId: id).map { [$0] } ?? []
        case .tip, .tipCounting:
            found = []  // answered above
        }
        let messages = found.map { MessageDocument.encode($0, me: me) }
        messagesServed += messages.count
        return JSONValue.object([
            ("messages", .array(messages)),
            ("nextPage", nextPage.map { .int(Int64($0)) } ?? .null),
        ]).data
    }

    /// The tips: the newest indexed block time of all, and of each object; `counting`, each
    /// object's as `[newest, n]`, n its incoming messages that landed in (after, through].
    private func tips(counting window: (after: Instant, through: Instant)?) -> Data {
        let objects = latestByObject.sorted { $0.key < $1.key }.map { object, newest -> (String, JSONValue) in
            guard let (after, through) = window else { return (object.description, .int(newest.milliseconds)) }
            let n = newest <= after ? 0 : history.indexedIncoming(object, after: after, through: through)
            return (object.description, .array([.int(newest.milliseconds), .int(Int64(n))]))
        }
        return JSONValue.object([
            ("tip", latestIndexed.map { .int($0.milliseconds) } ?? .null),
            ("objects", .object(objects)),
        ]).data
    }

    /// The size of a reply document carrying `messages` (the oracle's floor: a fetch by id).
    public static func replyBytes(carrying messages: [NetworkMessage], me: Address) -> Int {
        JSONValue.object([("messages", .array(messages.map { MessageDocument.encode($0, me: me) })), ("nextPage", .null)]).data.count
    }

}
