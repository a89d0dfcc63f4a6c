import SimWorld
import SyncCore
import SyncEngine

/// One run of a scenario: a simulated world, an engine on a store, the script applied at its
/// times, then the final foreground and the settle period (SPEC §9). `run()` goes as fast
/// as the machine allows in virtual time; the TUI can instead call `advance(to:)` with
/// scaled wall time.
public final class ScenarioRun {
    public let scenario: Scenario
    public let seed: UInt64
    public let scheduler: Scheduler
    public let world: SimulatedWorld
    public let storage: ChatStorage
    public private(set) var driver: SyncDriver
    public private(set) var log: [TimedEvent] = []
    public let settings: SyncSettings
    /// The world's clock when the run started (later than zero for a resumed profile).
    public let startedAt: Instant
    /// When the script (and the traffic) ends: the scenario's duration, or a `quit`.
    public private(set) var scriptEnd: Instant
    public private(set) var finished = false
    /// A `quit` line was reached.
    public private(set) var quitRequested = false
    /// What follows the script and its settle. `simulate` stops there, so that "lost" has a
    /// meaning; the live TUI hands the world over, and it goes on: traffic, replies, keys.
    public var continuesLive = false
    /// The world was handed over after the script (see `continuesLive`).
    public private(set) var live = false
    /// Traffic after a hand-over when the scenario has none: the live chat's default.
    public static let liveTrafficPerHour = 24.0

    /// Where the world is kept between runs (a profile), if anywhere.
    public let persistence: WorldPersistence?
    /// True when this run resumed a saved world.
    public let resumed: Bool

    /// A run of `scenario`. With `persistence` holding a saved world (a profile relaunched),
    /// the same world resumes where it stopped: its clock, contacts and messages; its random
    /// streams are reseeded by that clock, so new traffic is new.
    public let policy: SyncPolicy

    public init(scenario: Scenario, seed: UInt64? = nil, policy: SyncPolicy = .adaptive, settings: SyncSettings = .default,
                storage: ChatStorage = InMemoryChatStorage(), timings: WorldTimings = WorldTimings(),
                persistence: WorldPersistence? = nil) {
        self.scenario = scenario
        self.policy = policy
        self.settings = settings
        self.storage = storage
        self.persistence = persistence
        let saved = (try? persistence?.loadWorld()) ?? nil
        self.resumed = saved != nil
        self.seed = saved?.seed ?? seed ?? scenario.seed
        let start = saved?.clock ?? .zero
        self.startedAt = start
        let scheduler = Scheduler(start: start)
        self.scheduler = scheduler
        let streamSeed = saved.map { $0.seed ^ (UInt64(bitPattern: $0.clock.milliseconds) &* 0x9E37_79B9_7F4A_7C15) } ?? self.seed
        let world = SimulatedWorld(seed: streamSeed, scheduler: scheduler, timings: timings)
        self.world = world
        self.scriptEnd = start + scenario.duration
        if let saved {
            world.restore(saved)
        } else {
            world.persistence = persistence
            for handle in Scenario.defaultHandles(scenario.contacts) {
                world.addContact(handle: handle, displayName: Scenario.displayName(for: handle))
            }
        }
        world.persistence = persistence
        for c in world.contacts where !storage.contacts().contains(where: { $0.address == c.address }) {
            try? storage.upsertContact(c)
        }
        self.driver = SyncDriver(settings: settings, policy: policy, me: world.me, scheduler: scheduler, storage: storage,
                                 ports: world.ports, initialMode: scenario.mode)
        world.attach(client: driver)
        driver.subscribe { [weak self] in self?.record($0) }
        world.persistenceFailed = { [weak self] in self?.driver.worldWriteFailed($0) }
        wireWorldWrites()
        world.traffic.perHour = scenario.trafficPerHour
        world.traffic.stopsAt = scriptEnd
        for step in scenario.steps {
            scheduler.schedule(at: start + (step.at - .zero), "scenario line \(step.line)") { [weak self] in self?.apply(step.directive) }
        }
        // The app is launched and opened at the start of the run.
        driver.launch()
        world.traffic.start()
        world.os.moveToForeground()
        checkpoint()
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
                               ports: world.ports, initialMode: scenario.mode)
        driver = fresh
        wireWorldWrites()
        world.attach(client: fresh)
        fresh.subscribe { [weak self] in self?.record($0) }
        fresh.launch()
        world.os.moveToForeground()
    }

    /// Runs the whole scenario in virtual time, as fast as possible.
    public func run() {
        advance(to: scriptEnd + scenario.settle)
    }

    /// When the settle period ends; nil while the script is still running.
    public private(set) var settleEnd: Instant?

    /// Runs everything due up to `target`: the script, its end, the settle period.
    public func advance(to target: Instant) {
        if settleEnd == nil {
            while !quitRequested, let next = scheduler.nextEventTime, next <= min(target, scriptEnd) {
                scheduler.runNext()
            }
            if quitRequested {
                scriptEnd = scheduler.now
            } else if target < scriptEnd {
                scheduler.run(until: target)
                return
            } else {
                scheduler.run(until: scriptEnd)
            }
            endScript()
        }
        let end = settleEnd!
        if live { return scheduler.run(until: target) }
        scheduler.run(until: min(target, end))
        finished = scheduler.now >= end
        if finished, continuesLive {
            goLive()
            scheduler.run(until: target)
        }
    }

    /// The script and its settle are over: the world goes on as the live chat's does.
    private func goLive() {
        live = true
        let rate = scenario.trafficPerHour > 0 ? scenario.trafficPerHour : Self.liveTrafficPerHour
        world.traffic.resume(perHour: rate)
        driver.noteWorldChange("script \(scenario.source) over; the live world goes on (traffic \(Int(rate))/h, replies, keys)")
    }

    /// Where a played scenario is, for a status bar: `script 3m/15m`, `settling`, `script
    /// over: live`; nil for the plain live chat, which plays no script.
    public var scriptStatus: String? {
        guard scenario.source != Scenario.liveSource else { return nil }
        if live { return "script over: live" }
        if settleEnd != nil { return "script settling" }
        let done = Interval(milliseconds: (scheduler.now - startedAt).milliseconds / 1000 * 1000)
        return "script \(done.milliseconds == 0 ? "0s" : done.description)/\(scenario.duration)"
    }

    /// Final foreground and settle (SPEC §9): from here on, "lost" is well defined.
    private func endScript() {
        world.traffic.stopsAt = scriptEnd
        if !world.os.foreground {
            driver.noteWorldChange("final foreground")
            world.os.moveToForeground()
        }
        driver.noteWorldChange("script ended; settling for \(scenario.settle)")
        settleEnd = scriptEnd + scenario.settle
    }

    /// Applies one directive now: a scenario line, or a key of the TUI.
    public func apply(_ d: Directive) {
        driver.noteWorldChange(d.summary)
        switch d {
        case .foreground: world.os.moveToForeground()
        case .background: world.os.moveToBackground()
        case .pushDrop(let p): world.push.dropPercent = p
        case .pushDelay(let i): world.push.extraDelay = i
        case .pushDown: world.push.down = true
        case .pushUp:
            world.push.down = false
            world.push.dropPercent = 0
            world.push.extraDelay = .zero
        case .realtimeDown: world.node.down = true
        case .realtimeUp:
            world.node.down = false
            world.node.flakyPercent = 0
        case .realtimeStale: world.node.makeStale()
        case .realtimeFlaky(let p): world.node.flakyPercent = p
        case .indexerDown: world.indexer.down = true
        case .indexerUp: world.indexer.down = false
        case .indexerLatency(let i): world.indexer.latency = i.milliseconds > 0 ? i : nil
        case .tokenExpire: world.push.expireToken()
        case .tokenInvalidate: world.push.invalidateToken()
        case .mode(let m): driver.setMode(m)
        case .send(let h, let text):
            if let c = world.contact(handle: h) { driver.send(to: c.address, text: text) }
        case .receive(let h, let text):
            if let c = world.contact(handle: h) { world.deliverIncoming(from: c, kind: .contextual, body: text) }
        case .contact(let h, let name):
            let isNew = world.contact(handle: h) == nil
            let c = world.addContact(handle: h, displayName: name)
            var clientSide = driver.contact(c.address) ?? c
            clientSide.displayName = name
            driver.upsertContact(clientSide)
            if isNew { world.deliverIncoming(from: c, kind: .handshake, body: "handshake from \(name)") }
        case .mute(let h):
            world.setMuted(handle: h, true)
            if let c = world.contact(handle: h) { driver.setMuted(c.address, true) }
        case .unmute(let h):
            world.setMuted(handle: h, false)
            if let c = world.contact(handle: h) { driver.setMuted(c.address, false) }
        case .sync: driver.syncNow()
        case .quit: quitRequested = true
        }
    }

    /// The decision log keeps decisions; status and contact updates are for views.
    private func record(_ e: TimedEvent) {
        if e.event.isDecision { log.append(e) }
    }

    /// The event log, one line per event.
    public var logLines: [String] { log.map(\.line) }
}
