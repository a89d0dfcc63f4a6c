import Foundation
import SyncCore

/// The sync engine, sans-IO (quinn-proto's `Connection`): it contains no networking code and
/// gets no timestamps from the operating system. Everything that happens reaches it as an
/// `EngineInput` with `now` (`handle(_:now:)`); what it wants done leaves it as an `Effect`
/// (`pollEffect()`): an indexer call, a connection to open, a token to register, a refresh to
/// ask the OS for. Replies come back as inputs. Its one timer is `nextDeadline`; at that
/// instant the runner hands it `.deadline`. Every decision is a `SyncEvent` (`pollEvent()`).
///
/// The store is read directly (a local lookup: has this txId, where is this cursor), and
/// written through effects (`.write`): the messages and the cursor that covers them as one
/// write (rule 9), the learned state, contacts, read marks, pending pushes. Until a write
/// answers, and when it fails (a full disk), what it carried is kept in memory
/// (`UnsavedChanges`), so that reads see it and nothing is lost.
///
/// `SyncDriver` is the runner that performs the effects against the world's ports.
public final class Engine {
    public let settings: SyncSettings
    public let policy: SyncPolicy
    public let me: Address
    public let storage: ChatStorage
    /// The instant of the input being handled.
    public internal(set) var now: Instant

    public internal(set) var reliability: PushReliability
    public internal(set) var gate: CatchUpGate
    public internal(set) var poller: FallbackPoller
    public internal(set) var refresh: BackgroundRefresh
    public internal(set) var connection: ConnectionLifecycle
    /// (e): checks the indexer's tip while realtime cannot verify push.
    public internal(set) var verifier: PushVerifier
    /// (f), (g): push's pace and record, which say when looking is worth a request.
    public internal(set) var watch: PushWatch
    /// (h): the look owed to a realtime outage push was trusted to cover.
    public internal(set) var closing = ClosingLook()
    public internal(set) var notifier: NotificationPresenter
    public internal(set) var mode: NotificationMode
    public internal(set) var tokenStatus: TokenStatus = .none

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
    /// The conversation on screen (`EngineInput.viewing`).
    var viewing: Address?
    /// (e): the newest block time the app has of each sync object, from any channel (a
    /// cursor moves only with fetches; push and realtime bring messages past it).
    var newestSeen: [SyncObject: Instant] = [:]
    /// The sync a background refresh is running (light, or naive's full one).
    var refreshRunId: Int?
    var currentConnection: Int?
    /// (g): a reconnect joined a sync whose requests went out before its gap began: once that
    /// sync ends, the reconnect's trigger is asked again, for the gap it did not cover.
    var reconnectAfterRun: CatchUpTrigger?
    var currentRefreshTask: Int?
    var reregisterWhenActive = false
    /// The app is coming to the foreground, its recovery (rules 10–11) not begun yet: what the
    /// pending pushes show is judged now, and (g) owes rule 4's catch-up to that recovery.
    var resuming = false
    var effects = Outbox<Effect>()
    var events = Outbox<TimedEvent>()
    /// The last id a request was given (its reply carries it).
    var nextRequestId = 0
    /// Requests in flight, typed, by id; and asks held for the indexer (see `PendingRequests`).
    var pending = PendingRequests()
    /// Messages written and not yet taken by the network, and their publications in flight.
    var sends = SendQueue()
    /// Messages written and not yet taken by the network, oldest first (see `OutgoingMessage`).
    public var outbox: [OutgoingMessage] { sends.messages }
    /// The outbox could not be written: written again with the rest of a store retry.
    var outboxUnsaved = false
    /// Whether the OS lets the app show notifications (rule 1).
    var permissionGranted: Bool
    var contactsByAddress: [Address: Contact] = [:]
    /// What the user has not read, by conversation: the one count (see `UnreadCounts`).
    var unread: UnreadCounts
    /// The store held what an earlier run of the app learned: this launch is a relaunch.
    let relaunched: Bool
    /// The pushes waiting in the extension's store (rule 12), with their arrival times, and
    /// those of them not stored as messages yet: kept here so that the badge and banners
    /// stay O(1).
    var pendingArrivals: [String: Instant] = [:]
    var pendingUnstored: Set<String> = []
    /// (b): outputs the user's sends spent whose messages the store lacks. The UTXO set no
    /// longer shows them, so a proven gap is the UTXO set's unknown txIds plus these.
    var spentUnstored: Set<String> = []
    /// (b): the app has every incoming output that landed before this instant (a complete
    /// full sync, or a complete proof, established it), so a proof asks the node only for
    /// the outputs since then, less the reorg buffer: the reply grows with what is new, not
    /// with the address's history. Nil until the first complete full sync of this launch.
    var provenThrough: Instant?
    /// (b): when the UTXO set of each targeted run was asked for.
    var utxoAskedAt: [Int: Instant] = [:]
    /// (f): when the refresh's look asked the tips, and the refresh sync that fetches every
    /// object they showed moved: completed, everything indexed before the look is stored.
    var lookAskedAt: Instant?
    /// (g): the window the look out ((e)'s push check or (f)'s refresh look) counts messages in
    /// (`IndexerCall.tipCounting`); nil when it asked the plain tips.
    var lookCounts: (after: Instant, through: Instant)?
    /// (g): per object, how many messages short the app stays of the counts after a fetch covered
    /// the window that begins at `after` (`countedShort`).
    var unfillable: (after: Instant?, short: [SyncObject: Int]) = (nil, [:])
    /// (g): per object, up to when its last complete fetch asked (what was indexed by then): a
    /// cursor moves only with a message, this also with an empty reply.
    var fetchedThrough: [SyncObject: Instant] = [:]
    var refreshCovers: (runId: Int, through: Instant)?
    /// Reply items the indexer keeps serving broken (see `RejectedItems`).
    var rejectedItems: RejectedItems
    /// What the store could not write yet (see `UnsavedChanges`), and when it is tried again.
    var unsaved = UnsavedChanges()
    var storeRetryAt: Instant?
    var keptBeforeRecovery = 0
    /// The store's writes in flight, the cursors and state they carry, a retry's batch.
    var writes: StoreWrites
    /// The last status sent.
    var lastStatus: EngineStatus?
    /// Someone looks at the inspector: `.inspection` events are sent (see `EngineInspection`).
    var inspecting = false
    var lastInspection: EngineInspection?
    /// The earliest instant of the refresh asked of the OS, while one is asked.
    var refreshEarliest: Instant?
    /// How often writes that failed are tried again (not in the constants table of docs/spec.md).
    public static let storeRetryInterval = Interval.seconds(5)

    public init(settings: SyncSettings = .default, policy: SyncPolicy = .seed, me: Address, storage: ChatStorage,
                initialMode: NotificationMode = .remotePush, permissionGranted: Bool = true, now: Instant) {
        self.settings = settings
        self.policy = policy
        self.me = me
        self.storage = storage
        self.now = now
        self.permissionGranted = permissionGranted
        self.rejectedItems = RejectedItems(attempts: settings.rejectedItemAttempts)
        let saved = storage.loadState()
        self.reliability = PushReliability(settings: settings, policy: policy, restoring: saved?.reliability ?? .init(),
                                           muted: Set(storage.contacts().filter(\.muted).map(\.address)))
        self.gate = CatchUpGate(settings: settings, policy: policy, restoring: saved?.gate ?? .init())
        self.poller = FallbackPoller(settings: settings, policy: policy)
        self.refresh = BackgroundRefresh(settings: settings, policy: policy)
        self.connection = ConnectionLifecycle(settings: settings, policy: policy)
        self.verifier = PushVerifier(policy: policy)
        self.watch = PushWatch(policy: policy)
        self.closing.delay = verifier.overdueAfter
        self.notifier = NotificationPresenter(settings: settings, preview: saved?.preview ?? .message)
        self.mode = saved?.mode ?? initialMode
        self.tokenStatus = saved?.tokenStatus ?? .none
        self.writes = StoreWrites(lastSaved: saved)
        self.relaunched = saved != nil
        for c in storage.contacts() { contactsByAddress[c.address] = c }
        self.unread = UnreadCounts(stored: storage.unreadCounts())
        for p in storage.pendingPushes() {
            pendingArrivals[p.message.txId] = p.arrivedAt
            if !storage.hasMessage(txId: p.message.txId) { pendingUnstored.insert(p.message.txId) }
        }
    }

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
        case .viewing(let a): viewing = a
        case .worldWriteFailed(let error): worldWriteFailed(error)
        case .worldWritesRetried(let error): worldWritesRetried(error)
        case .written(let id, let failure): written(id: id, failure: failure)
        case .becameActive: appDidBecomeActive()
        case .enteredBackground: appDidEnterBackground()
        case .connectionOpened(let id): currentConnection = id
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

    func request() -> Int {
        nextRequestId += 1
        return nextRequestId
    }

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
