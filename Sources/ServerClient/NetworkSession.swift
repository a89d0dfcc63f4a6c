import ClientRuntime
import Directives
import Foundation
import SyncCore
import SyncEngine

/// The live TUI on `synchat server`: the same app (`ClientApp`: engine, runner, OS, log) as the
/// embedded world, on `NetworkWorld`'s sockets. The app's half of a directive acts as it does
/// at home; the world's half (a fault, a contact's message) goes to the server for this user
/// (`POST /v1/fault`), and the server tells the client its world's faults each time they
/// change. The clock is the server's.
public final class NetworkSession: LiveSession {
    public let world: NetworkWorld
    public let app: ClientApp
    public let storage: ChatStorage
    public var driver: SyncDriver { app.driver }

    public var wakeDescriptor: Int32? { world.io.wakeDescriptor }
    public var fixedSpeed: Double? { world.speed }
    private let adminToken: String?
    /// Whether the last read of the server's truth answered (a wrong token, or a server gone:
    /// no); nil before the first.
    private var truthRead: Bool?

    /// With the operator's token the session reads the server's truth of this user's world
    /// each wall second, and a screen may set it beside the engine's beliefs; without it, the
    /// screen shows the faults the server tells and says nothing of the truth.
    public init(world: NetworkWorld, storage: ChatStorage, policy: SyncPolicy, mode: NotificationMode, adminToken: String? = nil) {
        self.world = world
        self.storage = storage
        self.adminToken = adminToken
        let driver = SyncDriver(policy: policy, me: world.me, scheduler: world.scheduler, storage: storage, ports: world.ports, initialMode: mode)
        app = ClientApp(driver: driver, os: world.os, knowsTruth: false)
        world.notice = { [app] line in app.note(line) }
        // A directive of the app sent through the server (synchat fault --user NAME …): done
        // here as its key would do it.
        world.onDirective = { [weak self] sent in
            guard let self else { return }
            switch sent {
            case .success(let d):
                guard d.aServerMayAsk else {
                    app.note("the server asked for \(UntrustedText.visible(String(d.scenarioText.prefix(80)))): refused: \(Directive.whatAServerMayAsk)")
                    return
                }
                apply(d)
            case .failure(let refused):
                app.note("the server sent a directive that does not read: \(UntrustedText.visible(String(refused.message.prefix(120))))")
            }
        }
        world.onFaults = { [app] in app.faultsChanged($0) }
        world.onLink = { [app] in app.linkChanged($0) }
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
        world.truthFaults(adminToken: adminToken) { [weak self] faults in
            guard let self else { return }
            if (faults != nil) != truthRead {
                truthRead = faults != nil
                if faults == nil { app.note("the server's truth cannot be read (is the admin token right?): the truth beside belief says nothing") }
            }
            if let faults { app.faultsChanged(faults) }
            app.knowsTruth = faults != nil
            world.scheduler.schedule(after: .milliseconds(Int64(1000 * world.speed)), "read the server's truth") { [weak self] in
                self?.readTruth()
            }
        }
    }

    public func apply(_ d: Directive) {
        app.applying(d)
        if app.apply(d, contact: contact) { return }
        switch d {
        case .contact(let h, let name):
            // The user renames a contact in the app; the server's world has no say in it.
            if let c = contact(h) { driver.rename(c.address, to: name) }
        case .add:
            app.note("add: a handshake from a new address is not served by synchat server")
        default:
            // A fault of the network, or a contact's message: the server's world changes, and
            // tells this client its faults.
            world.fault(d) { [app] result in
                if case .failure(let refused) = result { app.note("server refused \(d.scenarioText): \(refused.message)") }
            }
        }
    }

    /// Fault keys waiting for the step before them, oldest first.
    private var toggles: [FaultToggle] = []
    /// The faults the server confirmed in answer to the last step, while keys wait.
    private var confirmed: WorldFaults?
    private var stepping = false

    /// A fault key steps from the faults the server confirmed: a key pressed while a step is
    /// on its way waits for its answer (`p p p` quickly gives drop → delay → ok, not the same
    /// step three times).
    public func toggle(_ t: FaultToggle) {
        toggles.append(t)
        if !stepping { nextToggle() }
    }

    private func nextToggle() {
        guard !toggles.isEmpty else {
            stepping = false
            confirmed = nil
            return
        }
        stepping = true
        let t = toggles.removeFirst()
        send(t.directives(from: confirmed ?? app.faults))
    }

    /// A step's directives, one after another, each once the last is answered.
    private func send(_ directives: [Directive]) {
        guard let d = directives.first else { return nextToggle() }
        app.applying(d)
        world.fault(d) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let faults):
                if let faults {
                    confirmed = faults
                    app.faultsChanged(faults)
                }
                send(Array(directives.dropFirst()))
            case .failure(let refused):
                app.note("server refused \(d.scenarioText): \(refused.message)" + (toggles.isEmpty ? "" : "; \(toggles.count) fault keys after it dropped"))
                toggles.removeAll()
                stepping = false
                confirmed = nil
            }
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
