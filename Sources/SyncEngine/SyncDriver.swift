import Foundation
import SyncCore

/// The runner of the sans-IO `Engine` on the world's ports: the one place that performs
/// effects. What the world tells the app (`ClientEndpoint`) and what the user does become
/// engine inputs at the scheduler's instant; every effect the engine asks for is performed
/// against `WorldPorts`, in order, and its reply is handed back as an input; the engine's one
/// deadline is one wake-up on the scheduler; its events go to the subscribers. The same
/// runner goes as fast as possible in `simulate` and is paced by the clock in the TUI.
public final class SyncDriver: ClientEndpoint {
    public let engine: Engine
    /// The store the engine reads and this runner writes (`.write` effects).
    public let storage: ChatStorage
    public let scheduler: Scheduler
    private let ports: WorldPorts
    private var wakeUp: (at: Instant, token: Scheduler.Token)?
    private var subscribers: [(TimedEvent) -> Void] = []
    /// What the network took for the last `.publish` performed, for `send` to return.
    private var lastPublication: Publication?
    /// Writes a profile's world keeps of its own, retried with the store's (set by whoever
    /// persists the world). Throws while they still fail.
    public var retryWorldWrites: (() throws -> Void)?

    public init(settings: SyncSettings = .default, policy: SyncPolicy = .seed, me: Address, scheduler: Scheduler,
                storage: ChatStorage, ports: WorldPorts, initialMode: NotificationMode = .remotePush) {
        self.scheduler = scheduler
        self.ports = ports
        self.storage = storage
        self.engine = Engine(settings: settings, policy: policy, me: me, storage: storage, initialMode: initialMode,
                             permissionGranted: ports.system.notificationPermissionGranted, now: scheduler.now)
    }

    /// Receive every event from now on, starting with the status as it is now.
    public func subscribe(_ handler: @escaping (TimedEvent) -> Void) {
        subscribers.append(handler)
        handler(TimedEvent(at: scheduler.now, event: .status(engine.status)))
    }

    /// Hands one input to the engine at the scheduler's instant, performs what it asks for,
    /// publishes its events and re-arms the wake-up.
    public func handle(_ input: EngineInput) {
        engine.handle(input, now: scheduler.now)
        run()
    }

    private func run() {
        while let effect = engine.pollEffect() { perform(effect) }
        while let event = engine.pollEvent() { for s in subscribers { s(event) } }
        armWakeUp()
    }

    private func perform(_ effect: Effect) {
        let now = { [unowned self] in self.scheduler.now }
        switch effect {
        case .connect(let forced):
            let id = ports.realtime.connect(subscribing: engine.me, forced: forced)
            engine.handle(.connectionOpened(id), now: now())
        case .ping(let connection, let ping):
            ports.realtime.ping(connection: connection) { [weak self] in self?.handle(.pingAnswered(ping: ping)) }
        case .requestUtxoSet(let id, let since):
            ports.realtime.requestUtxoSet(for: engine.me, since: since) { [weak self] in self?.handle(.utxoSetReplied(id: id, $0)) }
        case .indexer(let id, let call):
            ports.indexer.send(call) { [weak self] in self?.handle(.indexerReplied(id: id, $0)) }
        case .publish(let id, let to, let body, let key):
            // An answer given at once (the in-process world) is handled here, in order with
            // the other effects; one that comes later (a network) is an input of its own.
            var answeredNow: Result<Publication, TransportError>?
            var performing = true
            ports.network.publish(from: engine.me, to: to, body: body, key: key) { [weak self] result in
                if case .success(let publication) = result { self?.lastPublication = publication }
                if performing { answeredNow = result } else { self?.handle(.published(id: id, result)) }
            }
            performing = false
            if let answeredNow { engine.handle(.published(id: id, answeredNow), now: now()) }
        case .registerToken: ports.push.registerToken()
        case .unregisterToken: ports.push.unregisterToken()
        case .setMuted(let a, let muted): ports.push.setMuted(a, muted)
        case .requestBackgroundRefresh(let earliest): ports.system.requestBackgroundRefresh(earliest: earliest)
        case .cancelBackgroundRefresh: ports.system.cancelBackgroundRefresh()
        case .write(let id, let write):
            var failure: String?
            do { try perform(write) } catch { failure = "\(error)" }
            engine.handle(.written(id: id, failure: failure), now: now())
        case .retryWorldWrites:
            var failure: Error?
            do { try retryWorldWrites?() } catch { failure = error }
            engine.handle(.worldWritesRetried(failure), now: now())
        }
    }

    private func perform(_ write: StoreWrite) throws { try storage.apply(write) }

    private func armWakeUp() {
        guard let next = engine.nextDeadline else {
            if let w = wakeUp { scheduler.cancel(w.token); wakeUp = nil }
            return
        }
        if let w = wakeUp {
            if w.at == next { return }
            scheduler.cancel(w.token)
        }
        wakeUp = (next, scheduler.schedule(at: next, "engine deadline") { [weak self] in
            self?.wakeUp = nil
            self?.handle(.deadline)
        })
    }

    // MARK: - What the user and the app do

    /// Cold start of the app process: restore what was learned, register for push if needed.
    public func launch() { handle(.launched) }
    /// The user renames a contact in the app.
    public func rename(_ contact: Address, to displayName: String) { handle(.rename(contact, displayName)) }
    public func setMuted(_ contact: Address, _ muted: Bool) { handle(.setMuted(contact, muted)) }
    public func setMode(_ mode: NotificationMode) { handle(.setMode(mode)) }
    public func setPreview(_ preview: PreviewMode) { handle(.setPreview(preview)) }
    public func syncNow() { handle(.syncNow) }
    public func markRead(_ conversation: Address) { handle(.markRead(conversation)) }
    public func viewing(_ conversation: Address?) { handle(.viewing(conversation)) }
    public func worldWriteFailed(_ error: Error) { handle(.worldWriteFailed(error)) }

    /// The user writes to a contact. Returns the message as published, or nil when it was
    /// not sent (over `MessageLimits.maxBodyBytes`: an error event says so).
    @discardableResult
    public func send(to contact: Address, text: String) -> NetworkMessage? {
        lastPublication = nil
        handle(.send(to: contact, text: text))
        return lastPublication?.message
    }

    // MARK: - What the engine knows, for the UI and the measures

    public var settings: SyncSettings { engine.settings }
    public var policy: SyncPolicy { engine.policy }
    public var me: Address { engine.me }
    public var reliability: PushReliability { engine.reliability }
    public var gate: CatchUpGate { engine.gate }
    public var poller: FallbackPoller { engine.poller }
    public var connection: ConnectionLifecycle { engine.connection }
    public var notifier: NotificationPresenter { engine.notifier }
    public var mode: NotificationMode { engine.mode }
    public var tokenStatus: TokenStatus { engine.tokenStatus }
    public var counters: Engine.Counters { engine.counters }
    public var badge: Int { engine.badge }
    public var contacts: [Contact] { engine.contacts }
    public func contact(_ address: Address) -> Contact? { engine.contact(address) }
    public func message(txId: String) -> StoredMessage? { engine.message(txId: txId) }
    public var storeTrouble: String? { engine.storeTrouble }
    public var unsavedChanges: Int { engine.unsavedChanges }

    // MARK: - ClientEndpoint: what the world tells the app

    public func appDidBecomeActive() { handle(.becameActive) }
    public func appDidEnterBackground() { handle(.enteredBackground) }
    public func realtimeConnected(connection: Int) { handle(.connected(connection)) }
    public func realtimeConnectFailed(connection: Int, error: String) { handle(.connectFailed(connection, error: error)) }
    public func realtimeDisconnected(connection: Int, error: String) { handle(.disconnected(connection, error: error)) }
    public func realtimeNotified(connection: Int, message: NetworkMessage) { handle(.realtimeTx(connection: connection, message)) }
    public func pushDelivered(payload: Data) { handle(.pushDelivered(payload)) }
    public func notificationExtensionReceived(payload: Data) { handle(.extensionReceived(payload)) }
    public func pushMessagesDeleted() { handle(.pushMessagesDeleted) }
    public func pushPathChanged(open: Bool) { handle(.pushPath(open: open)) }
    public func tokenStatusChanged(_ status: TokenStatus) { handle(.tokenStatus(status)) }
    public func contactsKnown(_ contacts: [Contact]) { handle(.contactsKnown(contacts)) }
    public func backgroundRefreshGranted(task: Int) { handle(.refreshGranted(task: task)) }
    public func backgroundRefreshExpired(task: Int) { handle(.refreshExpired(task: task)) }
}
