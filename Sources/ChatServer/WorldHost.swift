import Directives
import Dispatch
import Foundation
import ServerProtocol
import SimulatedWorld
import SyncCore
import SyncEngine
import Wire

/// The world of `synchat server`: one clock (scaled wall time) and many users. Each user has
/// the embedded world's pieces of its own — an indexer, a node, a push service, simulated
/// contacts writing to it — on the one shared scheduler, and every other user is one of its
/// contacts: a message one user publishes to another lands in the other's world as the same
/// transaction. Confined to the server's one event loop: every call comes from it.
public final class WorldHost {
    public let scheduler: Scheduler
    public let speed: Double
    public let seed: UInt64
    public let contactsPerUser: Int
    public let trafficPerHour: Double
    /// Users in the order they joined.
    public private(set) var users: [User] = []
    private var byName: [String: User] = [:]
    private var byAddress: [Address: User] = [:]
    /// The users as every world sees them: one list, one entry a join.
    public let people = People()
    /// Users by the hash of their secret (the server keeps no secret).
    private var bySecretHash: [String: User] = [:]

    /// One user of the server: its world, its secret, and the sockets its client holds.
    public final class User {
        public let name: String
        /// `SecretHash.of(secret)`: the secret itself is given once, at the first join, and kept nowhere.
        public let secretHash: String
        public let world: SimulatedWorld
        public let link: UserLink
        public var address: Address { world.me }
        /// The wall clock (Unix ms) when the user last made a request or held a socket: its
        /// contacts stop writing once it has been away `WorldHost.awayAfterMs` (`pauseAway`).
        var lastSeenWallMs: Int64 = 0
        /// The world's writes into the server's store (the world holds it weakly).
        var persistence: WorldPersistence? {
            didSet { world.persistence = persistence }
        }

        init(name: String, secretHash: String, world: SimulatedWorld) {
            self.name = name
            self.secretHash = secretHash
            self.world = world
            link = UserLink()
            world.attach(client: link)
            world.onFaultsChanged = { [link] in link.faults = $0 }
        }

        /// The user's last publications by the client's key (`PublishRequest.key`), oldest
        /// first: a retry of a publish the client gave up on, which the network still
        /// delivered, is answered with the first's publication, not published again.
        fileprivate(set) var published: [(key: String, publication: Publication)] = []
        /// How many are kept: more than an outbox retries at once, few enough that a user
        /// publishing 16 KiB lines holds at most half a MiB here.
        static let keptPublications = 32

        /// The publication already made for `key`, if it was for the same recipient and text (a
        /// key that names another message is a new message: nothing is dropped on a clash).
        func publication(key: String, to: Address, body: String) -> Publication? {
            published.last { $0.key == key && $0.publication.message.conversation == to && $0.publication.message.body == body }?.publication
        }

        func remember(key: String, _ p: Publication) {
            published.append((key, p))
            if published.count > Self.keptPublications { published.removeFirst(published.count - Self.keptPublications) }
        }
    }

    /// Where the world is kept (`--data`), if anywhere.
    public let store: ServerStore?
    /// The world's instant at a wall-clock instant (Unix ms): the clock is wall time × speed
    /// from there, across restarts.
    private let anchor: ServerStore.Anchor
    /// The wall clock, Unix milliseconds: the system's, or a test's (virtual time).
    public let wallClock: () -> Int64

    /// A new world, or with `store` holding one, the same world where it stopped: its users,
    /// secrets, contacts and messages, its clock going on as if the server had never stopped.
    public init(seed: UInt64, contacts: Int, trafficPerHour: Double, speed: Double, store: ServerStore? = nil,
                wallClock: @escaping () -> Int64 = WorldHost.systemWallUnixMs) throws {
        self.seed = seed
        self.wallClock = wallClock
        self.speed = speed
        self.contactsPerUser = contacts
        self.trafficPerHour = trafficPerHour
        self.store = store
        let wall = wallClock()
        var start = Instant.zero
        if let saved = try store?.anchor() {
            start = saved.virtual + .milliseconds(Int64(Double(max(0, wall - saved.wallUnixMs)) * saved.speed))
        }
        anchor = ServerStore.Anchor(virtual: start, wallUnixMs: wall, speed: speed)
        try store?.saveAnchor(anchor)
        scheduler = Scheduler(start: start)
        for saved in try store?.users() ?? [] { restore(saved) }
    }

    /// The system's wall clock, Unix milliseconds: the one place the server reads it.
    public static func systemWallUnixMs() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    /// The world's instant that corresponds to the wall clock now.
    public var virtualNow: Instant {
        anchor.virtual + .milliseconds(Int64(Double(max(0, wallClock() - anchor.wallUnixMs)) * speed))
    }

    /// A user as the store kept it: its world restored (every message indexed, the wallet's
    /// outputs, the token), its random streams reseeded by the clock so that new traffic is new.
    private func restore(_ saved: ServerStore.SavedUser) {
        let clock = scheduler.now
        let streamSeed = saved.seed ^ (UInt64(bitPattern: clock.milliseconds) &* 0x9E37_79B9_7F4A_7C15)
        let world = SimulatedWorld(seed: streamSeed, me: saved.address, scheduler: scheduler)
        world.people = people
        let publications = world.restore(SavedWorld(seed: saved.seed, clock: clock, tokenStatus: saved.token, contacts: saved.contacts, ledger: saved.ledger),
                                         noting: Set(saved.publishKeys.map(\.txId)))
        let user = User(name: saved.name, secretHash: saved.secretHash, world: world)
        // The keys outlive a restart: a publish the server made durable and died before
        // answering, retried once it is back, is the same message, not a second.
        user.published = saved.publishKeys.compactMap { k in publications[k.txId].map { (k.key, $0) } }
        user.persistence = store?.persistence(of: saved.name)
        // A relay that opens again is told the token as the store kept it: a client whose
        // token the store lost registers it again, rather than trusting a push that never comes.
        user.link.restoredToken(world.push.tokenStatus)
        start(user)
    }

    /// A user's world starts running on the server: its tokens kept, its publications routed,
    /// its traffic flowing, and the user admitted.
    private func start(_ user: User) {
        let world = user.world
        keepTokens(of: user)
        world.onPublished = { [weak self] message in self?.route(message, from: user) }
        // The server's side of the phone is always listening: the client's own OS decides
        // whether the app or its extension takes a push, and refuses to connect in background.
        world.os.moveToForeground()
        world.traffic.perHour = trafficPerHour
        world.traffic.start()
        admit(user)
    }

    /// A user joins the server's people and its lookups.
    private func admit(_ user: User) {
        user.lastSeenWallMs = wallClock()
        users.append(user)
        byName[user.name] = user
        byAddress[user.address] = user
        bySecretHash[user.secretHash] = user
        people.add(Contact(address: user.address, handle: user.name, displayName: user.name))
    }

    /// A user's token is written as it changes, before the client is told: a restart never
    /// forgets a registration it confirmed. Left to the checkpoint, a registration made in the
    /// seconds before a `kill -9` would be lost, and the client would wait for pushes the
    /// restarted world never sends.
    private func keepTokens(of user: User) {
        guard let store else { return }
        let name = user.name
        user.link.tokenKept = { status in
            do { try store.saveTokens([(name, status)]) } catch {
                FileHandle.standardError.write(Data("synchat server: cannot write \(name)'s token: \(error)\n".utf8))
            }
        }
    }

    /// Writes what is not written as it happens (the tokens, again): those that changed since
    /// the last checkpoint (all of them every five seconds, at 10 000 users, kept the disk busy
    /// for nothing).
    public func checkpoint() throws {
        guard let store else { return }
        let changed = users.compactMap { u -> (String, TokenStatus)? in
            let status = u.world.push.tokenStatus
            return checkpointed[u.name] == status ? nil : (u.name, status)
        }
        guard !changed.isEmpty else { return }
        try store.saveTokens(changed)
        for (name, status) in changed { checkpointed[name] = status }
    }
    private var checkpointed: [String: TokenStatus] = [:]

    /// Runs everything due by now (replies included, which answer their requests).
    public func advance() {
        scheduler.run(until: virtualNow)
    }

    /// Runs at most `limit` of what is due by now; true when the world has caught up.
    public func advance(atMost limit: Int) -> Bool {
        scheduler.run(until: virtualNow, atMost: limit)
    }

    /// What a real server runs of its world between two looks at its sockets.
    public static let eventsPerTurn = 2_000

    /// Wall milliseconds until the world has something due (at most a second).
    public var wallMillisecondsToNextEvent: Int64 {
        guard let next = scheduler.nextEventTime else { return 1000 }
        let virtual = max(0, (next - virtualNow).milliseconds)
        return min(1000, max(1, Int64((Double(virtual) / speed).rounded(.up))))
    }

    // MARK: - Users


    public enum JoinError: Error, Equatable {
        case badName
        case nameOfAContact
        case wrongSecret
        case full
        case storeFailed
    }

    /// Users one server holds at most (`--max-users`).
    public var maxUsers = ServerLimits.defaults.maxUsers

    /// How long a user may go without a request or a socket before its simulated contacts stop
    /// writing (`ServerLimits.awayAfter`, wall milliseconds).
    public var awayAfterMs: Int64 = ServerLimits.defaults.awayAfter.milliseconds

    /// The user of that name, created at its first join (a new secret, returned once and
    /// kept nowhere: the server stores its hash); a later join must show that secret.
    public func join(name: String, secret: String?) throws(JoinError) -> (user: User, isNew: Bool, secret: String?) {
        guard UserName.isValid(name) else { throw .badName }
        if let user = byName[name] {
            guard let secret, Self.constantTimeEqual(SecretHash.of(secret), user.secretHash) else { throw .wrongSecret }
            return (user, false, nil)
        }
        guard !SimulatedWorld.defaultHandles(contactsPerUser).contains(name) else { throw .nameOfAContact }
        guard users.count < maxUsers else { throw .full }
        advance()
        let worldSeed = seed ^ StableHash.fnv1a(name)
        let world = SimulatedWorld(seed: worldSeed, me: SimulatedWorld.address(for: "user/" + name), scheduler: scheduler)
        let newSecret = WorldServer.newToken()
        let user = User(name: name, secretHash: SecretHash.of(newSecret), world: world)
        world.people = people
        for handle in SimulatedWorld.defaultHandles(contactsPerUser) {
            world.addContact(handle: handle, displayName: SimulatedWorld.displayName(for: handle))
        }
        // One transaction: the user and its simulated contacts. The other users are the
        // shared `people`: nobody's contacts are rewritten, nothing else is written.
        if let store {
            do { try store.addUser(name: name, secretHash: user.secretHash, address: user.address, seed: worldSeed, joined: scheduler.now,
                                   contacts: world.contacts) } catch {
                throw .storeFailed
            }
            user.persistence = store.persistence(of: name)
        }
        start(user)
        // The users whose client holds its push relay now hear of the new one (the others
        // get every user when their relay connects).
        let joined = Contact(address: user.address, handle: user.name, displayName: user.name)
        for other in users where other !== user { other.link.contactsChanged?(joined) }
        return (user, true, newSecret)
    }

    public func user(named name: String) -> User? { byName[name] }
    /// Whether `name` is the handle of a simulated contact (no user may take it).
    public func isSimulatedHandle(_ name: String) -> Bool { SimulatedWorld.defaultHandles(contactsPerUser).contains(name) }
    public func user(address: Address) -> User? { byAddress[address] }
    public func user(secret: String) -> User? { bySecretHash[SecretHash.of(secret)] }

    /// A message one user published to another lands in the other's world too, as the same
    /// transaction at the same block time.
    private func route(_ message: NetworkMessage, from sender: User) {
        guard let recipient = byAddress[message.conversation] else { return }
        recipient.world.deliverIncoming(Self.copy(of: message, from: sender))
    }

    /// The recipient's side of a message one user published to another.
    static func copy(of message: NetworkMessage, from sender: User) -> NetworkMessage {
        NetworkMessage(txId: message.txId, conversation: sender.address, direction: .incoming,
                       kind: message.kind, body: message.body, blockTime: message.blockTime)
    }

    /// Why a publish was not confirmed: the disk did not take it.
    public struct NotDurable: Error, CustomStringConvertible {
        public var description: String
    }

    /// Publishes for `user`, durable first: with a data folder, the message and
    /// its copy for a recipient who is another user are written in one transaction before the
    /// world sees them, after whatever the disk could not take before. A full disk fails it
    /// (`NotDurable`) with nothing sent, so the client keeps it in its outbox and tries again.
    /// `key`: the client's name for the message (`PublishRequest.key`), kept with it.
    public func publish(for user: User, to contact: Address, body: String, key: String? = nil) -> Result<Publication, TransportError> {
        guard let store else { return user.world.publish(from: user.address, to: contact, body: body) }
        let recipient = byAddress[contact]
        return user.world.publish(from: user.address, to: contact, body: body) { message in
            do {
                try user.world.retryPersistence()
                try recipient?.world.retryPersistence()
                var rows = [(user: user.name, message: message)]
                if let recipient { rows.append((recipient.name, Self.copy(of: message, from: user))) }
                try store.saveMessages(rows, key: key)
            } catch {
                throw NotDurable(description: "the server cannot write its data directory (\(error)); not sent, try again")
            }
        }
    }


    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    // MARK: - Faults and truth

    /// Plays a scenario's timed lines (its `steps`: an instant from the script's start, a
    /// directive, the line number) on this world's clock, from now: each fault at its instant
    /// for every user (then), each `receive HANDLE "TEXT"` for every user who has that
    /// simulated contact. Returns the lines it does not play: directives of the app (a
    /// client's keys), which a server has no app to apply to. The caller reads the file
    /// (ScenarioParser): the server imports no simulation.
    @discardableResult
    public func play(_ steps: [(at: Instant, directive: Directive, line: Int)]) -> [Int] {
        let start = scheduler.now
        var skipped: [Int] = []
        for step in steps {
            switch step.directive.target {
            case .world:  // the network's faults and the contacts' lines: the server's to play (Directive.target)
                let directive = step.directive
                scheduler.schedule(at: start + (step.at - .zero), "scenario line \(step.line)") { [weak self] in
                    guard let self else { return }
                    if case .receive(let handle, _) = directive {
                        for u in users where u.world.contact(handle: handle).map({ !u.world.isPerson($0.address) }) == true {
                            _ = apply(directive, to: u)
                        }
                    } else {
                        _ = apply(directive, to: nil)
                    }
                    played.append((scheduler.now, directive.scenarioText))
                }
            default:
                skipped.append(step.line)
            }
        }
        return skipped
    }

    /// The scenario lines played so far, with their instants (in the truth).
    public private(set) var played: [(at: Instant, line: String)] = []

    /// Applies a fault directive to one user's world, or to every user's. Nil when it
    /// applied; otherwise why not.
    public func apply(_ d: Directive, to user: User?) -> String? {
        return applied(d, to: user)  // each world tells its client of its faults itself
    }

    private func applied(_ d: Directive, to user: User?) -> String? {
        switch d {
        case .receive(let handle, let text):
            guard let user else { return "receive: name the user (?user=NAME)" }
            guard let c = user.world.contact(handle: handle), !user.world.isPerson(c.address) else {
                return "receive \(handle): no simulated contact of \(user.name) has that handle"
            }
            user.world.deliverIncoming(from: c, kind: .contextual, body: text)
            return nil
        default:
            if let change = d.worldFault {
                for u in user.map({ [$0] }) ?? users { u.world.apply(change) }
                return nil
            }
            // A directive of the app a server may pass on (background, sync…): the user's client does it,
            // told through the push relay its OS holds.
            guard d.aServerMayAsk else { return "\(d.scenarioText): not passed on: \(Directive.whatAServerMayAsk)" }
            guard let user else { return "\(d.scenarioText): a directive of the app: name the user whose client should do it (?user=NAME)" }
            guard let socket = user.link.pushSocket else {
                return "\(d.scenarioText): a directive of the app, and no client of \(user.name) is connected to do it"
            }
            socket.directive(d)
            return nil
        }
    }
}
