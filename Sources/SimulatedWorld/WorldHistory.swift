import SyncCore
import SyncEngine

/// What the simulated world remembers of every message: the ledger, the wallet's outputs,
/// the indexer's index, and the ground truth of what realtime and push delivered. Everything
/// else the world holds is bounded (contacts, faults, the tips of a few sync objects).
///
/// One owner, two homes: `InMemoryWorldHistory` (the default: a day of traffic in a fraction
/// of a second) and a temporary SQLite file (`DiskWorld`), for runs whose history is bigger
/// than memory should hold (`synchat simulate --store disk`). Both answer every
/// question the same, in the same order: the event logs of every shipped scenario are byte
/// for byte the same on either (a test holds them so).
public protocol WorldHistory: AnyObject {
    // The ledger: every message to or from the user, in the order created.
    func record(_ m: NetworkMessage)
    var messageCount: Int { get }
    /// The ledger in order, each message with when it was indexed, when realtime delivered
    /// it and when a readable push reached the app or its extension (the measures' one pass).
    func forEachDelivery(_ body: (NetworkMessage, MessageDelivery) -> Void)

    // The wallet: outputs received, oldest first (by when they landed); a send spends the
    // oldest unspent one.
    func receiveOutput(_ txId: String, landedAt: Instant)
    func spendOldestOutput() -> String?
    /// The unspent outputs, oldest first: all of them, or those that landed at `since` or later.
    func unspentOutputs(since: Instant?) -> [String]

    // The indexer: a message indexed is in the list of its sync object (block-time order,
    // then the order indexed) and found by txId (the last one indexed under it).
    func index(_ m: NetworkMessage, at: Instant)
    var indexedCount: Int { get }
    /// The list's messages from `since` on, skipping `offset`, at most `limit`; `more` when
    /// messages lie past the last returned.
    func indexed(_ object: SyncObject, since: Instant, offset: Int, limit: Int?) -> (messages: [NetworkMessage], more: Bool)
    func indexedMessage(txId: String) -> NetworkMessage?
    /// How many incoming messages (each txId once) of the object's list landed after `after`
    /// and at or before `through`: the tips' counts, without reading the messages out.
    func indexedIncoming(_ object: SyncObject, after: Instant, through: Instant) -> Int
    /// Ground truth: every indexer call received, with when.
    func recordCall(_ call: IndexerCall, at: Instant)
    var calls: [(at: Instant, call: IndexerCall)] { get }

    // Ground truth of delivery.
    func markRealtimeDelivered(_ txId: String, at: Instant)
    func realtimeDelivered(_ txId: String) -> Bool
    var realtimeDeliveredCount: Int { get }
    func markPushOwed(_ txId: String)
    var owedPushes: [String] { get }
    func markPushDelivered(_ txId: String, at: Instant)
    func pushDeliveredAt(_ txId: String) -> Instant?
}

/// Ground truth of one message's way to the app: when the indexer had it, and when realtime
/// and push brought it (nil: they did not).
public struct MessageDelivery: Equatable, Sendable {
    public var indexedAt: Instant?
    public var realtimeAt: Instant?
    public var pushedAt: Instant?

    public init(indexedAt: Instant? = nil, realtimeAt: Instant? = nil, pushedAt: Instant? = nil) {
        self.indexedAt = indexedAt
        self.realtimeAt = realtimeAt
        self.pushedAt = pushedAt
    }
}

extension WorldHistory {
    /// The ledger in order, each message with whether realtime delivered it and whether a
    /// readable push reached the app or its extension.
    public func forEachMessage(_ body: (NetworkMessage, _ realtime: Bool, _ pushed: Bool) -> Void) {
        forEachDelivery { m, d in body(m, d.realtimeAt != nil, d.pushedAt != nil) }
    }

    /// The whole ledger as an array (tests, a profile's saved world): of the history's size.
    public var ledger: [NetworkMessage] {
        var all: [NetworkMessage] = []
        all.reserveCapacity(messageCount)
        forEachMessage { m, _, _ in all.append(m) }
        return all
    }
}

/// The world's history in memory.
public final class InMemoryWorldHistory: WorldHistory {
    private var messages: [NetworkMessage] = []
    /// The outputs ever received, oldest first; the first `spentOutputs` are spent. (A send
    /// spends the oldest: a count, not `removeFirst`, which would be a scan a send.)
    private var outputs: [String] = []
    /// When each of `outputs` landed (never decreasing: outputs are received as they land).
    private var outputTimes: [Instant] = []
    private var spentOutputs = 0
    /// Every message indexed, in the order indexed; the lists by sync object and the table
    /// by txId hold positions in it (a message is held once, not once per table: a copy per
    /// table costs 420 bytes a message here at the peak of a million-message run).
    private var indexedMessages: [NetworkMessage] = []
    private var lists: [SyncObject: [Int32]] = [:]
    private var byId: [String: Int32] = [:]
    public private(set) var calls: [(at: Instant, call: IndexerCall)] = []
    private var realtime: [String: Instant] = [:]
    /// When each of `indexedMessages` was indexed (a txId indexed again: its first time).
    private var indexedTimes: [Instant] = []
    private var owed: Set<String> = []
    private var pushedAt: [String: Instant] = [:]

    public init() {}

    /// Room for about `count` messages, made at once: a table that grows by doubling copies
    /// what it holds at each step, and past the caches every copy is a trip to memory.
    public func reserveCapacity(_ count: Int) {
        messages.reserveCapacity(count)
        indexedMessages.reserveCapacity(count)
        outputs.reserveCapacity(count)
        outputTimes.reserveCapacity(count)
        byId.reserveCapacity(count)
        realtime.reserveCapacity(count)
        indexedTimes.reserveCapacity(count)
        pushedAt.reserveCapacity(count)
    }

    public func record(_ m: NetworkMessage) { messages.append(m) }
    public var messageCount: Int { messages.count }
    public func forEachDelivery(_ body: (NetworkMessage, MessageDelivery) -> Void) {
        for m in messages {
            body(m, MessageDelivery(indexedAt: byId[m.txId].map { indexedTimes[Int($0)] }, realtimeAt: realtime[m.txId], pushedAt: pushedAt[m.txId]))
        }
    }

    public func receiveOutput(_ txId: String, landedAt: Instant) {
        outputs.append(txId)
        outputTimes.append(landedAt)
    }

    public func spendOldestOutput() -> String? {
        guard spentOutputs < outputs.count else { return nil }
        defer {
            spentOutputs += 1
            if spentOutputs > 1024, spentOutputs * 2 > outputs.count {
                outputs.removeFirst(spentOutputs)
                outputTimes.removeFirst(spentOutputs)
                spentOutputs = 0
            }
        }
        return outputs[spentOutputs]
    }

    public func unspentOutputs(since: Instant?) -> [String] {
        guard let since else { return Array(outputs[spentOutputs...]) }
        // The first unspent output that landed at `since` or later (binary search).
        var low = spentOutputs, high = outputs.count
        while low < high {
            let mid = (low + high) / 2
            if outputTimes[mid] < since { low = mid + 1 } else { high = mid }
        }
        return Array(outputs[low...])
    }

    public func index(_ m: NetworkMessage, at: Instant) {
        let position = Int32(indexedMessages.count)
        indexedTimes.append(byId[m.txId].map { indexedTimes[Int($0)] } ?? at)
        indexedMessages.append(m)
        byId[m.txId] = position
        // Sorted by block time; a message of the same block time goes after those indexed before.
        let object = SyncObject(holding: m)
        var list = lists.removeValue(forKey: object) ?? []
        var i = list.count
        while i > 0, indexedMessages[Int(list[i - 1])].blockTime > m.blockTime { i -= 1 }
        list.insert(position, at: i)
        lists[object] = list
    }

    public var indexedCount: Int { byId.count }

    public func indexed(_ object: SyncObject, since: Instant, offset: Int, limit: Int?) -> (messages: [NetworkMessage], more: Bool) {
        let list = lists[object] ?? []
        // A binary search, not a scan: a scan would read the whole of a conversation at every
        // poll, and a conversation grows with the run.
        var low = 0, high = list.count
        while low < high {
            let mid = (low + high) / 2
            if indexedMessages[Int(list[mid])].blockTime < since { low = mid + 1 } else { high = mid }
        }
        let start = min(list.count, low + offset)
        let end = limit.map { min(list.count, start + $0) } ?? list.count
        return (list[start..<end].map { indexedMessages[Int($0)] }, end < list.count)
    }

    public func indexedMessage(txId: String) -> NetworkMessage? { byId[txId].map { indexedMessages[Int($0)] } }

    public func indexedIncoming(_ object: SyncObject, after: Instant, through: Instant) -> Int {
        let list = lists[object] ?? []
        var low = 0, high = list.count
        while low < high {
            let mid = (low + high) / 2
            if indexedMessages[Int(list[mid])].blockTime <= after { low = mid + 1 } else { high = mid }
        }
        var seen = Set<String>()
        for position in list[low...] {
            let m = indexedMessages[Int(position)]
            guard m.blockTime <= through else { break }
            if m.direction == .incoming { seen.insert(m.txId) }
        }
        return seen.count
    }

    public func recordCall(_ call: IndexerCall, at: Instant) { calls.append((at, call)) }

    public func markRealtimeDelivered(_ txId: String, at: Instant) { if realtime[txId] == nil { realtime[txId] = at } }
    public func realtimeDelivered(_ txId: String) -> Bool { realtime[txId] != nil }
    public var realtimeDeliveredCount: Int { realtime.count }
    public func markPushOwed(_ txId: String) { owed.insert(txId) }
    public var owedPushes: [String] { Array(owed) }
    public func markPushDelivered(_ txId: String, at: Instant) { pushedAt[txId] = at }
    public func pushDeliveredAt(_ txId: String) -> Instant? { pushedAt[txId] }
}
