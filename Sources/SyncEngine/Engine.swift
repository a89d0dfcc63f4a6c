import Foundation
import SyncCore

/// The sync engine, sans-IO (quinn-proto's `Connection`): it contains no networking code and
/// gets no timestamps from the operating system. Everything that happens reaches it as an
/// `EngineInput` with `now` (`handle(_:now:)`); what it wants done leaves it as an `Effect`
/// (`pollEffect()`): an indexer call, a connection to open, a token to register, a refresh to
/// ask the OS for. Replies come back as inputs. Its one timer is `nextDeadline`; at that
/// instant the runner hands it `.deadline`. Every decision is a `SyncEvent` (`pollEvent()`).
///
/// The store is read through one narrow interface, `StoreView` (a local lookup: has this
/// txId, where is this cursor), and written through effects (`.write`): the messages and the
/// cursor that covers them as one write (rule 9), the learned state, contacts, read marks,
/// pending pushes. Until a write answers, and when it fails (a full disk), what it carried is
/// kept in memory (`UnsavedChanges`), so that reads see it and nothing is lost.
///
/// `SyncDriver` is the runner that performs the effects against the world's ports.
public final class Engine {
    public let settings: SyncSettings
    public let policy: SyncPolicy
    public let me: Address
    /// The instant of the input being handled.
    public internal(set) var now: Instant

    /// The machines the rules are decided by (`SyncMachines`).
    var machines: SyncMachines
    /// The push channel: notification mode, token, permission, pushes waiting (`PushChannel`).
    var pushChannel: PushChannel
    /// What the app knows it has covered, beyond the cursors (`Coverage`).
    var coverage: Coverage
    /// The one way the store is read, and the writes it owes (`StoreView`).
    var storeView: StoreView
    /// This launch, the conversation on screen, the realtime connection (`Presence`).
    var presence: Presence
    /// The background refresh asked of the OS (`RefreshAsked`).
    var osRefresh = RefreshAsked()
    /// The status and inspection last said (`Reports`).
    var reports = Reports()

    /// What the driver has counted itself (the world keeps the ground truth).
    public internal(set) var counters = Counters()

    public struct Counters: Equatable, Sendable {
        public var requestsByKind: [String: Int] = [:]
        public var requests: Int { requestsByKind.values.reduce(0, +) }
        public var fullSyncs = 0
        public var targetedSyncs = 0
        public var lightSyncs = 0
        public var skipped = 0
        /// (d): polls the indexer's tip answered with nothing new (no sync ran).
        public var tipSkips = 0
        public var joined = 0
        public var overlappingSyncs = 0
        /// Keepalive pings sent to the node (not backend requests: the node is not the indexer).
        public var keepalivePings = 0
        public var pushStateChanges = 0
        public var errors = 0
    }

    /// The syncs running: the one owner of "a sync runs".
    public internal(set) var runs = SyncRuns()
    var effects = Outbox<Effect>()
    var events = Outbox<TimedEvent>()
    /// Requests in flight, typed, by id; and asks held for the indexer (see `PendingRequests`).
    var pending = PendingRequests()
    /// Messages written and not yet taken by the network, and their publications in flight.
    var sends = SendQueue()
    /// Messages written and not yet taken by the network, oldest first (see `OutgoingMessage`).
    public var outbox: [OutgoingMessage] { sends.messages }
    var contactsByAddress: [Address: Contact] = [:]
    /// What the user has not read, by conversation: the one count (see `UnreadCounts`).
    var unread: UnreadCounts
    /// How often writes that failed are tried again (not in the constants table of docs/spec.md).
    public static let storeRetryInterval = Interval.seconds(5)

    /// The engine of a launch on `storage`, which it reads (through `StoreView`) and never
    /// writes: its writes leave as effects.
    public init(settings: SyncSettings = .default, policy: SyncPolicy = .seed, me: Address, storage: any StoreReading,
                initialMode: NotificationMode = .remotePush, permissionGranted: Bool = true, now: Instant) {
        self.settings = settings
        self.policy = policy
        self.me = me
        self.now = now
        let view = StoreView(storage)
        let saved = view.lastSaved
        let contacts = view.contacts()
        self.storeView = view
        self.machines = SyncMachines(settings: settings, policy: policy, saved: saved, muted: Set(contacts.filter(\.muted).map(\.address)))
        self.pushChannel = PushChannel(mode: saved?.mode ?? initialMode, tokenStatus: saved?.tokenStatus ?? .none,
                                       permissionGranted: permissionGranted)
        self.coverage = Coverage(rejectedItemAttempts: settings.rejectedItemAttempts)
        self.presence = Presence(relaunched: saved != nil)
        for c in contacts { contactsByAddress[c.address] = c }
        self.unread = UnreadCounts(stored: view.unreadCounts())
        for p in view.pendingPushes() {
            pushChannel.pendingArrivals[p.message.txId] = p.arrivedAt
            if !view.isStored(p.message.txId) { pushChannel.pendingUnstored.insert(p.message.txId) }
        }
    }

    // The machines and the push channel as the runner, the screens and the tests read them.
    public var reliability: PushReliability { machines.reliability }
    public var gate: CatchUpGate { machines.gate }
    public var poller: FallbackPoller { machines.poller }
    public var refresh: BackgroundRefresh { machines.refresh }
    public var connection: ConnectionLifecycle { machines.connection }
    public var verifier: PushVerifier { machines.verifier }
    public var watch: PushWatch { machines.watch }
    public var closing: ClosingLook { machines.closing }
    public var notifier: NotificationPresenter { machines.notifier }
    public var mode: NotificationMode { pushChannel.mode }
    public var tokenStatus: TokenStatus { pushChannel.tokenStatus }

    // MARK: - Sans-IO interface

    /// Handles one input at `now` (never earlier than the last one).
    public func handle(_ input: EngineInput, now: Instant) {
        self.now = max(self.now, now)
        switch input {
        case .launched: launch()
        case .rename(let a, let name): rename(a, to: name)
        case .contactsKnown(let list): contactsKnown(list)
        case .send(let to, let text): send(to: to, text: text)
        case .published(let id, let result): published(id: id, result)
        case .retrySends: retrySends(failedOnly: true)
        case .setMuted(let a, let muted): setMuted(a, muted)
        case .setMode(let m): setMode(m)
        case .setPreview(let p): setPreview(p)
        case .syncNow: syncNow()
        case .markRead(let a): markRead(a)
        case .viewing(let a): presence.viewing = a
        case .worldWriteFailed(let error): worldWriteFailed(error)
        case .worldWritesRetried(let error): worldWritesRetried(error)
        case .written(let id, let failure): written(id: id, failure: failure)
        case .becameActive: appDidBecomeActive()
        case .enteredBackground: appDidEnterBackground()
        case .connectionOpened(let id): presence.currentConnection = id
        case .connected(let id): realtimeConnected(connection: id)
        case .connectFailed(let id, let error): realtimeConnectFailed(connection: id, error: error)
        case .disconnected(let id, let error): realtimeDisconnected(connection: id, error: error)
        case .realtimeTx(let id, let message): realtimeNotified(connection: id, message: message)
        case .pingAnswered(let ping): keepaliveAnswered(ping)
        case .pushDelivered(let payload): pushDelivered(payload: payload)
        case .extensionReceived(let payload): notificationExtensionReceived(payload: payload)
        case .pushMessagesDeleted:
            emit(.pushMessagesDeleted)
            trigger(.messagesDeleted, forced: true)
        case .pushPath(let open): pushPathChanged(open: open)
        case .tokenStatus(let status): tokenStatusChanged(status)
        case .permission(let granted): permissionChanged(granted)
        case .refreshGranted(let task): backgroundRefreshGranted(task: task)
        case .refreshExpired(let task): backgroundRefreshExpired(task: task)
        case .indexerReplied(let id, let result): indexerReplied(id: id, result: result)
        case .utxoSetReplied(let id, let result): utxoReplied(requestId: id, result: result)
        case .deadline: deadlineFired()
        case .inspect(let on): inspect(on)
        }
        // Every input ends here, whatever it did: what changed is persisted, and a new status
        // or inspection is said once, here, not by each place that changes something.
        settle()
    }

    /// The next thing to do, oldest first; nil when there is nothing.
    public func pollEffect() -> Effect? { effects.next() }

    /// The next event, oldest first; nil when there is none.
    public func pollEvent() -> TimedEvent? { events.next() }

    /// When the engine next needs `.deadline`; nil when nothing is due. A spurious
    /// `.deadline` does nothing.
    public var nextDeadline: Instant? { EngineTimer.allCases.compactMap(deadline).min() }

    func request() -> Int { pending.newRequestId() }

}

/// What the engine hands out, first in, first out; read without copying, emptied once read.
struct Outbox<Element> {
    var items: [Element] = []
    var read = 0

    mutating func append(_ item: Element) { items.append(item) }

    mutating func next() -> Element? {
        guard read < items.count else {
            items.removeAll(keepingCapacity: true)
            read = 0
            return nil
        }
        defer { read += 1 }
        return items[read]
    }
}
