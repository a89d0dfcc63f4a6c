import AppActions
import SimWorld
import SyncCore
import SyncEngine

/// The app and its world, on one clock: a simulated world, the engine's runner on a store,
/// the world's persistence (a profile), and the decision log. The live TUI is a session;
/// `simulate` and a scenario played in the TUI are a session with a `ScenarioRun` playing a
/// script into it. Every change from outside — a key, a scenario line — is a `Directive`
/// applied here, so the two read the same.
public final class AppSession {
    public let seed: UInt64
    public let scheduler: Scheduler
    public let world: SimulatedWorld
    public let storage: ChatStorage
    public private(set) var driver: SyncDriver
    /// Every decision of the engine and every change to the world, in order, while
    /// `keepsLog`.
    public private(set) var log: [TimedEvent] = []
    /// Whether `log` grows. A run whose log nobody reads (`simulate` without `--events` or
    /// `--chart`; the TUI, whose log pane keeps its own last lines) does not keep it: a
    /// million messages would be a million events held to the end.
    public var keepsLog = true {
        didSet { if !keepsLog { log = [] } }
    }
    /// When push became unreliable, each time: what the measures need of the log.
    public private(set) var becameUnreliable: [Instant] = []
    public let settings: SyncSettings
    public let policy: SyncPolicy
    /// The world's clock when the session started (later than zero for a resumed profile).
    public let startedAt: Instant
    /// Where the world is kept between runs (a profile), if anywhere.
    public let persistence: WorldPersistence?
    /// True when this session resumed a saved world.
    public let resumed: Bool
    /// A `quit` directive came (a scenario's `quit` line).
    public private(set) var quitRequested = false
    private let initialMode: NotificationMode

    /// A session on a new world of `contacts` contacts writing `trafficPerHour`, or, with
    /// `persistence` holding a saved world (a profile relaunched), the same world where it
    /// stopped: its clock, contacts and messages; its random streams reseeded by that clock,
    /// so that new traffic is new. Nothing runs until `start()`.
    public init(seed: UInt64, contacts: Int, trafficPerHour: Double, mode: NotificationMode, policy: SyncPolicy = .adaptive,
                settings: SyncSettings = .default, storage: ChatStorage = InMemoryChatStorage(), timings: WorldTimings = WorldTimings(),
                persistence: WorldPersistence? = nil, history: WorldHistory = InMemoryWorldHistory()) {
        self.policy = policy
        self.settings = settings
        self.storage = storage
        self.persistence = persistence
        self.initialMode = mode
        let saved = (try? persistence?.loadWorld()) ?? nil
        self.resumed = saved != nil
        self.seed = saved?.seed ?? seed
        let start = saved?.clock ?? .zero
        self.startedAt = start
        let scheduler = Scheduler(start: start)
        self.scheduler = scheduler
        let streamSeed = saved.map { $0.seed ^ (UInt64(bitPattern: $0.clock.milliseconds) &* 0x9E37_79B9_7F4A_7C15) } ?? self.seed
        let world = SimulatedWorld(seed: streamSeed, scheduler: scheduler, timings: timings, history: history)
        self.world = world
        if let saved {
            world.restore(saved)
        } else {
            world.persistence = persistence
            for handle in Self.defaultHandles(contacts) {
                world.addContact(handle: handle, displayName: Self.displayName(for: handle))
            }
        }
        world.persistence = persistence
        let stored = Set(storage.contacts().map(\.address))  // once: 200 contacts read 200 times took 25 ms of the start
        for c in world.contacts where !stored.contains(c.address) {
            try? storage.upsertContact(c)
        }
        self.driver = SyncDriver(settings: settings, policy: policy, me: world.me, scheduler: scheduler, storage: storage,
                                 ports: world.ports, initialMode: mode)
        world.attach(client: driver)
        driver.subscribe { [weak self] in self?.record($0) }
        world.persistenceFailed = { [weak self] in self?.driver.worldWriteFailed($0) }
        wireWorldWrites()
        world.traffic.perHour = trafficPerHour
    }

    /// The app is launched and opened: traffic starts, the OS brings the app to the front.
    public func start() {
        driver.launch()
        world.traffic.start()
        world.os.moveToForeground()
        checkpoint()
    }

    /// Runs everything due up to `target`.
    public func advance(to target: Instant) {
        scheduler.run(until: target)
    }

    /// Saves the world's clock and token (the messages and contacts are saved as they happen).
    public func checkpoint() {
        do { try saveWorldClock() } catch { driver.worldWriteFailed(error) }
    }

    private func saveWorldClock() throws {
        try persistence?.saveWorldClock(seed: seed, clock: scheduler.now, tokenStatus: world.push.tokenStatus)
    }

    /// The world shares the profile's disk: its writes that failed are retried with the store's.
    private func wireWorldWrites() {
        driver.retryWorldWrites = { [weak self] in
            try self?.world.retryPersistence()
            try self?.saveWorldClock()
        }
    }

    /// Simulates an app restart on the same store: the process is killed, then a new engine
    /// (cold start, rule 10: no forced reconnect) replaces the old one; the world goes on.
    public func restartApp() {
        world.os.processKilled()
        let fresh = SyncDriver(settings: settings, policy: policy, me: world.me, scheduler: scheduler, storage: storage,
                               ports: world.ports, initialMode: initialMode)
        driver = fresh
        wireWorldWrites()
        world.attach(client: fresh)
        fresh.subscribe { [weak self] in self?.record($0) }
        fresh.launch()
        world.os.moveToForeground()
    }

    /// Applies one directive now: a scenario line, or a key of the TUI.
    public func apply(_ d: Directive) {
        onApply?(d, scheduler.now)
        // Reading a conversation and the end of a recording are not changes of the world,
        // and a read happens on every message of an open conversation: not in the log.
        // What the engine logs itself (a mode, a mute) is not logged twice.
        switch d {
        case .open, .stop: break
        case _ where d.engineLogsIt: break
        default: driver.noteWorldChange(d.summary)
        }
        if !world.applyFault(d) { applyToApp(d) }
        noteFaults(at: scheduler.now)
    }

    /// The world's active faults, after a change: the timeline's history and belief lag.
    private func noteFaults(at t: Instant) {
        let faults = activeFaults
        guard faultHistory.last?.faults != faults else { return }
        faultHistory.append((t, faults))
        onFaultsChanged?(faults)
        beliefLag.faultsChanged(faults, at: t)
        timeline.faultsChanged(faults, at: t)
    }

    /// Where the app was and what the device could reach, over the run (the latency floor,
    /// the realtime outage in the foreground).
    public private(set) var timeline = AppTimeline()

    /// How long the engine took to believe each fault of the world (docs/simulate.md).
    public private(set) var beliefLag = BeliefLag()

    /// A directive of the app or the user (a fault of the network is the world's).
    private func applyToApp(_ d: Directive) {
        // A contact by its handle, or, for one added by its address, by that address.
        func contact(_ h: String) -> Contact? {
            world.contact(handle: h) ?? (Directive.isAddress(h) ? world.contact(address: Address(h)) : nil)
        }
        switch d {
        case .foreground: world.os.moveToForeground()
        case .background: world.os.moveToBackground()
        case .mode(let m): driver.setMode(m)
        case .send(let h, let text):
            if let c = contact(h) { driver.send(to: c.address, text: text) }
        case .receive(let h, let text):
            if let c = contact(h) { world.deliverIncoming(from: c, kind: .contextual, body: text) }
        case .add(let address, let name):
            guard Directive.isAddress(address) else { break }
            // Known already (by another handle, in a profile from before): renamed, not added twice.
            let known = world.contact(address: Address(address))
            let isNew = known == nil
            let c = world.addContact(handle: known?.handle ?? address, displayName: name, address: Address(address))
            var clientSide = driver.contact(c.address) ?? c
            clientSide.displayName = name
            driver.upsertContact(clientSide)
            if isNew { world.deliverIncoming(from: c, kind: .handshake, body: "handshake from \(name)") }
        case .contact(let h, let name):
            // An address names a contact added by it; it makes none (that is `add`'s).
            if Directive.isAddress(h), contact(h) == nil {
                driver.noteWorldChange("contact \(h): no contact has that address (add it first)")
                break
            }
            let isNew = contact(h) == nil
            let c = world.addContact(handle: contact(h)?.handle ?? h, displayName: name)
            var clientSide = driver.contact(c.address) ?? c
            clientSide.displayName = name
            driver.upsertContact(clientSide)
            if isNew { world.deliverIncoming(from: c, kind: .handshake, body: "handshake from \(name)") }
        case .mute(let h):
            guard let c = contact(h) else { break }
            world.setMuted(handle: c.handle, true)
            driver.setMuted(c.address, true)
        case .unmute(let h):
            guard let c = contact(h) else { break }
            world.setMuted(handle: c.handle, false)
            driver.setMuted(c.address, false)
        case .sync: driver.syncNow()
        case .preview(let p): driver.setPreview(p)
        case .open(let h):
            if let c = contact(h) ?? driver.contacts.first(where: { $0.handle == h }) {
                driver.viewing(c.address)
                driver.markRead(c.address)
                onOpen?(c.address)
            }
        case .retry: driver.handle(.retrySends)
        case .quit: quitRequested = true
        case .stop:
            stopRequested = true
            quitRequested = true
        default: break  // a fault of the network: SimulatedWorld.applyFault
        }
    }

    /// The world's active faults after each change (ground truth, for a timeline).
    public private(set) var faultHistory: [(at: Instant, faults: [String])] = []

    /// Every directive as it is applied, with its instant (a recorder writes them down).
    public var onApply: ((Directive, Instant) -> Void)?
    /// A conversation opened by a directive (a played `open NAME`): a screen shows it.
    public var onOpen: ((Address) -> Void)?
    /// The run ends here (`stop`): no final foreground, no settle.
    public private(set) var stopRequested = false

    /// The faults the world has now, in the words of their directives (`push drop 100%`,
    /// `indexer down`): the world's ground truth, which the engine must not know — it has to
    /// find out — so it reaches a view from here, not in the engine's status.
    public var activeFaults: [String] { world.activeFaults }
    public var onFaultsChanged: (([String]) -> Void)?

    /// The decision log keeps decisions; status and contact updates are for views.
    private func record(_ e: TimedEvent) {
        if keepsLog, e.event.isDecision { log.append(e) }
        switch e.event {
        case .pushState(_, .unreliable, _):
            becameUnreliable.append(e.at)
        case .tokenStatus, .realtime:
            // A bad token or a stale socket ends without a directive: re-registered, replaced.
            noteFaults(at: e.at)
        case .lifecycle(let l, _):
            timeline.lifecycleChanged(foreground: l == .foreground, at: e.at)
        default:
            break
        }
        beliefLag.observe(e)
    }

    /// The event log, one line per event.
    public var logLines: [String] { log.map(\.line) }

    /// The contact handles of a new world of `n` contacts, in order (`SimulatedWorld`'s).
    public static func defaultHandles(_ n: Int) -> [String] { SimulatedWorld.defaultHandles(n) }

    public static func displayName(for handle: String) -> String { SimulatedWorld.displayName(for: handle) }
}
