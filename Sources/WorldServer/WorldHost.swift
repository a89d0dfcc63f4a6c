import Dispatch
import Simulation
import SimWorld
import SyncCore
import SyncEngine

/// The simulated world of `synchat server`, paced by scaled wall time: the same world as the
/// embedded one (contacts, traffic, the indexer with its latency and faults), behind real
/// protocols. Confined to the server's one event loop: every call comes from it.
public final class WorldHost {
    public let world: SimulatedWorld
    public let scheduler: Scheduler
    public let speed: Double
    public let seed: UInt64
    private let anchorWall: UInt64

    public init(seed: UInt64, contacts: Int, trafficPerHour: Double, speed: Double) {
        self.seed = seed
        self.speed = speed
        scheduler = Scheduler(start: .zero)
        world = SimulatedWorld(seed: seed, scheduler: scheduler)
        for handle in AppSession.defaultHandles(contacts) {
            world.addContact(handle: handle, displayName: AppSession.displayName(for: handle))
        }
        world.traffic.perHour = trafficPerHour
        world.traffic.start()
        anchorWall = DispatchTime.now().uptimeNanoseconds
    }

    /// The world's instant that corresponds to the wall clock now.
    public var virtualNow: Instant {
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - anchorWall) / 1_000_000
        return .zero + .milliseconds(Int64(elapsed * speed))
    }

    /// Runs everything due by now (replies included, which answer their requests).
    public func advance() {
        scheduler.run(until: virtualNow)
    }

    /// Wall milliseconds until the world has something due (at most a second).
    public var wallMillisecondsToNextEvent: Int64 {
        guard let next = scheduler.nextEventTime else { return 1000 }
        let virtual = max(0, (next - virtualNow).milliseconds)
        return min(1000, max(1, Int64((Double(virtual) / speed).rounded(.up))))
    }

    /// Applies a fault directive of the served protocols (the indexer, for now). Nil when it
    /// applied; otherwise why not.
    public func apply(_ d: Directive) -> String? {
        switch d {
        case .indexerDown: world.indexer.down = true
        case .indexerUp: world.indexer.down = false
        case .indexerLatency(let i): world.indexer.latency = i.milliseconds == 0 ? nil : i
        default: return "\(d.scenarioText): not served yet (the server serves the indexer; the node, push and publishing come next)"
        }
        return nil
    }

    /// Ground truth (`GET /admin/truth`): the ledger, requests by kind, pushes sent and
    /// dropped; what a test needs to count lost and duplicated messages as `simulate` does.
    public var truth: JSONValue {
        .object([
            ("clock", .int(virtualNow.milliseconds)),
            ("seed", .int(Int64(bitPattern: seed))),
            ("me", .string(world.me.value)),
            ("contacts", .array(world.contacts.map { c in .object([("handle", .string(c.handle)), ("address", .string(c.address.value))]) })),
            ("ledger", .array(world.ledger.map { m in
                .object([("txId", .string(m.txId)), ("conversation", .string(m.conversation.value)),
                         ("direction", .string(m.direction.rawValue)), ("kind", .string(m.kind.rawValue)),
                         ("blockTime", .int(m.blockTime.milliseconds))])
            })),
            ("requests", .object(world.indexer.requestsByKind.sorted { $0.key < $1.key }.map { ($0.key, .int(Int64($0.value))) })),
            ("pushes", .object([("sent", .int(Int64(world.push.sent))), ("dropped", .int(Int64(world.push.dropped)))])),
        ])
    }
}
