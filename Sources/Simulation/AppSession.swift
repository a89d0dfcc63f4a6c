import ClientRuntime
import Directives
import SimulatedWorld
import SyncCore
import SyncEngine

/// The app and its world, on one clock: a simulated world, the app (`ClientApp`: the engine's
/// runner on a store, the phone's OS, the log), and the world's persistence (a profile). The
/// live TUI is a session; `simulate` and a scenario played in the TUI are a session with a
/// `ScenarioRun` playing a script into it. Every change from outside — a key, a scenario line —
/// is a `Directive` applied here: the app's half by the app, the world's half by the world.
public final class AppSession {
    public let seed: UInt64
    public let scheduler: Scheduler
    public let world: SimulatedWorld
    public let storage: ChatStorage
    public let app: ClientApp
    public var driver: SyncDriver { app.driver }
    public let settings: SyncSettings
    public let policy: SyncPolicy
    /// The world's clock when the session started (later than zero for a resumed profile).
    public let startedAt: Instant
    /// Where the world is kept between runs (a profile), if anywhere.
    public let persistence: WorldPersistence?
    /// True when this session resumed a saved world.
    public let resumed: Bool
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
            for handle in SimulatedWorld.defaultHandles(contacts) {
                world.addContact(handle: handle, displayName: SimulatedWorld.displayName(for: handle))
            }
        }
        world.persistence = persistence
        let driver = SyncDriver(settings: settings, policy: policy, me: world.me, scheduler: scheduler, storage: storage,
                                ports: world.ports, initialMode: mode)
        app = ClientApp(driver: driver, os: world.os, knowsTruth: true)
        world.onFaultsChanged = { [app, weak self, scheduler] faults in
            app.faultsChanged(faults)
            self?.timeline.faultsChanged(faults, at: scheduler.now)
        }
        app.subscribe { [weak self] e in
            if case .lifecycle(let l, _) = e.event { self?.timeline.lifecycleChanged(foreground: l == .foreground, at: e.at) }
        }
        world.attach(client: driver)
        world.persistenceFailed = { [app] in app.driver.worldWriteFailed($0) }
        wireWorldWrites()
        world.traffic.perHour = trafficPerHour
    }

    /// The session is let go: the cycles it closed are opened (the world's callbacks hold the app,
    /// whose driver holds the world's ports, the world among them; the queue's timers hold the
    /// world), so that a loop of runs holds one world at a time.
    deinit {
        world.onFaultsChanged = nil
        world.persistenceFailed = nil
        scheduler.clear()
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
        app.replace(SyncDriver(settings: settings, policy: policy, me: world.me, scheduler: scheduler, storage: storage,
                               ports: world.ports, initialMode: initialMode))
        wireWorldWrites()
        world.attach(client: driver)
        driver.launch()
        world.os.moveToForeground()
    }

    /// Applies one directive now: a scenario line, or a key of the TUI.
    public func apply(_ d: Directive) {
        app.applying(d)
        if let change = d.worldFault { return world.apply(change) }
        if app.apply(d, contact: contact) { return }
        switch d {
        case .receive(let h, let text):
            if let c = contact(h) { world.deliverIncoming(from: c, kind: .contextual, body: text) }
        case .add(let address, let name):
            guard Directive.isAddress(address) else { break }
            // Known already (by another handle, in a profile from before): renamed, not added twice.
            if let known = contact(address) { return driver.rename(known.address, to: name) }
            // A new person at that address: the world tells the app, and the person says hello.
            let c = world.addContact(handle: address, displayName: name, address: Address(address))
            world.deliverIncoming(from: c, kind: .handshake, body: "handshake from \(name)")
        case .contact(let h, let name):
            if let known = contact(h) { return driver.rename(known.address, to: name) }
            // An address names a contact added by it; it makes none (that is `add`'s).
            if Directive.isAddress(h) { return app.note("contact \(h): no contact has that address (add it first)") }
            let c = world.addContact(handle: h, displayName: name)
            world.deliverIncoming(from: c, kind: .handshake, body: "handshake from \(name)")
        default:
            break
        }
    }

    /// A contact by its handle, or, for one added by its address, by that address; a contact
    /// the app alone knows (one a played `open` names) by its handle there.
    private func contact(_ h: String) -> Contact? {
        world.contact(handle: h) ?? (Directive.isAddress(h) ? world.contact(address: Address(h)) : nil)
            ?? driver.contacts.first { $0.handle == h }
    }

    // The app's parts a run reads.
    public var log: [TimedEvent] { app.log }
    public var logLines: [String] { log.map(\.line) }
    public var keepsLog: Bool {
        get { app.keepsLog }
        set { app.keepsLog = newValue }
    }
    public var becameUnreliable: [Instant] { app.becameUnreliable }
    public var beliefLag: BeliefLag { app.beliefLag }
    /// Where the app was and what the device could reach, over the run (the latency floor,
    /// the realtime outage in the foreground).
    public private(set) var timeline = AppTimeline()
    public var faultHistory: [(at: Instant, faults: WorldFaults)] { app.faultHistory }
    public var quitRequested: Bool { app.quitRequested }
    public var stopRequested: Bool { app.stopRequested }
    public var onApply: ((Directive, Instant) -> Void)? {
        get { app.onApply }
        set { app.onApply = newValue }
    }
}
