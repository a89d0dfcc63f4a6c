import Foundation
import SyncCore
import SyncEngine

/// The timings of the simulated world (docs/spec.md#terms). Every value is drawn uniformly between its
/// bounds from the stream of its concern.
public struct WorldTimings: Sendable {
    public var indexingLag = (low: Interval.seconds(1), high: Interval.seconds(3))
    public var requestLatency = (low: Interval.milliseconds(80), high: Interval.milliseconds(300))
    public var realtimeDelay = (low: Interval.milliseconds(800), high: Interval.milliseconds(1500))
    public var connectLatency = (low: Interval.milliseconds(150), high: Interval.milliseconds(600))
    public var pushLatency = (low: Interval.seconds(1), high: Interval.seconds(5))
    public var replyDelay = (low: Interval.seconds(5), high: Interval.seconds(40))
    /// Publication to block: an outgoing message lands this long after it is sent.
    public var confirmation = Interval.seconds(1)
    /// Token lifecycle steps: `new → registered → active`.
    public var tokenStep = Interval.seconds(1)
    public var refreshJitter = (low: Interval.zero, high: Interval.minutes(3))
    public var refreshMinimum = Interval.minutes(15)
    public var refreshExpiry = Interval.seconds(30)
    public var paymentsPageSize = 25
    /// Messages a page of handshakes or of one conversation: what keeps an answer under the
    /// client's cap (`MessageLimits.maxAnswerBytes`) when every message is as long as it may
    /// be and every byte of it escaped.
    public var conversationPageSize = MessageLimits.conversationPageSize
    public var paymentShare = 0.08

    public init() {}
}

/// The in-process simulated network: contacts and their traffic, the indexer, the realtime
/// node, the push service and the OS. It implements the engine's ports and calls the app
/// back through its `ClientEndpoint`, always via the shared scheduler.
public final class SimulatedWorld {
    public let scheduler: Scheduler
    public let me: Address
    public let seed: UInt64
    public let timings: WorldTimings

    public let indexer: SimIndexer
    public let node: SimNode
    public let push: SimPushService
    public let os: SimOperatingSystem
    public let traffic: Traffic
    /// Ground truth: what the phone paid in battery (see `WakeUps`).
    public let wakeUps = WakeUps()

    /// What the world remembers of every message (see `WorldHistory`).
    public let history: WorldHistory
    /// Ground truth: every message to or from the user, in the order they were created (a
    /// copy of the history's ledger: tests and a profile's saved world).
    public var ledger: [NetworkMessage] { history.ledger }
    /// The user's unspent outputs, oldest first (txIds of incoming messages).
    public var utxos: [String] { history.unspentOutputs(since: nil) }
    /// The unspent outputs that landed at `since` or later (all of them for nil).
    public func utxos(since: Instant?) -> [String] { history.unspentOutputs(since: since) }

    /// Spends the oldest unspent output, if any.
    private func spendOldestOutput() -> String? { history.spendOldestOutput() }
    public private(set) var contacts: [Contact] = []

    weak var client: ClientEndpoint?
    /// Where every new message and contact is written, for a profile that outlives the run.
    public weak var persistence: WorldPersistence?
    /// Errors from `persistence`, reported by whoever runs the world.
    public var persistenceFailed: ((Error) -> Void)?
    /// Told each time the world's faults change (`faults`), whoever changed them.
    public var onFaultsChanged: ((WorldFaults) -> Void)?
    /// The faults `onFaultsChanged` was last told of.
    var toldFaults = WorldFaults.none
    private var txIds: RandomStream
    private var landingDraws: RandomStream

    public init(seed: UInt64, me: Address = Address("kaspa:qme0000synchat"), scheduler: Scheduler, timings: WorldTimings = WorldTimings(),
                history: WorldHistory = InMemoryWorldHistory()) {
        self.history = history
        self.seed = seed
        self.me = me
        self.scheduler = scheduler
        self.timings = timings
        self.txIds = RandomStream(seed: seed, concern: "tx-ids")
        self.landingDraws = RandomStream(seed: seed, concern: "landing")
        self.indexer = SimIndexer(seed: seed, me: me, scheduler: scheduler, timings: timings, history: history)
        self.node = SimNode(seed: seed, me: me, scheduler: scheduler, timings: timings, history: history)
        self.push = SimPushService(seed: seed, scheduler: scheduler, timings: timings, history: history)
        self.os = SimOperatingSystem(seed: seed, scheduler: scheduler, timings: timings)
        self.traffic = Traffic(seed: seed, scheduler: scheduler, timings: timings)
        node.world = self
        indexer.wakeUps = wakeUps
        push.world = self
        os.world = self
        traffic.world = self
    }

    /// Connects the app: from now on the world calls it back.
    /// Connects the app: it learns the contacts the world has for it.
    public func attach(client: ClientEndpoint) {
        self.client = client
        client.contactsKnown(allContacts)
    }

    public var ports: WorldPorts {
        WorldPorts(indexer: indexer, realtime: node, push: push, system: os, network: self)
    }

    /// Adds a contact (one the world has already, matched by handle, is returned as it is);
    /// the app, when attached, learns it.
    @discardableResult
    public func addContact(handle: String, displayName: String, address: Address? = nil) -> Contact {
        if let known = contacts.first(where: { $0.handle == handle }) { return known }
        let contact = Contact(address: address ?? Self.address(for: handle), handle: handle, displayName: displayName)
        contacts.append(contact)
        persist { try $0.saveWorldContact(contact) }
        client?.contactsKnown([contact])
        return contact
    }

    /// Writes of the world's persistence that failed (a full disk), kept in order and
    /// written again before any later one: they are upserts, so a replay is harmless.
    private var unsavedWrites: [(WorldPersistence) throws -> Void] = []

    private func persist(_ write: @escaping (WorldPersistence) throws -> Void) {
        guard persistence != nil else { return }
        unsavedWrites.append(write)
        do { try retryPersistence() } catch { persistenceFailed?(error) }
    }

    /// Writes what the persistence could not take before, in order. Throws while it still fails.
    public func retryPersistence() throws {
        guard let persistence else { return }
        while let write = unsavedWrites.first {
            try write(persistence)
            unsavedWrites.removeFirst()
        }
    }

    /// A restored ledger: all of it indexed, incoming outputs unspent except what the
    /// user's sends spent (oldest first, when each was published), as before.
    /// `noting`: outgoing txIds whose spent output the replay tells (a publication answered
    /// again after a restart carries what it spent).
    func restoreLedger(_ saved: [NetworkMessage], noting wanted: Set<String> = []) -> [String: [String]] {
        precondition(history.messageCount == 0, "restoreLedger: a new world's history")
        for m in saved { history.record(m) }
        func walletTime(_ m: NetworkMessage) -> Instant { m.direction == .incoming ? m.blockTime : m.blockTime - timings.confirmation }
        var spentBy: [String: [String]] = [:]
        for m in saved.sorted(by: { walletTime($0) < walletTime($1) }) {
            indexer.add(m)
            if m.direction == .incoming {
                history.receiveOutput(m.txId, landedAt: m.blockTime)
            } else {
                let spent = spendOldestOutput()
                if wanted.contains(m.txId) { spentBy[m.txId] = spent.map { [$0] } ?? [] }
            }
        }
        return spentBy
    }

    /// A contact by handle: the world's own (simulated ones, and people it muted), then the
    /// server's people.
    public func contact(handle: String) -> Contact? {
        contacts.first { $0.handle == handle } ?? people?.contact(handle: handle).flatMap { $0.address == me ? nil : $0 }
    }

    /// A contact by address, the same way.
    public func contact(address: Address) -> Contact? {
        contacts.first { $0.address == address } ?? people?.contact(address: address).flatMap { $0.address == me ? nil : $0 }
    }

    /// Whether `address` is one of the server's people (another user), not a simulated contact.
    public func isPerson(_ address: Address) -> Bool { address != me && people?.contains(address) == true }

    /// Every contact, the world's own first, then the server's other people.
    public var allContacts: [Contact] {
        guard let people else { return contacts }
        let own = Set(contacts.map(\.address))
        return contacts + people.all.filter { $0.address != me && !own.contains($0.address) }
    }

    /// The device's network (`network off` / `network on`): realtime, the indexer and the push
    /// socket fail together; the push service keeps what it can (`SimPushService.model`).
    public var networkOff = false {
        didSet {
            guard networkOff != oldValue else { return }
            node.deviceOffline = networkOff
            indexer.deviceOffline = networkOff
            push.deviceNetwork(reachable: !networkOff)
        }
    }

    /// The push service was told a contact is muted or not (`SimPushService.setMuted`): the
    /// world keeps it with the contact, so that the push service's list outlives a restart.
    func keepMute(_ address: Address, _ muted: Bool) {
        if contacts.firstIndex(where: { $0.address == address }) == nil, let person = contact(address: address) {
            contacts.append(person)  // one of the server's people: the world keeps its own entry for the mute
        }
        guard let i = contacts.firstIndex(where: { $0.address == address }), contacts[i].muted != muted else { return }
        contacts[i].muted = muted
        let c = contacts[i]
        persist { try $0.saveWorldContact(c) }
    }

    /// A stable address for a handle.
    public static func address(for handle: String) -> Address {
        Address("kaspa:q" + hex(StableHash.fnv1a(handle), digits: 16))
    }

    /// A contact sends the user a message that lands on the network now.
    @discardableResult
    public func deliverIncoming(from contact: Contact, kind: MessageKind, body: String) -> NetworkMessage {
        let message = NetworkMessage(txId: newTxId(), conversation: contact.address, direction: .incoming,
                                     kind: kind, body: body, blockTime: scheduler.now)
        history.record(message)
        persist { try $0.saveWorldMessage(message) }
        land(message)
        return message
    }

    /// Contacts who are people, not simulated (the other users of `synchat server`, shared
    /// by all its worlds): they never reply by themselves.
    public var people: People?
    /// Told of every message the user publishes (a server passes it to its recipient).
    public var onPublished: ((NetworkMessage) -> Void)?

    /// A message someone else published to the user (another user of the server): the same
    /// transaction, landing at its block time.
    public func deliverIncoming(_ message: NetworkMessage) {
        precondition(message.direction == .incoming, "deliverIncoming: an incoming message")
        history.record(message)
        persist { try $0.saveWorldMessage(message) }
        land(message)
    }

    private func newTxId() -> String {
        let id = String(hex(txIds.next(), digits: 16).prefix(15))
        _ = txIds.next()
        return id
    }

    /// A message reaches its block: it is indexed after the indexing lag, notified on the
    /// realtime channel, and pushed. Every per-message draw happens here, in a fixed order,
    /// whatever the client does, so that all policies see the same world.
    private func land(_ message: NetworkMessage) {
        let lag = landingDraws.interval(timings.indexingLag.low, timings.indexingLag.high)
        let realtimeDelay = landingDraws.interval(timings.realtimeDelay.low, timings.realtimeDelay.high)
        let pushLatency = landingDraws.interval(timings.pushLatency.low, timings.pushLatency.high)
        let pushDraw = landingDraws.unit()
        let flakyDraw = landingDraws.unit()
        scheduler.schedule(at: message.blockTime, "land \(message.txId.prefix(8))") { [self] in
            if message.direction == .incoming { history.receiveOutput(message.txId, landedAt: message.blockTime) }  // a send spent its inputs when published
            scheduler.schedule(after: lag, "index") { [indexer] in indexer.add(message) }
            // The node reports every change to the address's outputs: outgoing txs too.
            node.schedule(message, after: realtimeDelay, flakyDraw: flakyDraw)
            if message.direction == .incoming {
                push.messageLanded(message, sender: contact(address: message.conversation), latency: pushLatency, dropDraw: pushDraw)
            }
        }
    }
}

extension SimulatedWorld: PublishPort {
    /// The wallet spends its oldest unspent output, whether or not the app has ever seen the
    /// message that created it.
    /// The node takes the transaction: it fails while the node is down (the realtime fault
    /// `down`), as a submission to an unreachable node does.
    /// In process a publish is answered or refused at once, never lost on its way: `key` has
    /// nothing to tell apart here.
    public func publish(from me: Address, to contact: Address, body: String, key: String, reply: @escaping (Result<Publication, TransportError>) -> Void) {
        reply(publish(from: me, to: contact, body: body))
    }

    /// The same, answered at once.
    /// `commit`: makes the message durable before anything of it happens (a server answers
    /// `200` only for what its disk holds). When it throws, nothing is spent,
    /// recorded or landed, and the publication fails with its words.
    public func publish(from me: Address, to contact: Address, body: String,
                        commit: ((NetworkMessage) throws -> Void)? = nil) -> Result<Publication, TransportError> {
        guard !networkOff else { return .failure(TransportError("no network")) }
        guard !node.down else { return .failure(TransportError("node unreachable")) }
        let message = NetworkMessage(txId: newTxId(), conversation: contact, direction: .outgoing, kind: .contextual,
                                     body: body, blockTime: scheduler.now + timings.confirmation)
        if let commit {
            do { try commit(message) } catch { return .failure(TransportError("\(error)")) }
        }
        let spent = spendOldestOutput().map { [$0] } ?? []
        history.record(message)
        if commit == nil { persist { try $0.saveWorldMessage(message) } }
        land(message)
        if !isPerson(contact), let c = contacts.first(where: { $0.address == contact }) {
            traffic.reply(to: message, from: c)
        }
        onPublished?(message)
        return .success(Publication(message: message, spent: spent))
    }
}

func hex(_ v: UInt64, digits: Int) -> String {
    let chars = Array("0123456789abcdef")
    return String((0..<digits).reversed().map { chars[Int((v >> (UInt64($0) * 4)) & 0xF)] })
}
