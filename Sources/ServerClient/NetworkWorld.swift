import ClientRuntime
import Directives
import Dispatch
import Foundation
import NIOHTTP1
import ServerProtocol
import SyncCore
import SyncEngine
import Wire

/// The engine's ports on `synchat server`'s sockets: the same `SyncDriver` and engine as the
/// embedded world, with the indexer over HTTP, the node and the push relay as WebSockets,
/// and publishing as a POST. The phone's OS stays on the client (a `DeviceOS` port: the executable gives `SimOperatingSystem`, with
/// its rules for background refreshes): backgrounding closes nothing — the OS just stops
/// listening to the app's node socket, as iOS suspends an app, and the push relay's socket
/// (the OS's own) keeps delivering, to the notification extension. Everything runs on the
/// owner's thread: network outcomes arrive through `io.drain()`, each at the clock's now.
public final class NetworkWorld {
    public let io: ServerTransport
    /// The monotonic clock, in nanoseconds: the system's, or a test's (virtual time).
    private let clock: () -> UInt64
    public let user: String
    public let secret: String
    public let me: Address
    public let speed: Double
    public let scheduler: Scheduler
    /// The phone's OS: a port (the simulated one, `SimOperatingSystem`, is the executable's to give).
    public let os: DeviceOS
    /// The contacts the server named at join, for the app when it is attached (it learns
    /// the later ones as the server names them).
    private let joinedContacts: [Contact]
    /// The contacts who are other users of the server (not simulated).
    public internal(set) var people: Set<Address>
    /// Told of what goes wrong outside the engine's view (the push relay lost, a fault refused).
    public var notice: ((String) -> Void)?
    /// Whether the server is reached, gone, or no longer knows the user; told on each change.
    public internal(set) var link = ServerLink.reached {
        didSet { if link != oldValue { onLink?(link) } }
    }
    public var onLink: ((ServerLink) -> Void)?
    /// The server answered 401 to this user's secret: it no longer knows the user (restarted
    /// without its data folder).
    public var unknownToServer: Bool { if case .forgotten = link { true } else { false } }

    var unknownWords: String {
        "the server no longer knows \(user) (it was restarted without its data?): quit, then join again as a new user (another --profile, or --ephemeral)"
    }

    /// An answer of 401: the server no longer knows the user, for good. Any other answer: the
    /// server is heard.
    func checkKnown(_ a: NetIO.Answer) {
        guard a.status == 401 else { return serverHeard() }
        link = .forgotten(unknownWords)
    }
    /// Told of a directive of the app the server passed on (`synchat fault --user NAME background`).
    public var onDirective: ((Result<Directive, RouteError>) -> Void)?
    /// Told of the faults the user's world has, each time the server says them.
    public var onFaults: ((WorldFaults) -> Void)?
    /// Told of each node notification as it reaches the engine: the message, the world's
    /// instant the server sent it, and the clock's instant now (`synchat-bench net`).
    public var onNotified: ((NetworkMessage, _ sentAt: Instant, _ arrivedAt: Instant) -> Void)?
    weak var app: ClientEndpoint?
    private let anchorWall: UInt64
    private let anchorVirtual: Instant
    /// The node subscription's socket, if one is open or opening.
    var node: NodeConnection?
    var nextConnection = 0
    /// The push relay's socket, and what waits for it to open.
    var pushSocket: ClientSocket?
    var pushOpen = false
    /// A `GET /v1/world` in flight; another asked for meanwhile; a retry waiting.
    var contactsAsking = false, contactsAskAgain = false, contactsRetryPending = false
    var pushQueue: [JSONValue] = []
    var pushBackoff = Interval.seconds(1)
    /// Counts the relay's openings: a scheduled reconnect runs only if none came since.
    var pushReopen = 0

    /// `os`: the phone's OS on the client's scheduler.
    public init(io: ServerTransport, joined: Joined, os makeOS: (Scheduler) -> DeviceOS,
                clock: @escaping () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }) {
        self.io = io
        self.clock = clock
        user = joined.user
        secret = joined.secret
        me = joined.address
        speed = joined.speed
        joinedContacts = joined.contacts
        people = joined.people
        scheduler = Scheduler(start: joined.clock)
        anchorVirtual = joined.clock
        anchorWall = clock()
        os = makeOS(scheduler)
        os.suspended = { [weak self] in self?.stopListening() }
    }

    /// The server's clock now, as taken at join.
    public var virtualNow: Instant {
        anchorVirtual + .milliseconds(Int64(Double(clock() - anchorWall) / 1_000_000 * speed))
    }

    /// Runs what is due by now, then what the network brought (each at the clock's now).
    public func step() {
        scheduler.run(until: virtualNow)
        while io.drain() > 0 { scheduler.run(until: virtualNow) }
    }

    /// Wall milliseconds until the scheduler has something due (at most `cap`).
    public func wallMillisecondsToNextEvent(cap: Int32 = 1000) -> Int32 {
        guard let next = scheduler.nextEventTime else { return cap }
        let virtual = max(0, (next - virtualNow).milliseconds)
        return Int32(min(Double(cap), max(1, (Double(virtual) / speed).rounded(.up))))
    }

    public var ports: WorldPorts {
        WorldPorts(indexer: self, realtime: self, push: self, system: os, network: self)
    }

    /// Connects the app, opens the push relay (the OS's socket) and brings the app to the front.
    public func attach(client: ClientEndpoint) {
        app = client
        os.app = client
        client.contactsKnown(joinedContacts)
        openPushRelay()
    }

    /// Asks the server for the user's contacts again. Not answered, it asks again 5 s (of the
    /// wall clock) later while the push relay is open — a client that may have missed a
    /// `contactsChanged` never waits for contacts forever; a relay that opens again asks anyway.
    ///
    /// One at a time: asked again while one is in flight (a burst of `contactsChanged`), it is
    /// asked once more when that one ends, and a failure waits for one retry, not one each
    /// (a server repeating the frame made a request a frame, thousands of descriptors at once).
    public func refreshContacts() {
        guard !contactsAsking else { contactsAskAgain = true; return }
        contactsAsking = true
        io.request(.GET, Route.world, token: secret) { [weak self] result in
            guard let self else { return }
            contactsAsking = false
            defer {
                if contactsAskAgain {
                    contactsAskAgain = false
                    refreshContacts()
                }
            }
            guard case .success(let a) = result, a.status == 200,
                  let root = WireValue.parse(a.body), let document = WorldDocument.decode(root) else {
                if case .forgotten = link { return }  // nothing to ask a server that no longer knows the user
                guard !contactsRetryPending else { return }
                contactsRetryPending = true
                scheduler.schedule(after: .milliseconds(Int64(5_000 * speed)), "ask for the contacts again") { [weak self] in
                    guard let self else { return }
                    contactsRetryPending = false
                    if pushOpen { refreshContacts() }
                }
                return
            }
            people = document.people
            app?.contactsKnown(document.contacts.filter { $0.address != me })
        }
    }

    /// The faults this user's world has now, as the server's truth says them
    /// (`GET /admin/truth?user=NAME`, with the operator's token); nil when it cannot say.
    public func truthFaults(adminToken: String, reply: @escaping (WorldFaults?) -> Void) {
        io.request(.GET, Route.adminTruth(user: user), body: nil, token: adminToken) { result in
            guard case .success(let a) = result, a.status == 200, let raw = WireValue.parse(a.body)?["faults"],
                  let faults = FaultsDocument.decode(raw) else { return reply(nil) }
            reply(faults)
        }
    }

    /// Sends a fault directive to the server for this user (`POST /v1/fault`): `done` gets the
    /// user's world's faults as the server confirmed them, or why it was refused.
    public func fault(_ directive: Directive, done: ((Result<WorldFaults?, TransportError>) -> Void)? = nil) {
        io.request(.POST, Route.fault, body: DirectiveDocument.encode(directive).data, token: secret) { result in
            switch result {
            case .success(let a) where a.status == 200:
                done?(.success(WireValue.parse(a.body)?["faults"].flatMap { FaultsDocument.decode($0) }))
            case .success(let a): done?(.failure(TransportError(a.error)))
            case .failure(let e): done?(.failure(e))
            }
        }
    }
}
