import AppActions
import Foundation
import SyncCore
import SyncEngine

/// The live TUI on `synchat server`: the same engine and runner as the embedded world, on
/// `NetworkWorld`'s sockets. Keys act as they do at home: `b`/`f` move the app (the client's
/// OS); a fault key sends its directive to the server for this user (`POST /v1/fault`), and
/// the status bar shows it once the server took it. The clock is the server's.
public final class NetworkSession: LiveSession, DriverBackedSession {
    public let world: NetworkWorld
    public let driver: SyncDriver
    public let storage: ChatStorage
    public private(set) var log: [TimedEvent] = []
    /// Whether `log` grows (the TUI stops it once its log pane has what came before).
    public var keepsLog = true {
        didSet { if !keepsLog { log = [] } }
    }
    public var onOpen: ((Address) -> Void)?
    public private(set) var quitRequested = false
    /// Faults this client asked the server for, by what they break (the server's truth is
    /// the operator's; a client knows what it asked).
    private var faults: [String: String] = [:] {
        didSet { if faults != oldValue { onFaultsChanged?(activeFaults) } }
    }
    public var onFaultsChanged: (([String]) -> Void)?

    public var scheduler: Scheduler { world.scheduler }
    public var wakeDescriptor: Int32? { world.io.wakeDescriptor }
    public var fixedSpeed: Double? { world.speed }
    /// With the operator's token the session reads the server's truth of this user's world
    /// (its faults, each wall second) and a screen may set it beside the engine's beliefs;
    /// without it, it knows only the faults it was told of, and says nothing of the truth.
    public var knowsTruth: Bool { truthRead == true }
    private let adminToken: String?
    /// Whether the last read of the server's truth answered (a wrong token, or a server gone:
    /// no); nil before the first.
    private var truthRead: Bool?

    public init(world: NetworkWorld, storage: ChatStorage, policy: SyncPolicy, mode: NotificationMode, adminToken: String? = nil) {
        self.world = world
        self.storage = storage
        self.adminToken = adminToken
        let stored = Set(storage.contacts().map(\.address))
        for c in world.contacts where !stored.contains(c.address) { try? storage.upsertContact(c) }
        driver = SyncDriver(policy: policy, me: world.me, scheduler: world.scheduler, storage: storage, ports: world.ports, initialMode: mode)
        driver.subscribe { [weak self] e in
            guard let self else { return }
            if keepsLog, e.event.isDecision { log.append(e) }
            // A token the server registers again ends the token fault (issue 28 #13: `t`,
            // `b`, `f` left `fault: token expire` on the bar for good), as at home.
            if case .tokenStatus(.active) = e.event { faults["token"] = nil }
        }
        world.contactsChanged = { [weak self] list in
            guard let self else { return }
            for c in list where driver.contact(c.address) == nil { driver.upsertContact(c) }
        }
        world.notice = { [weak self] line in self?.driver.noteWorldChange(line) }
        // A directive of the app sent through the server (synchat fault --user NAME …): done
        // here as its key would do it.
        world.onDirective = { [weak self] line in
            guard let self else { return }
            do {
                apply(try Directive(parsing: line))
            } catch {
                driver.noteWorldChange("the server sent a directive that does not parse: \(UntrustedText.visible(String(line.prefix(80))))")
            }
        }
        // The server says what its world has after any fault, whoever gave it (`synchat fault`,
        // the operator): the bar shows that (issue 28 #13), each word under what it breaks.
        world.onFaults = { [weak self] words in
            guard let self else { return }
            faults = [:]
            for w in words { faults[String(w.split(separator: " ").first ?? "")] = w }
        }
        world.attach(client: driver)
    }

    /// The app is launched and opened.
    public func start() {
        driver.launch()
        world.os.moveToForeground()
        if adminToken != nil { readTruth() }
    }

    /// Reads the server's truth of this user's faults; a wall second after its answer (in the
    /// world's time: `speed` seconds), the next one. Never two at once: a server slow to answer
    /// is not asked again meanwhile.
    private func readTruth() {
        guard let adminToken else { return }
        world.truthFaults(adminToken: adminToken) { [weak self] words in
            guard let self else { return }
            let before = activeFaults
            if (words != nil) != truthRead {
                truthRead = words != nil
                if words == nil { driver.noteWorldChange("the server's truth cannot be read (is the admin token right?): the truth beside belief says nothing") }
            }
            if let words { truthFaults = words }
            if activeFaults != before { onFaultsChanged?(activeFaults) }
            world.scheduler.schedule(after: .milliseconds(Int64(1000 * world.speed)), "read the server's truth") { [weak self] in
                self?.readTruth()
            }
        }
    }

    /// The server's truth of this user's faults, as it says them (several of one service
    /// stay several), while it can be read; nil otherwise.
    private var truthFaults: [String]?

    /// The world's faults: the server's truth when it is read, else those given here or told of
    /// by the server (one word a service).
    public var activeFaults: [String] { truthRead == true ? truthFaults ?? [] : faults.keys.sorted().compactMap { faults[$0] } }

    public func apply(_ d: Directive) {
        // What the engine logs itself (a mode, a mute) is not logged twice.
        switch d {
        case .open, .stop: break
        case _ where d.engineLogsIt: break
        default: driver.noteWorldChange(d.summary)
        }
        switch d {
        case .foreground: world.os.moveToForeground()
        case .background: world.os.moveToBackground()
        case .mode(let m): driver.setMode(m)
        case .send(let h, let text):
            if let c = contact(h) { driver.send(to: c.address, text: text) }
        case .contact(let h, let name):
            if var c = contact(h) { c.displayName = name; driver.upsertContact(c) }
        case .mute(let h):
            if let c = contact(h) { driver.setMuted(c.address, true) }
        case .unmute(let h):
            if let c = contact(h) { driver.setMuted(c.address, false) }
        case .sync: driver.syncNow()
        case .preview(let p): driver.setPreview(p)
        case .open(let h):
            if let c = contact(h) {
                driver.viewing(c.address)
                driver.markRead(c.address)
                onOpen?(c.address)
            }
        case .retry: driver.handle(.retrySends)
        case .quit, .stop: quitRequested = true
        case .add:
            driver.noteWorldChange("add: a handshake from a new address is not served by synchat server")
        default:
            // A fault of the network, or a contact's message: the server's world changes.
            let line = d.scenarioText
            world.fault(line) { [weak self] refused in
                guard let self else { return }
                if let refused { return driver.noteWorldChange("server refused \(line): \(refused)") }
                note(d)
            }
        }
    }

    /// What the status bar shows of a fault the server took.
    private func note(_ d: Directive) {
        switch d {
        case .pushUp: faults["push"] = nil
        case .pushDown, .pushDrop, .pushDelay: faults["push"] = d.summary
        case .realtimeUp: faults["realtime"] = nil
        case .realtimeDown, .realtimeStale, .realtimeFlaky: faults["realtime"] = d.summary
        case .indexerUp: faults["indexer"] = nil
        case .indexerDown, .indexerLatency: faults["indexer"] = d.summary
        // The token's state, as the embedded world's faults say it (`token expired`), not the verb.
        case .tokenExpire: faults["token"] = "token \(TokenStatus.expired.rawValue)"
        case .tokenInvalidate: faults["token"] = "token \(TokenStatus.invalid.rawValue)"
        case .networkOff: faults["network"] = d.summary
        case .networkOn: faults["network"] = nil
        default: break
        }
    }

    private func contact(_ handle: String) -> Contact? {
        driver.contacts.first { $0.handle == handle }
    }

    public func advance(to target: Instant) {
        scheduler.run(until: target)
        while world.io.drain() > 0 { scheduler.run(until: max(target, scheduler.now)) }
    }

    public func checkpoint() {}
}
