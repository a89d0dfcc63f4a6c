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
    public private(set) var now: Instant

    public private(set) var reliability: PushReliability
    public private(set) var gate: CatchUpGate
    public private(set) var poller: FallbackPoller
    public private(set) var refresh: BackgroundRefresh
    public private(set) var connection: ConnectionLifecycle
    /// (e): checks the indexer's tip while realtime cannot verify push.
    public private(set) var verifier: PushVerifier
    public private(set) var notifier: NotificationPresenter
    public private(set) var mode: NotificationMode
    public private(set) var tokenStatus: TokenStatus = .none

    /// What the driver has counted itself (the world keeps the ground truth).
    public private(set) var counters = Counters()

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

    private struct SyncRun {
        var id: Int
        var kind: CatchUpGate.SyncKind
        var trigger: String
        var forced = false
        var startedAt: Instant
        var outstanding = 0
        var stored = 0
        var requests = 0
        var failed = 0
        /// Triggers that joined it (rule 8), for an inspector.
        var joined: [String] = []
    }

    private var runs: [Int: SyncRun] = [:]
    private var nextRunId = 0
    /// The conversation on screen (`EngineInput.viewing`).
    private var viewing: Address?
    /// (d), (e): the tip request out, if any, and whether it is (e)'s.
    private var tipRequest: Int?
    private var tipVerifiesPush = false
    /// (e): since when realtime has not been live in this foreground; nil while live, and in
    /// the background.
    private var notLiveSince: Instant?
    /// (e): the newest block time the app has of each sync object, from any channel (a
    /// cursor moves only with fetches; push and realtime bring messages past it).
    private var newestSeen: [SyncObject: Instant] = [:]
    /// The sync a background refresh is running (light, or naive's full one).
    private var refreshRunId: Int?
    private var currentConnection: Int?
    /// When the current subscription went live; nil while it is not.
    private var liveSince: Instant?
    private var currentRefreshTask: Int?
    private var reregisterWhenActive = false
    private var effects = Outbox<Effect>()
    private var events = Outbox<TimedEvent>()
    /// Requests in flight, by the id their reply will carry.
    private var nextRequestId = 0
    private var indexerRequests: [Int: (object: SyncObject?, call: IndexerCall, since: Instant, page: Int, runId: Int, requestedAt: Instant)] = [:]
    private var utxoRequests: [Int: Int] = [:]
    /// Publications in flight: request id → the outbox entry's local id.
    private var publishRequests: [Int: String] = [:]
    /// Messages written and not yet taken by the network, oldest first (see `OutgoingMessage`).
    public private(set) var outbox: [OutgoingMessage] = []
    private var nextLocalId = 0
    /// The outbox could not be written: written again with the rest of a store retry.
    private var outboxUnsaved = false
    /// Catch-ups waiting for the indexer to catch up with a young subscription, by when.
    private var waitingForIndexer: [(at: Instant, runId: Int, ask: () -> Void)] = []
    /// Whether the OS lets the app show notifications (rule 1).
    private var permissionGranted: Bool
    private var contactsByAddress: [Address: Contact] = [:]
    private var lastSaved: PersistedEngineState?
    /// The store held what an earlier run of the app learned: this launch is a relaunch.
    private let relaunched: Bool
    /// The pushes waiting in the extension's store (rule 12), with their arrival times, and
    /// those of them not stored as messages yet: kept here so that the badge and banners
    /// stay O(1).
    private var pendingArrivals: [String: Instant] = [:]
    private var pendingUnstored: Set<String> = []
    /// (b): outputs the user's sends spent whose messages the store lacks. The UTXO set no
    /// longer shows them, so a proven gap is the UTXO set's unknown txIds plus these.
    private var spentUnstored: Set<String> = []
    /// (b): the app has every incoming output that landed before this instant (a complete
    /// full sync, or a complete proof, established it), so a proof asks the node only for
    /// the outputs since then, less the reorg buffer: the reply grows with what is new, not
    /// with the address's history. Nil until the first complete full sync of this launch.
    private var provenThrough: Instant?
    /// (b): when the UTXO set of each targeted run was asked for.
    private var utxoAskedAt: [Int: Instant] = [:]
    /// Reply items the indexer keeps serving broken (see `RejectedItems`).
    private var rejectedItems: RejectedItems
    /// What the store could not write yet (see `UnsavedChanges`), and when it is tried again.
    private var unsaved = UnsavedChanges()
    private var storeRetryAt: Instant?
    private var keptBeforeRecovery = 0
    /// Writes in flight, by id, with what each needs when it answers.
    private var writes: [Int: (write: StoreWrite, runId: Int?)] = [:]
    /// Cursor moves written and not answered yet: reads see them (rule 9's reads).
    private var cursorsInFlight: [SyncObject: SyncCursor] = [:]
    /// The learned state written and not answered yet.
    private var stateInFlight: PersistedEngineState?
    /// The writes of a retry; the trouble ends when all of them, and the world's, land.
    private var retryBatch: Set<Int>?
    /// The last status sent.
    private var lastStatus: EngineStatus?
    /// Someone looks at the inspector: `.inspection` events are sent (see `EngineInspection`).
    private var inspecting = false
    private var lastInspection: EngineInspection?
    /// The earliest instant of the refresh asked of the OS, while one is asked.
    private var refreshEarliest: Instant?
    /// How often writes that failed are tried again (not in the §3 table).
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
        self.notifier = NotificationPresenter(settings: settings, preview: saved?.preview ?? .message)
        self.mode = saved?.mode ?? initialMode
        self.tokenStatus = saved?.tokenStatus ?? .none
        self.lastSaved = saved
        self.relaunched = saved != nil
        for c in storage.contacts() { contactsByAddress[c.address] = c }
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
        case .worldChanged(let description): emit(.world(description))
        case .upsertContact(let c): upsertContact(c)
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
            settle()
        case .tokenStatus(let status): tokenStatusChanged(status)
        case .permission(let granted): permissionChanged(granted)
        case .refreshGranted(let task): backgroundRefreshGranted(task: task)
        case .refreshExpired(let task): backgroundRefreshExpired(task: task)
        case .indexerReplied(let id, let result): indexerReplied(id: id, result: result)
        case .utxoSetReplied(let id, let result): utxoReplied(requestId: id, result: result)
        case .deadline: deadlineFired()
        case .inspect(let on): inspect(on)
        }
    }

    /// The next thing to do, oldest first; nil when there is nothing.
    public func pollEffect() -> Effect? { effects.next() }

    /// The next event, oldest first; nil when there is none.
    public func pollEvent() -> TimedEvent? { events.next() }

    /// When the engine next needs `.deadline`; nil when nothing is due. A spurious
    /// `.deadline` does nothing.
    public var nextDeadline: Instant? {
        var deadlines: [Instant] = []
        // While backgrounded the app is suspended: grace timers wait for the foreground, where
        // pending pushes are processed first (rule 12).
        if let d = reliability.nextDeadline { deadlines.append(d) }
        if let d = poller.nextDeadline { deadlines.append(d) }
        if let d = refresh.nextDeadline { deadlines.append(d) }
        if let d = connection.nextDeadline { deadlines.append(d) }
        if let d = verifier.nextDeadline { deadlines.append(d) }
        if let d = gate.nextDeadline { deadlines.append(d) }
        for m in outbox { if case .failed(_, let at) = m.state { deadlines.append(at) } }
        if let d = storeRetryAt { deadlines.append(d) }
        if let d = waitingForIndexer.first?.at { deadlines.append(d) }
        return deadlines.min()
    }

    private func request() -> Int {
        nextRequestId += 1
        return nextRequestId
    }

    // MARK: - Inputs

    /// Cold start of the app process: restore what was learned, register for push if needed.
    /// The OS then makes the app active (`appDidBecomeActive`).
    private func launch() {
        emit(.launched(messages: storage.messageCount(), pushState: reliability.state, mode: mode))
        if relaunched, let debt = gate.owed { emit(.catchUpOwed(kind: debt.kind, forced: debt.forced)) }
        // Messages written before the last quit (or crash) that the network never took go now.
        outbox = storage.outbox()
        retrySends(failedOnly: false)
        conditionsChanged()
        if mode == .remotePush {
            registerToken(reason: tokenStatus == .active ? "launch: refreshing the active token" : "launch: registering for remote push")
        } else if tokenStatus != .none {
            unregisterToken(reason: "launch: mode \(mode.rawValue)")
        }
        settle()
    }

    public var contacts: [Contact] { contactsByAddress.values.sorted { $0.address < $1.address } }

    public func contact(_ address: Address) -> Contact? { contactsByAddress[address] }

    /// Adds or renames a contact (a conversation).
    private func upsertContact(_ contact: Contact) {
        contactsByAddress[contact.address] = contact
        emit(.contact(contact))
        write(.contact(contact))
        settle()
    }

    /// The user writes to a contact: publish, store as sent. A body over
    /// `MessageLimits.maxBodyBytes` is not sent (the compose line and the scenario parser
    /// stop it first; this is the last word): an error event, and nil.
    private func send(to contact: Address, text: String) {
        guard text.utf8.count <= MessageLimits.maxBodyBytes else {
            emit(.error(source: "send", message: "a message of \(text.utf8.count) bytes is over the limit of \(MessageLimits.maxBodyBytes); not sent"))
            return settle()
        }
        nextLocalId += 1
        let m = OutgoingMessage(localId: "local-\(now.milliseconds)-\(nextLocalId)", to: contact, body: text, createdAt: now)
        outbox.append(m)
        writeOutbox()
        publish(m)
        settle()
    }

    /// Hands an outbox entry to the network (again).
    private func publish(_ m: OutgoingMessage) {
        guard let i = outbox.firstIndex(where: { $0.localId == m.localId }) else { return }
        outbox[i].state = .sending
        emit(.outgoing(outbox[i]))
        let id = request()
        publishRequests[id] = m.localId
        effects.append(.publish(id: id, to: m.to, body: m.body))
    }

    /// Tries the outbox again now: the failed entries ("retry now"), or all of it (a launch).
    private func retrySends(failedOnly: Bool) {
        for m in outbox {
            if case .sending = m.state, failedOnly || publishRequests.values.contains(m.localId) { continue }
            publish(m)
        }
        settle()
    }

    private func writeOutbox() { write(.outbox(outbox)) }

    /// The network took the message (the reply to `.publish`): store it as sent. Or it
    /// could not: the message stays in the outbox, failed, and is tried again after a wait.
    private func published(id: Int, _ result: Result<Publication, TransportError>) {
        guard let localId = publishRequests.removeValue(forKey: id), let i = outbox.firstIndex(where: { $0.localId == localId }) else {
            return settle()
        }
        let publication: Publication
        switch result {
        case .success(let p):
            publication = p
        case .failure(let error):
            outbox[i].failures += 1
            let wait = OutgoingMessage.retryDelay(afterFailures: outbox[i].failures)
            outbox[i].state = .failed(reason: error.message, retryAt: now + wait)
            let to = contactsByAddress[outbox[i].to]?.handle ?? outbox[i].to.value
            emit(.sendFailed(to: to, reason: error.message, retryIn: wait, failures: outbox[i].failures))
            emit(.outgoing(outbox[i]))
            writeOutbox()
            return settle()
        }
        var done = outbox.remove(at: i)
        done.state = .sent(txId: publication.message.txId)
        writeOutbox()
        let message = publication.message
        let contact = message.conversation
        emit(.messageSent(txId: message.txId, to: contactsByAddress[contact]?.handle ?? contact.value))
        store(message, via: .sent, receivedAt: now)
        emit(.outgoing(done))
        // (b): an output this send spent leaves the UTXO set, so the set can no longer reveal
        // its message; if the store lacks it, the next proven gap fetches it by id.
        for id in publication.spent where !has(id) { spentUnstored.insert(id) }
        settle()
    }

    /// Mutes or unmutes a contact: no push for it, and it never counts as push evidence.
    private func setMuted(_ contact: Address, _ muted: Bool) {
        guard var c = contactsByAddress[contact] else { return }
        c.muted = muted
        upsertContact(c)
        effects.append(.setMuted(contact, muted))
        reliability.contactMuteChanged(contact, muted: muted, now: now)
        emit(.world("\(muted ? "muted" : "unmuted") \(c.handle)"))
        settle()
    }

    /// Rule 15: switch notification mode; rule 1 re-evaluates push.
    private func setMode(_ newMode: NotificationMode) {
        guard newMode != mode else { return }
        let left = mode == .remotePush
        mode = newMode
        emit(.world("notification mode \(newMode.rawValue)"))
        conditionsChanged()
        handle(refresh.conditionsChanged(mode: mode, pushState: reliability.state, now: now))  // rule 14
        if newMode == .remotePush, tokenStatus != .active {
            registerToken(reason: "mode remote-push: registering for remote push")
        } else if left {
            // Leaving remote push stops pushes, as a real client does: no banners in background-fetch or off.
            unregisterToken(reason: "mode \(newMode.rawValue): no more pushes")
        }
        updatePoller()
        settle()
    }

    /// Rule 15: what banners show (name and text, name only, or nothing).
    private func setPreview(_ preview: PreviewMode) {
        guard preview != notifier.preview else { return }
        notifier.preview = preview
        emit(.world("notification preview \(preview.rawValue)"))
        settle()
    }

    /// The user asks for a sync now (`S`): forced, it ignores the debounce (rule 6) but still
    /// joins a running sync (rule 8).
    private func syncNow() {
        trigger(.manual, forced: true)
        settle()
    }

    private func markRead(_ conversation: Address) {
        write(.markRead(conversation))
        settle()
    }

    /// A message the app has: stored, or kept in memory while the store cannot write.
    public func message(txId: String) -> StoredMessage? {
        unsaved.message(txId: txId) ?? storage.message(txId: txId)
    }

    /// Why the store cannot write (`disk full`), for a status bar; nil while writes land.
    public var storeTrouble: String? { unsaved.trouble }
    /// Changes kept in memory until the store can write them.
    public var unsavedChanges: Int { unsaved.count }

    /// A write of the profile's world failed (it shares the store's disk): the same trouble.
    private func worldWriteFailed(_ error: Error) {
        storeFailed(error)
        settle()
    }

    /// The reply to `.retryWorldWrites`: nil when everything the world kept is written.
    private func worldWritesRetried(_ error: Error?) {
        if let error {
            storeFailed(error)
        } else if unsaved.trouble != nil, storeRetryAt == nil, unsaved.count == 0, unsaved.recovered() {
            emit(.storeTrouble(nil, unsaved: keptBeforeRecovery, retryEvery: Self.storeRetryInterval))
        }
        settle()
    }

    /// The OS's notification permission changed (rule 1).
    private func permissionChanged(_ granted: Bool) {
        permissionGranted = granted
        conditionsChanged()
        settle()
    }

    private func keepaliveAnswered(_ ping: Int) {
        handle(connection.keepaliveAnswered(ping: ping, now: now))
        settle()
    }


    // MARK: - ClientEndpoint: what the world tells the app

    private func appDidBecomeActive() {
        let first = connection.lifecycle == .launched
        let detail = first ? (relaunched ? "relaunch: a cold start of a saved profile" : "first launch")
            : connection.backgroundSince.map { "after \(now - $0) in background" } ?? ""
        emit(.lifecycle(.foreground, detail: detail))
        handle(refresh.enteredForeground(now: now))
        processPendingPushes()  // rule 12, before the grace timers that ran out while suspended
        reliability.appResumed()
        handle(reliability.deadlineReached(now: now))
        if reregisterWhenActive, mode == .remotePush {
            reregisterWhenActive = false
            registerToken(reason: "app active: token \(tokenStatus.rawValue), registering again")
        }
        handle(connection.becameActive(now: now))
        updatePoller()
        settle()
    }

    private func appDidEnterBackground() {
        emit(.lifecycle(.background, detail: "app suspended; realtime can no longer be trusted"))
        handle(connection.enteredBackground(now: now))
        notLiveSince = nil
        reliability.appSuspended()
        gate.enteredBackground()
        updatePoller()
        handle(refresh.enteredBackground(mode: mode, pushState: reliability.state, now: now))
        settle()
    }

    private func realtimeConnected(connection id: Int) {
        guard id == currentConnection else { return }  // a superseded connect attempt
        handle(connection.connected(now: now))
        settle()
    }

    private func realtimeConnectFailed(connection id: Int, error: String) {
        guard id == currentConnection else { return }
        handle(connection.connectFailed(now: now, error: error))
        settle()
    }

    private func realtimeDisconnected(connection id: Int, error: String) {
        guard id == currentConnection else { return }
        handle(connection.disconnected(now: now, error: error))
        settle()
    }

    private func realtimeNotified(connection id: Int, message: NetworkMessage) {
        guard id == currentConnection else { return }
        store(message, via: .realtime, receivedAt: now)
        if message.direction == .incoming {
            // Rule 2: only incoming messages push could have carried are evidence (the machine judges).
            handle(reliability.realtimeTxSeen(txId: message.txId, from: message.conversation, landedAt: message.blockTime, now: now))
        }
        settle()
    }

    private func pushDelivered(payload: Data) {
        guard let message = decodePush(payload, source: "push") else { return settle() }
        store(message, via: .push, receivedAt: now)
        handle(reliability.pushReceived(txId: message.txId, arrivedAt: now, now: now))
        settle()
    }

    private func notificationExtensionReceived(payload: Data) {
        guard let message = decodePush(payload, source: "notification extension") else { return settle() }
        let push = PendingPush(message: message, arrivedAt: now)
        pendingArrivals[message.txId] = now
        if !has(message.txId) { pendingUnstored.insert(message.txId) }
        if unsaved.trouble != nil {
            unsaved.keep(push)  // in order, behind a removal that may still be owed
        } else {
            write(.appendPendingPush(push))
        }
        notify(message)
        settle()
    }

    /// A malformed payload is an error event and nothing else: the message it was meant to
    /// carry still arrives by realtime or the next catch-up.
    private func decodePush(_ payload: Data, source: String) -> NetworkMessage? {
        do {
            return try PushPayload.decode(payload, me: me, now: now)
        } catch {
            emit(.error(source: source, message: "\(error); ignored, the message will come by another channel"))
            return nil
        }
    }

    private func tokenStatusChanged(_ status: TokenStatus) {
        guard status != tokenStatus else { return }
        tokenStatus = status
        emit(.tokenStatus(status))
        if status == .expired || status == .invalid {
            reregisterWhenActive = true
            emit(.tokenRegistration("token \(status.rawValue): will register again when the app is next active"))
        }
        conditionsChanged()
        settle()
    }

    private func backgroundRefreshGranted(task: Int) {
        currentRefreshTask = task
        emit(.backgroundRefresh("granted by the OS"))
        handle(refresh.refreshGranted(mode: mode, pushState: reliability.state, now: now))
        settle()
    }

    private func backgroundRefreshExpired(task: Int) {
        guard task == currentRefreshTask else { return }
        currentRefreshTask = nil
        handle(refresh.refreshExpired(now: now))
        settle()
    }

    // MARK: - Machine actions

    private func handle(_ actions: [PushReliability.Action]) {
        for action in actions {
            switch action {
            case .stateChanged(let from, let to, let reason):
                counters.pushStateChanges += 1
                emit(.pushState(from: from, to: to, reason: reason))
                handle(refresh.conditionsChanged(mode: mode, pushState: to, now: now))  // rule 14
                updatePoller()  // (e): rule 13 in remote-push while push is unreliable, and (e)'s checks
            case .observedHit(let txId, let offset, let via):
                emit(.observationHit(txId: txId, pushOffset: offset, via: via))
            case .observedMiss(let txId, let misses, let via):
                emit(.observationMiss(txId: txId, consecutiveMisses: misses, threshold: settings.missesToUnreliable, via: via))
            case .startForcedCatchUp:
                trigger(.pushUnreliable, forced: true)
            case .reregisterToken:
                registerToken(reason: "re-register: push unreliable")
            case .reregisterSkipped(let ago, let left):
                emit(.tokenRegistration("re-register skipped: last one \(ago) ago, next allowed in \(left)"))
            }
        }
    }

    private func handle(_ actions: [ConnectionLifecycle.Action]) {
        for action in actions {
            switch action {
            case .connect(let forced, let reason):
                emit(.realtime(.connecting, reason: (forced ? "forced reconnect, " : "") + reason))
                liveSince = nil
                if connection.lifecycle == .foreground, notLiveSince == nil { notLiveSince = now }
                currentConnection = nil  // its id comes back with `.connectionOpened`
                effects.append(.connect(forced: forced))
            case .requestCatchUp(let triggers, _):
                for t in triggers { trigger(t, forced: false) }
            case .realtimeChanged(let state, let reason):
                liveSince = state == .live ? now : nil
                if state == .live {
                    notLiveSince = nil
                } else if connection.lifecycle == .foreground, notLiveSince == nil {
                    notLiveSince = now
                }
                emit(.realtime(state, reason: reason))
            case .ping(let id):
                counters.keepalivePings += 1
                // Without a connection there is nothing to answer: the ping times out.
                guard let current = currentConnection else { break }
                effects.append(.ping(connection: current, ping: id))
            }
        }
        if actions.contains(where: { if case .ping = $0 { false } else { true } }) { updatePoller() }
    }

    private func handle(_ actions: [FallbackPoller.Action]) {
        for action in actions {
            switch action {
            case .started(let first, let reason):
                emit(.polling("started (\(reason)), first poll at \(first)"))
            case .stopped(let reason):
                emit(.polling("stopped: \(reason)"))
            case .scheduled(let at):
                emit(.polling("next poll at \(at), \(settings.pollDelay) after the last sync completed"))
            case .poll:
                poll()
            }
        }
    }

    /// Rule 13's poll; with (d), while push is not reliable and a full sync is not due, the
    /// indexer's tips first (one request): a sync only of the objects whose tip moved past
    /// their cursors.
    private func poll() {
        guard policy.checkTipBeforePoll, reliability.state != .reliable, tipRequest == nil, runs.isEmpty, gate.owed?.kind != .full,
              let lastFull = gate.lastFullSyncAt, now - lastFull < policy.fullSyncMaxAge else {
            return trigger(.poll, forced: false)
        }
        counters.requestsByKind[IndexerCall.tip.kind, default: 0] += 1
        let id = request()
        tipRequest = id
        poller.syncStarted(now: now)
        effects.append(.indexer(id: id, .tip))
        emit(.tipAsked(objects: fullSyncObjects().count))
    }

    private func tipReplied(result: Result<Data, TransportError>) {
        tipRequest = nil
        if tipVerifiesPush {
            tipVerifiesPush = false
            return pushCheckReplied(result: result)
        }
        guard poller.active else { return settle() }
        let tips: IndexerTips
        switch result {
        case .failure(let error):
            emit(.error(source: "indexer", message: "tip: \(error); polling with a sync"))
            return trigger(.poll, forced: false)
        case .success(let data):
            do { tips = try IndexerTips.read(data, now: now) } catch {
                emit(.error(source: "indexer", message: "tip: \(error); polling with a sync"))
                return trigger(.poll, forced: false)
            }
        }
        // Rule 9's cursor: every message of an object up to it is stored, so an object whose
        // newest indexed message is not past it has nothing new.
        let moved = fullSyncObjects().filter { object in
            guard let tip = tips.tip(of: object) else { return false }
            guard let cursor = cursor(of: object).lastFetchedBlockTime else { return true }
            return tip > cursor
        }
        emit(.tipsAnswered(latest: tips.latest, moved: moved.map(\.description), of: fullSyncObjects().count))
        if moved.isEmpty {
            counters.tipSkips += 1
            handle(poller.syncCompleted(now: now))
            settle()
        } else {
            trigger(.poll, forced: false, tipObjects: moved)
        }
    }

    /// (e): the tips against what the app has of each object (its cursor, or the newest
    /// message any channel brought): what moved is what push and realtime have not brought.
    private func pushCheckReplied(result: Result<Data, TransportError>) {
        guard verifier.active else { return settle() }
        let tips: IndexerTips
        do {
            tips = try IndexerTips.read(result.get(), now: now)
        } catch {
            emit(.error(source: "indexer", message: "tip: \(error); push check again in \(verifier.verifyInterval)"))
            return settle()
        }
        let objects = fullSyncObjects()
        let moved = objects.filter { object in
            guard let tip = tips.tip(of: object) else { return false }
            let have = [cursor(of: object).lastFetchedBlockTime, newestSeen[object]].compactMap { $0 }.max()
            return have.map { tip > $0 } ?? true
        }
        emit(.pushCheckAnswered(latest: tips.latest, moved: moved.map(\.description), of: objects.count))
        if !moved.isEmpty { trigger(.pushCheck, forced: false, tipObjects: moved) }
        settle()
    }

    private func handle(_ actions: [BackgroundRefresh.Action]) {
        for action in actions {
            switch action {
            case .request(let earliest, let reason):
                refreshEarliest = earliest
                effects.append(.requestBackgroundRefresh(earliest: earliest))
                emit(.backgroundRefresh("requested, earliest \(earliest) (\(reason))"))
            case .cancelRequest(let reason):
                refreshEarliest = nil
                effects.append(.cancelBackgroundRefresh)
                emit(.backgroundRefresh("request withdrawn: \(reason)"))
            case .runLightSync, .runFullSync:
                switch gate.lightSyncRequested(now: now) {
                case .start:
                    var conversations = 0
                    if case .runLightSync(let n, _) = action { conversations = n }
                    let kind: CatchUpGate.SyncKind = action == .runFullSync ? .full : .light
                    refreshRunId = startSync(kind: kind, trigger: "background-refresh", forced: false, conversations: conversations)
                case .busy(let running):
                    emit(.backgroundRefresh("skipped: a \(running.kind.rawValue) sync (\(running.trigger)) is running"))
                    handle(refresh.grantUnused(mode: mode, pushState: reliability.state, now: now))
                }
            case .skip(let reason):
                emit(.backgroundRefresh("skipped: \(reason)"))
            case .stopLightSync(let reason):
                if let id = refreshRunId { finish(runId: id, stoppedBy: reason) }
            }
        }
    }

    /// `tipObjects`: (d)'s objects whose tip moved, which a targeted sync fetches alone.
    private func trigger(_ trigger: CatchUpTrigger, forced: Bool, tipObjects: [SyncObject]? = nil) {
        switch gate.triggered(trigger, forced: forced, pushState: reliability.state, now: now,
                              foreground: connection.lifecycle == .foreground, realtimeLive: connection.realtime == .live,
                              tipsProved: tipObjects != nil) {
        case .start(let t, let forced):
            if gate.running?.kind == .targeted, let tipObjects {
                startSync(kind: .targeted, trigger: t.rawValue, forced: forced, objects: tipObjects)
            } else if gate.running?.kind == .targeted {
                startTargeted(trigger: t.rawValue)
            } else {
                startSync(kind: .full, trigger: t.rawValue, forced: forced)
            }
        case .join(let t, let running):
            counters.joined += 1
            if let id = runs.first(where: { $0.key != refreshRunId && $0.value.startedAt == running.startedAt && $0.value.trigger == running.trigger })?.key {
                runs[id]?.joined.append(t.rawValue)
            }
            emit(.catchUpJoined(trigger: t, running: "\(running.kind.rawValue) \(running.trigger)"))
        case .skip(let t, let ago, let left):
            counters.skipped += 1
            emit(.catchUpSkipped(trigger: t, lastAgo: ago, nextAllowedIn: left))
        }
    }

    // MARK: - Syncs (rule 9)

    @discardableResult
    /// `conversations`: how many a light sync covers (rule 14, from `BackgroundRefresh`).
    /// `objects`: what a targeted sync of (d) fetches.
    private func startSync(kind: CatchUpGate.SyncKind, trigger: String, forced: Bool, conversations: Int = 0,
                           objects given: [SyncObject]? = nil) -> Int {
        nextRunId += 1
        let id = nextRunId
        if !runs.isEmpty { counters.overlappingSyncs += 1 }
        let objects = given ?? (kind == .full ? fullSyncObjects() : lightSyncObjects(conversations))
        runs[id] = SyncRun(id: id, kind: kind, trigger: trigger, forced: forced, startedAt: now)
        switch kind {
        case .full: counters.fullSyncs += 1
        case .light: counters.lightSyncs += 1
        case .targeted: counters.targetedSyncs += 1
        }
        poller.syncStarted(now: now)
        emit(.catchUpStarted(trigger: trigger, kind: kind, forced: forced, objects: objects.count))
        fetchAll(objects, runId: id)
        if objects.isEmpty { finish(runId: id, stoppedBy: nil) }
        return id
    }

    private func fetchAll(_ objects: [SyncObject], runId: Int) {
        guard !objects.isEmpty else { return }
        afterIndexerLag(runId: runId) { [self] in
            for object in objects {
                let since = cursor(of: object).requestStart(now: now, rewind: settings.reorgRewind)
                fetch(object, since: since, page: 0, runId: runId)
            }
        }
    }

    /// A message that landed just before the subscription went live was too early for
    /// realtime and may not be indexed yet: a catch-up asks once the indexer has caught up
    /// with it, `indexerLagAllowance` after the subscription.
    private func afterIndexerLag(runId: Int, _ ask: @escaping () -> Void) {
        guard let live = liveSince, now < live + settings.indexerLagAllowance else { return ask() }
        let at = live + settings.indexerLagAllowance
        let i = waitingForIndexer.firstIndex { $0.at > at } ?? waitingForIndexer.count
        waitingForIndexer.insert((at, runId, ask), at: i)
    }

    /// (b): ask the node for the UTXO set, fetch by id the txIds not stored. If the node
    /// cannot answer, the same run becomes a full sync.
    private func startTargeted(trigger: String) {
        nextRunId += 1
        let id = nextRunId
        if !runs.isEmpty { counters.overlappingSyncs += 1 }
        runs[id] = SyncRun(id: id, kind: .targeted, trigger: trigger, startedAt: now)
        counters.targetedSyncs += 1
        poller.syncStarted(now: now)
        emit(.catchUpStarted(trigger: trigger, kind: .targeted, forced: false, objects: 1))
        afterIndexerLag(runId: id) { [self] in
            counters.requestsByKind["utxo_set", default: 0] += 1
            runs[id]?.requests += 1
            runs[id]?.outstanding += 1
            let request = request()
            utxoRequests[request] = id
            utxoAskedAt[id] = now
            effects.append(.requestUtxoSet(id: request, since: provenThrough.map { $0 - settings.reorgRewind }))
        }
    }

    private func utxoReplied(requestId: Int, result: Result<[String], TransportError>) {
        guard let runId = utxoRequests.removeValue(forKey: requestId), runs[runId] != nil else { return settle() }
        runs[runId]?.outstanding -= 1
        switch result {
        case .failure(let error):
            emit(.error(source: "node", message: "UTXO set: \(error); the gap cannot be proven, running a full sync"))
            runs[runId]?.kind = .full
            gate.targetedBecameFull()
            counters.targetedSyncs -= 1
            counters.fullSyncs += 1
            fetchAll(fullSyncObjects(), runId: runId)
        case .success(let txIds):
            let requestedAt = now
            // The gap: unspent outputs the store lacks, and outputs the user's sends spent unseen
            // (walked in turn: the set is the address's whole unspent history, not copied again).
            for id in [txIds, spentUnstored.sorted()].joined() where !has(id) {
                let call = IndexerCall.messageById(id)
                counters.requestsByKind[call.kind, default: 0] += 1
                runs[runId]?.requests += 1
                runs[runId]?.outstanding += 1
                let request = request()
                indexerRequests[request] = (nil, call, .zero, 0, runId, requestedAt)
                effects.append(.indexer(id: request, call))
            }
        }
        if let r = runs[runId], r.outstanding == 0 { finish(runId: runId, stoppedBy: nil) }
        settle()
    }

    /// Rule 9: handshakes in and out, contextual messages of every conversation in and out, payments.
    private func fullSyncObjects() -> [SyncObject] {
        var objects: [SyncObject] = [.handshakes(.incoming), .handshakes(.outgoing)]
        for c in contacts {
            objects.append(.contextual(c.address, .incoming))
            objects.append(.contextual(c.address, .outgoing))
        }
        objects.append(.payments)
        return objects
    }

    /// Rule 14: incoming contextual messages of the most recently active conversations.
    private func lightSyncObjects(_ conversations: Int) -> [SyncObject] {
        let activity = storage.lastActivity()
        let ranked = contacts.sorted {
            let a = activity[$0.address] ?? .zero, b = activity[$1.address] ?? .zero
            return a == b ? $0.address < $1.address : a > b
        }
        return ranked.prefix(conversations).map { .contextual($0.address, .incoming) }
    }

    private func fetch(_ object: SyncObject, since: Instant, page: Int, runId: Int) {
        let call: IndexerCall
        switch object {
        case .handshakes(let d): call = .handshakes(d, since: since)
        case .contextual(let a, let d): call = .contextual(a, d, since: since)
        case .payments: call = .payments(since: since, page: page)
        }
        counters.requestsByKind[call.kind, default: 0] += 1
        runs[runId]?.requests += 1
        runs[runId]?.outstanding += 1
        let requestedAt = now
        let request = request()
        indexerRequests[request] = (object, call, since, page, runId, requestedAt)
        effects.append(.indexer(id: request, call))
    }

    private func indexerReplied(id: Int, result: Result<Data, TransportError>) {
        if id == tipRequest { return tipReplied(result: result) }
        guard let r = indexerRequests.removeValue(forKey: id) else { return settle() }
        fetchReplied(r.object, call: r.call, since: r.since, page: r.page, runId: r.runId, requestedAt: r.requestedAt, result: result)
    }

    private func fetchReplied(_ object: SyncObject?, call: IndexerCall, since: Instant, page: Int, runId: Int, requestedAt: Instant,
                              result: Result<Data, TransportError>) {
        guard let run = runs[runId] else {
            settle()
            return  // the sync was stopped (budget, OS expiry, foreground): its late replies are dropped
        }
        runs[runId]?.outstanding -= 1
        switch result {
        case .failure(let error):
            runs[runId]?.failed += 1
            emit(.error(source: "indexer", message: "\(call.kind): \(error); cursor of \(object.map(\.description) ?? "none") unchanged"))
        case .success(let data):
            do {
                let reply = try IndexerPage.read(data, for: call, me: me, now: now)
                if !reply.rejected.isEmpty {
                    switch rejectedItems.judge(reply.rejected) {
                    case .retry(let reason, let strikes):
                        throw WireError("\(reason) (rejected \(strikes) of \(rejectedItems.attempts) times before it is skipped)")
                    case .skip(let newly):
                        for item in newly {
                            let what = item.txId.map { "message \($0.prefix(8))" } ?? "an item"
                            emit(.error(source: "indexer", message: "\(what) rejected \(rejectedItems.attempts) times in a row (\(item.reason)); skipped for good, the sync moves on"))
                        }
                    }
                }
                if case .messageById(let id) = call, reply.messages.isEmpty {
                    // (b): the node showed this output, so the message exists; the indexer has
                    // not indexed it yet. The gap is not closed: this catch-up is incomplete.
                    runs[runId]?.failed += 1
                    emit(.error(source: "indexer", message: "message_by_id \(id.prefix(8)): not indexed yet; the catch-up is incomplete"))
                }
                let channel: Channel = run.kind == .light ? .background : .fetch
                // A message whose push already reached the notification extension was the
                // app's first from that push, when it arrived: keep that as its first channel.
                let messages = reply.messages.map { m in
                    pendingArrivals[m.txId].map { StoredMessage(message: m, receivedAt: $0, via: .push) }
                        ?? StoredMessage(message: m, receivedAt: now, via: channel)
                }
                // Rule 9: the cursor moves in the same commit as the messages it covers.
                // (A fetch by id, for (b), has no cursor.)
                let move = object.map {
                    CursorMove(object: $0, cursor: self.cursor(of: $0).advanced(
                        coveringUpTo: (reply.messages.map(\.blockTime) + reply.rejected.compactMap(\.blockTime)).max(),
                        requestedAt: requestedAt, indexingLag: settings.indexerLagAllowance))
                }
                // If the write fails, what it carried is kept in memory and shown, but the
                // cursor does not move: the catch-up is incomplete (rule 9) and is retried.
                let fresh = commit(messages, cursor: move, runId: runId)
                runs[runId]?.stored += fresh.count
                for m in fresh {
                    announce(m)
                    if m.message.direction == .incoming {
                        // (a): a message first found by a catch-up is push evidence too. If its
                        // push already reached the extension (a refresh in the background), that
                        // push is its match.
                        handle(reliability.fetchedTx(txId: m.txId, from: m.message.conversation, blockTime: m.message.blockTime,
                                                     pushArrivedAt: pendingArrivals[m.txId], now: now))
                    }
                }
                if let object, let next = reply.nextPage {
                    fetch(object, since: since, page: next, runId: runId)
                }
            } catch {
                runs[runId]?.failed += 1
                let source = error is WireError ? "indexer" : "storage"
                emit(.error(source: source, message: "\(error); nothing stored, cursor of \(object.map(\.description) ?? "none") unchanged"))
            }
        }
        if let r = runs[runId], r.outstanding == 0 { finish(runId: runId, stoppedBy: nil) }
        settle()
    }

    private func finish(runId: Int, stoppedBy: String?) {
        guard let run = runs.removeValue(forKey: runId) else { return }
        let fromRefresh = refreshRunId == runId
        if fromRefresh { refreshRunId = nil }
        let succeeded = run.failed == 0 && stoppedBy == nil
        let askedAt = utxoAskedAt.removeValue(forKey: runId)
        if succeeded {
            // (b): what a complete full sync or proof covered. A full sync's requests found
            // every message indexed when it started (indexing takes up to the allowance); a
            // proof stored every output the node showed when asked.
            let covered: Instant? = switch run.kind {
            case .full: run.startedAt - settings.indexerLagAllowance
            case .targeted: askedAt
            default: nil
            }
            if let covered, provenThrough.map({ $0 < covered }) ?? true { provenThrough = covered }
            if run.kind == .targeted, let askedAt { advanceCursorsAfterProof(askedAt: askedAt) }
        }
        gate.finished(kind: run.kind, succeeded: succeeded, now: now, foreground: connection.lifecycle == .foreground,
                      forced: run.forced, progressed: run.failed < run.requests)
        counters.errors += run.failed
        emit(.catchUpFinished(trigger: run.trigger, kind: run.kind, stored: run.stored, requests: run.requests,
                              failed: run.failed, took: now - run.startedAt, stoppedBy: stoppedBy))
        handle(poller.syncCompleted(now: now))
        if fromRefresh {
            handle(refresh.lightSyncEnded(mode: mode, pushState: reliability.state, now: now))
        }
    }

    /// (b): a complete proof stored every incoming output that landed before the UTXO set
    /// was asked for (the unspent ones the app lacked were fetched by id, the ones the user's
    /// sends spent were too), so every object of incoming messages is stored up to then
    /// (rule 9's cursor), and the next full sync starts there instead of re-reading hours that
    /// realtime and push already brought. Outgoing objects are the user's own sends, stored
    /// when published; their cursors move only with fetches. Payments are incoming here: the
    /// app sends no payment (a wallet that did would keep `payments` out of this, as outgoing).
    private func advanceCursorsAfterProof(askedAt: Instant) {
        let covered = askedAt - settings.indexerLagAllowance
        for object in fullSyncObjects() {
            switch object {
            case .handshakes(.outgoing), .contextual(_, .outgoing): continue
            default: break
            }
            let current = cursor(of: object)
            guard current.lastFetchedBlockTime.map({ $0 < covered }) ?? true else { continue }
            _ = commit([], cursor: CursorMove(object: object, cursor: SyncCursor(lastFetchedBlockTime: covered)))
        }
    }

    // MARK: - Messages

    private func store(_ message: NetworkMessage, via channel: Channel, receivedAt: Instant) {
        for m in commit([StoredMessage(message: message, receivedAt: receivedAt, via: channel)], cursor: nil) {
            announce(m)
        }
    }

    /// Writes messages and the cursor that covers them as one write (rule 9), carrying along
    /// whatever the store could not take before. Returns the messages new to the app at once,
    /// so that the chat goes on whatever the write's answer. `runId`: a sync whose answer
    /// waits for this write (a failed one leaves it incomplete).
    private func commit(_ messages: [StoredMessage], cursor: CursorMove?, runId: Int? = nil) -> [StoredMessage] {
        var seen = Set<String>()
        let fresh = messages.filter { !has($0.txId) && seen.insert($0.txId).inserted }
        for m in fresh { unsaved.writing(m) }
        if let cursor { cursorsInFlight[cursor.object] = cursor.cursor }
        let carried = unsaved.messages
        unsaved.messagesStored()
        for m in carried { unsaved.writing(m) }
        write(.messages(carried + fresh, cursor: cursor), runId: runId)
        return fresh
    }

    /// A sync object's cursor: as written, even if the write has not answered yet.
    private func cursor(of object: SyncObject) -> SyncCursor {
        cursorsInFlight[object] ?? storage.cursor(object)
    }

    /// Asks the runner to write; `runId` waits for the answer.
    private func write(_ w: StoreWrite, runId: Int? = nil) {
        let id = request()
        writes[id] = (w, runId)
        if let runId, runs[runId] != nil { runs[runId]?.outstanding += 1 }
        effects.append(.write(id: id, w))
    }

    /// A write answered.
    private func written(id: Int, failure: String?) {
        guard let (w, runId) = writes.removeValue(forKey: id) else { return settle() }
        let stored = failure == nil
        switch w {
        case .messages(let messages, let cursor):
            unsaved.written(messages.map(\.txId), stored: stored)
            if let cursor, cursorsInFlight[cursor.object] == cursor.cursor { cursorsInFlight[cursor.object] = nil }
        case .state(let state):
            if stored { lastSaved = state }
            if stateInFlight == state { stateInFlight = nil }
        case .contact(let c): if !stored { unsaved.keep(c) }
        case .markRead(let a): if !stored { unsaved.keepRead(a) }
        case .appendPendingPush(let p): if !stored { unsaved.keep(p) }
        case .removePendingPushes: if !stored { unsaved.clearPendingPushes = true }
        case .outbox: if !stored { outboxUnsaved = true }
        }
        if let failure {
            if retryBatch?.contains(id) == true { retryBatch = nil }  // this retry failed
            storeFailed(reason: failure)
        } else if var batch = retryBatch, batch.remove(id) != nil {
            retryBatch = batch
            if batch.isEmpty {
                retryBatch = nil
                effects.append(.retryWorldWrites)  // the world's own writes share the disk
            }
        }
        if let runId, runs[runId] != nil {
            runs[runId]?.outstanding -= 1
            if !stored { runs[runId]?.failed += 1 }
            if let r = runs[runId], r.outstanding == 0 { finish(runId: runId, stoppedBy: nil) }
        }
        settle()
    }

    /// The app has this message: stored, or kept in memory.
    private func has(_ txId: String) -> Bool { unsaved.contains(txId: txId) || storage.hasMessage(txId: txId) }

    /// A write failed: the trouble is logged once, when it starts, and everything unsaved is
    /// tried again every `storeRetryInterval` until it all lands.
    private func storeFailed(_ error: Error) { storeFailed(reason: "\(error)") }

    private func storeFailed(reason: String) {
        if unsaved.failed(reason: reason) {
            emit(.storeTrouble(unsaved.trouble, unsaved: unsaved.count, retryEvery: Self.storeRetryInterval))
        }
        if storeRetryAt == nil { storeRetryAt = now + Self.storeRetryInterval }
    }

    /// Writes everything kept in memory, in order; the trouble ends when all of it lands.
    private func retryStore() {
        storeRetryAt = nil
        keptBeforeRecovery = unsaved.keptDuringTrouble
        let before = nextRequestId
        if !unsaved.messages.isEmpty { _ = commit([], cursor: nil) }
        for (address, c) in unsaved.contacts.sorted(by: { $0.key < $1.key }) {
            unsaved.contactStored(address)
            write(.contact(c))
        }
        for a in unsaved.reads.sorted() {
            unsaved.readStored(a)
            write(.markRead(a))
        }
        if unsaved.clearPendingPushes {
            unsaved.clearPendingPushes = false
            write(.removePendingPushes)
        }
        for p in unsaved.takePendingPushes() { write(.appendPendingPush(p)) }
        if outboxUnsaved {
            outboxUnsaved = false
            writeOutbox()
        }
        saveState()
        // The trouble ends when all of these land, and then the world's own writes.
        let batch = Set((before + 1)...max(before + 1, nextRequestId)).filter { writes[$0] != nil }
        if batch.isEmpty { effects.append(.retryWorldWrites) } else { retryBatch = batch }
    }

    private func announce(_ m: StoredMessage) {
        let object = SyncObject(holding: m.message)
        if newestSeen[object].map({ $0 < m.message.blockTime }) ?? true { newestSeen[object] = m.message.blockTime }
        pendingUnstored.remove(m.txId)
        spentUnstored.remove(m.txId)
        let a = m.message.conversation
        emit(.messageStored(m, contact: contactsByAddress[a] ?? Contact(address: a, handle: a.value, displayName: a.value)))
        // On screen in the foreground: read as it is stored (its write is queued before this).
        if a == viewing, m.message.direction == .incoming, connection.lifecycle == .foreground {
            write(.markRead(a))
        }
        if m.via == .background, m.message.direction == .incoming,
           pendingArrivals[m.txId] == nil {
            notify(m.message)  // a background refresh found it, and no push had shown it
        }
    }

    /// Rule 15: a banner for an incoming message that reached the backgrounded app.
    private func notify(_ message: NetworkMessage) {
        let contact = contactsByAddress[message.conversation]
            ?? Contact(address: message.conversation, handle: message.conversation.value, displayName: message.conversation.value)
        switch notifier.incoming(from: contact, kind: message.kind, text: message.body, mode: mode, now: now) {
        case .show(let banner):
            emit(.banner(banner, badge: badge))
        case .suppressed(let reason):
            emit(.bannerSuppressed(conversation: contact.handle, reason: reason))
        }
    }

    /// The badge: every unread message, including those still pending in the extension.
    public var badge: Int {
        storage.totalUnread() + pendingUnstored.count + unsaved.incomingNotStored
    }

    /// Rule 12: pushes the extension stored while backgrounded are stored now and count as
    /// push deliveries at the time they really arrived.
    private func processPendingPushes() {
        let pending = storage.pendingPushes() + unsaved.takePendingPushes()
        guard !pending.isEmpty else { return }
        for p in pending {
            store(p.message, via: .push, receivedAt: p.arrivedAt)
            handle(reliability.pushReceived(txId: p.message.txId, arrivedAt: p.arrivedAt, now: now))
        }
        pendingArrivals.removeAll()
        pendingUnstored.removeAll()
        write(.removePendingPushes)
    }

    // MARK: - Push token and conditions

    private func registerToken(reason: String) {
        emit(.tokenRegistration(reason))
        effects.append(.registerToken)
    }

    private func unregisterToken(reason: String) {
        reregisterWhenActive = false
        emit(.tokenRegistration("unregister: " + reason))
        effects.append(.unregisterToken)
    }

    private func conditionsChanged() {
        let conditions = PushConditions(mode: mode, permissionGranted: permissionGranted, tokenStatus: tokenStatus)
        handle(reliability.conditionsChanged(conditions, now: now))
    }

    /// Rule 13's poller and (e)'s checks, after any change of lifecycle, realtime, mode or push state.
    private func updatePoller() {
        handle(poller.conditionsChanged(lifecycle: connection.lifecycle, realtimeAvailable: !connection.subscriptionUnavailable, mode: mode,
                                        syncRunning: gate.running != nil, pushUnreliable: reliability.state == .unreliable, now: now))
        handle(verifier.conditionsChanged(foreground: connection.lifecycle == .foreground, notLiveSince: notLiveSince,
                                          pushState: reliability.state, polling: poller.active, now: now))
    }

    private func handle(_ actions: [PushVerifier.Action]) {
        for action in actions {
            switch action {
            case .started(let reason): emit(.pushCheck("started: " + reason))
            case .stopped(let reason): emit(.pushCheck("stopped: " + reason))
            case .check: verifyPush()
            }
        }
    }

    /// (e): one tip request; what moved past what the app has is fetched (`tipReplied`).
    private func verifyPush() {
        guard tipRequest == nil, gate.running == nil else {
            return emit(.pushCheck("a sync or a tip request is out; next check in \(verifier.verifyInterval)"))
        }
        counters.requestsByKind[IndexerCall.tip.kind, default: 0] += 1
        let id = request()
        tipRequest = id
        tipVerifiesPush = true
        effects.append(.indexer(id: id, .tip))
        emit(.pushCheckAsked(objects: fullSyncObjects().count))
    }

    // MARK: - Timers and persistence

    /// Ends every input: persist what changed. (The runner re-arms its one wake-up at
    /// `nextDeadline`.)
    private func settle() {
        persist()
        let current = status
        if current != lastStatus {
            lastStatus = current
            emit(.status(current))
        }
        if inspecting {
            let detail = inspection
            if detail != lastInspection {
                lastInspection = detail
                emit(.inspection(detail))
            }
        }
    }

    private func inspect(_ on: Bool) {
        inspecting = on
        lastInspection = nil  // the first look gets the state at once
        settle()
    }

    /// What an inspector shows, as of now (sent as `.inspection` while inspecting).
    public var inspection: EngineInspection {
        var i = EngineInspection()
        i.push.state = reliability.state
        i.push.misses = reliability.consecutiveMisses
        i.push.missThreshold = settings.missesToUnreliable
        i.push.pending = reliability.sightings
        i.push.unmatchedPushes = reliability.unmatchedPushes
        i.push.suspended = reliability.suspended
        i.push.lastReregisterAt = reliability.lastReregisterAt
        i.push.notOperational = reliability.conditions?.whyNotOperational
        i.gate.lastCatchUpAt = gate.lastFinishedAt
        i.gate.lastFullSyncAt = gate.lastFullSyncAt
        i.gate.debounceEndsAt = gate.debounceRemaining(pushState: reliability.state, now: now).map { now + $0 }
        i.gate.running = runs.values.sorted { $0.id < $1.id }.map {
            .init(kind: $0.kind, trigger: $0.trigger, forced: $0.forced, startedAt: $0.startedAt, outstanding: $0.outstanding,
                  stored: $0.stored, joined: $0.joined)
        }
        i.gate.trailingAt = gate.trailingDue
        i.gate.owed = gate.owed
        i.gate.retryAt = gate.retryDue
        i.gate.retriesInARow = gate.retriesInARow
        i.cursors = fullSyncObjects().map { .init(object: $0, at: cursor(of: $0).lastFetchedBlockTime) }
        i.timers.polling = poller.active
        i.timers.nextPollAt = poller.nextDeadline
        i.timers.refreshRequested = refresh.requested
        i.timers.refreshEarliest = refresh.requested ? refreshEarliest : nil
        i.timers.refreshBudgetEndsAt = refresh.budgetEndsAt
        i.timers.connection = connection.timers
        i.timers.storeRetryAt = storeRetryAt
        return i
    }

    /// What a status bar says, as of now (sent as `.status` whenever it changes).
    public var status: EngineStatus {
        var s = EngineStatus()
        s.lifecycle = connection.lifecycle
        s.realtime = EngineStatus.Realtime(connection.realtime, polling: poller.active)
        s.push = reliability.state
        s.misses = reliability.consecutiveMisses
        s.missThreshold = settings.missesToUnreliable
        s.token = tokenStatus
        s.mode = mode
        s.preview = notifier.preview
        s.lastCatchUpAt = gate.lastFinishedAt
        s.debounceEndsAt = gate.debounceRemaining(pushState: reliability.state, now: now).map { now + $0 }
        s.requests = counters.requests
        s.badge = badge
        s.storeTrouble = unsaved.trouble
        s.unsaved = unsaved.count
        s.unsent = outbox.count
        return s
    }

    private func deadlineFired() {
        while let first = waitingForIndexer.first, first.at <= now {
            waitingForIndexer.removeFirst()
            if runs[first.runId] != nil { first.ask() }  // unless it was stopped meanwhile
        }
        handle(reliability.deadlineReached(now: now))
        handle(connection.deadlineReached(now: now))
        handle(poller.deadlineReached(now: now, syncRunning: gate.running != nil))
        handle(verifier.deadlineReached(now: now))
        handle(refresh.deadlineReached(now: now))
        for t in gate.deadlineReached(now: now) { trigger(t, forced: false) }  // a retry, (c)
        if let at = storeRetryAt, at <= now { retryStore() }
        for m in outbox {
            if case .failed(_, let at) = m.state, at <= now { publish(m) }
        }
        settle()
    }

    /// Saves the learned state when it changed. While the store is in trouble only the
    /// retry writes (a full disk is not asked again at every event).
    private func persist() {
        guard unsaved.trouble == nil else { return }
        saveState()
    }

    private func saveState() {
        let state = PersistedEngineState(reliability: reliability.persisted, gate: gate.persisted, mode: mode,
                                         preview: notifier.preview, tokenStatus: tokenStatus)
        guard state != lastSaved, state != stateInFlight else { return }
        stateInFlight = state
        write(.state(state))
    }

    private func emit(_ event: SyncEvent) {
        events.append(TimedEvent(at: now, event: event))
    }
}

/// What the engine hands out, first in, first out; read without copying, emptied once read.
struct Outbox<Element> {
    private var items: [Element] = []
    private var read = 0

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
