import Directives
import SyncCore
import SyncEngine

/// The app on the user's device, the same whether its world is simulated or a server's: the
/// engine's runner on its store, the phone's OS, the one stream of events (the engine's, and
/// the session's own lines), the decision log, and truth beside belief. A directive of the app
/// (a lifecycle move, a send, a mute, a read, …) is applied here, once; a session applies the
/// world's half itself and tells this app what its world's faults are.
public final class ClientApp {
    public private(set) var driver: SyncDriver
    public let os: DeviceOS
    public let scheduler: Scheduler
    private var listeners: [(TimedEvent) -> Void] = []

    /// Every decision and every line of the session, in order, while `keepsLog`.
    public private(set) var log: [TimedEvent] = []
    /// Whether `log` grows. A run whose log nobody reads (`simulate` without `--events`; a
    /// screen, whose log pane keeps its own last lines) does not keep it.
    public var keepsLog = true {
        didSet { if !keepsLog { log = [] } }
    }
    /// When push became unreliable, each time: what the measures need of the log.
    public private(set) var becameUnreliable: [Instant] = []

    /// The world's faults, as its session last told them.
    public private(set) var faults = WorldFaults.none
    /// Every change of the world's faults, with its instant (a run's timeline draws them).
    public private(set) var faultHistory: [(at: Instant, faults: WorldFaults)] = []
    /// How long the engine took to believe each fault of the world (docs/simulate.md): the
    /// one instance, for the run's measures and the screen's truth beside belief.
    public private(set) var beliefLag: BeliefLag
    /// Whether `faults` is the world's whole truth, so a screen may set it beside what the
    /// engine believes (the embedded world: yes; a server's client with the operator's token).
    public var knowsTruth: Bool {
        didSet { if knowsTruth != oldValue { tellTruth() } }
    }
    /// Told when what a screen shows of the world's truth changes (its faults, the kinds the
    /// engine does not believe yet); nothing is computed while nobody listens.
    public var onTruthChanged: ((WorldTruth) -> Void)? {
        didSet { toldTruth = nil; tellTruth() }
    }
    private var toldTruth: WorldTruth?

    /// Whether the app reaches its world: always, the embedded one; a server may be gone, or
    /// no longer know the user. Told when it changes (`onLinkChanged`).
    public private(set) var link = ServerLink.reached
    public var onLinkChanged: ((ServerLink) -> Void)? {
        didSet { onLinkChanged?(link) }
    }

    /// The session's world is reached again, gone, or no longer knows the user: said once in
    /// the log; a world that cannot be seen has no faults to show (they come back with it).
    public func linkChanged(_ now: ServerLink) {
        guard now != link else { return }
        link = now
        switch now {
        case .reached: note("the server answers again")
        case .unreachable: note("server unreachable: its faults are not known meanwhile; the app goes on and tries again")
        case .forgotten(let words): note(words)
        }
        if now != .reached { faultsChanged(.none) }
        onLinkChanged?(now)
    }

    /// Every directive as it is applied, with its instant (a recorder writes them down).
    public var onApply: ((Directive, Instant) -> Void)?
    /// A conversation opened by a directive (a played `open NAME`): a screen shows it.
    public var onOpen: ((Address) -> Void)?
    /// A `quit` directive came.
    public private(set) var quitRequested = false
    /// The run ends here (`stop`): no final foreground, no settle.
    public private(set) var stopRequested = false

    public init(driver: SyncDriver, os: DeviceOS, knowsTruth: Bool) {
        self.driver = driver
        self.os = os
        self.scheduler = driver.scheduler
        self.knowsTruth = knowsTruth
        self.beliefLag = BeliefLag(grace: driver.settings.pushGrace)
        driver.subscribe { [weak self] in self?.heard($0) }
    }

    /// A new engine on the same store (the app process restarted); listeners stay.
    public func replace(_ fresh: SyncDriver) {
        driver = fresh
        fresh.subscribe { [weak self] in self?.heard($0) }
    }

    /// Receive every event from now on: the engine's (its status as it is now first) and the
    /// session's own lines.
    public func subscribe(_ listener: @escaping (TimedEvent) -> Void) {
        listeners.append(listener)
        listener(TimedEvent(at: scheduler.now, event: .status(driver.engine.status)))
    }

    private func heard(_ e: TimedEvent) { publish(e) }

    /// One line of the session's own (a directive applied, the world's news) in the log, at
    /// the clock's now: `world: …`.
    public func note(_ line: String) {
        publish(TimedEvent(at: scheduler.now, event: .world(line)))
    }

    private func publish(_ e: TimedEvent) {
        if keepsLog, e.event.isDecision { log.append(e) }
        observe(e)
        for l in listeners { l(e) }
    }

    private func observe(_ e: TimedEvent) {
        if case .pushState(_, .unreliable, _) = e.event { becameUnreliable.append(e.at) }
        beliefLag.observe(e)
        if onTruthChanged != nil { tellTruth() }
    }

    /// The world's faults changed (the session heard it from its world).
    public func faultsChanged(_ now: WorldFaults) {
        guard now != faults else { return }
        faults = now
        faultHistory.append((scheduler.now, now))
        beliefLag.faultsChanged(now, at: scheduler.now)
        tellTruth()
    }

    private func tellTruth() {
        guard let onTruthChanged else { return }
        let truth = knowsTruth ? beliefLag.truth(faults) : WorldTruth(faults: faults, known: false)
        guard truth != toldTruth else { return }
        toldTruth = truth
        onTruthChanged(truth)
    }

    /// Applies the app's half of a directive, naming contacts through `contact`; false for a
    /// directive of the world (a fault, a contact's message, adding a contact).
    public func apply(_ d: Directive, contact: (String) -> Contact?) -> Bool {
        switch d {
        case .foreground: os.moveToForeground()
        case .background: os.moveToBackground()
        case .mode(let m): driver.setMode(m)
        case .preview(let p): driver.setPreview(p)
        case .send(let h, let text):
            if let c = contact(h) { driver.send(to: c.address, text: text) }
        case .mute(let h):
            if let c = contact(h) { driver.setMuted(c.address, true) }
        case .unmute(let h):
            if let c = contact(h) { driver.setMuted(c.address, false) }
        case .sync: driver.syncNow()
        case .open(let h):
            if let c = contact(h) {
                driver.viewing(c.address)
                driver.markRead(c.address)
                onOpen?(c.address)
            }
        case .retry: driver.handle(.retrySends)
        case .quit: quitRequested = true
        case .stop:
            stopRequested = true
            quitRequested = true
        case .fault, .receive, .contact, .add:
            return false
        }
        return true
    }

    /// What a session does with every directive before its halves act: the recorder hears it,
    /// and the log gets its one line (reading a conversation, the end of a recording and what
    /// the engine logs itself — a mode, a preview, a mute — say nothing here).
    public func applying(_ d: Directive) {
        onApply?(d, scheduler.now)
        switch d {
        case .open, .stop: break
        case _ where d.engineLogsIt: break
        default: note(d.summary)
        }
    }
}

/// How the app reaches its world.
public enum ServerLink: Equatable, Sendable {
    case reached
    /// A server that cannot be reached (gone, or the network between).
    case unreachable
    /// A server that no longer knows the user (restarted without its data): what to do, in words.
    case forgotten(String)
}

/// What a screen shows of the world's truth: its faults, and, when the truth is known here,
/// what each broken channel is in the world's words and since when the engine has not believed it.
public struct WorldTruth: Equatable, Sendable {
    public var faults: WorldFaults
    /// Whether the world's whole truth is known here (the embedded world; a server's client
    /// with the operator's token): without it, nothing is set beside the engine's beliefs.
    public var known: Bool
    /// Per kind of channel the world has broken: the world's words for it (`push drop 100%`).
    public var broken: [BeliefLag.Kind: String] = [:]
    /// Per kind the engine does not believe broken yet: since when they have differed.
    public var unnoticed: [BeliefLag.Kind: Instant] = [:]

    /// What the engine has not noticed yet, in `BeliefLag.Kind` order: the world's words for it
    /// and since when.
    public var disagreements: [(kind: BeliefLag.Kind, fault: String, since: Instant)] {
        BeliefLag.Kind.allCases.compactMap { k in unnoticed[k].map { (k, broken[k] ?? k.rawValue, $0) } }
    }

    public init(faults: WorldFaults = .none, known: Bool = true, broken: [BeliefLag.Kind: String] = [:], unnoticed: [BeliefLag.Kind: Instant] = [:]) {
        self.faults = faults
        self.known = known
        self.broken = broken
        self.unnoticed = unnoticed
    }
}
