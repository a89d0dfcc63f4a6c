import Dispatch
import Foundation
import NIOHTTP1
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
    public private(set) var contacts: [Contact]
    /// The contacts who are other users of the server (not simulated).
    public private(set) var people: Set<Address>
    /// Told when the user's contacts changed (another user joined).
    public var contactsChanged: (([Contact]) -> Void)?
    /// Told of what goes wrong outside the engine's view (the push relay lost, a fault refused).
    public var notice: ((String) -> Void)?
    /// The server answered 401 to this user's secret: it no longer knows the user (restarted
    /// without its data folder). Said once, in words, with what to do (issue 28 #15).
    public private(set) var unknownToServer = false

    var unknownWords: String {
        "the server no longer knows \(user) (it was restarted without its data?): quit, then join again as a new user (another --profile, or --ephemeral)"
    }

    func checkKnown(_ a: NetIO.Answer) {
        guard a.status == 401, !unknownToServer else { return }
        unknownToServer = true
        notice?(unknownWords)
    }
    /// Told of a directive of the app the server passed on (`synchat fault --user NAME background`).
    public var onDirective: ((String) -> Void)?
    /// Told of the faults the user's world has, whenever one was given (the server's truth).
    public var onFaults: (([String]) -> Void)?
    /// Told of each node notification as it reaches the engine: the message, the world's
    /// instant the server sent it, and the clock's instant now (`synchat-bench net`).
    public var onNotified: ((NetworkMessage, _ sentAt: Instant, _ arrivedAt: Instant) -> Void)?
    private weak var app: ClientEndpoint?
    private let anchorWall: UInt64
    private let anchorVirtual: Instant

    /// What joining answered.
    public struct Joined {
        public var user: String
        public var secret: String
        public var isNew: Bool
        public var address: Address
        public var clock: Instant
        public var speed: Double
        public var contacts: [Contact]
        public var people: Set<Address> = []
    }

    public struct Refused: Error, CustomStringConvertible {
        public var description: String
    }

    /// Joins (or rejoins with `secret`) as `user`; waits for the answer.
    /// `invite`: the server's code, which a first join must show (`synchat server` prints it).
    public static func join(_ io: ServerTransport, user: String, secret: String?, invite: String? = nil) throws -> Joined {
        let answer: NetIO.Answer
        var fields: [(String, JSONValue)] = [("user", .string(user))]
        if let invite { fields.append(("invite", .string(invite))) }
        do {
            answer = try io.requestNow(.POST, "/v1/join", body: JSONValue.object(fields).data, token: secret)
        } catch {
            throw Refused(description: "cannot reach synchat server: \(io.words(for: error))")
        }
        guard answer.status == 200 || answer.status == 201 else { throw Refused(description: "server: \(answer.error)") }
        guard let root = WireValue.parse(answer.body),
              let address = root["address"]?.string,
              let clock = root["clock"]?.int64.map({ Instant(milliseconds: $0) }),
              let speed = root["speed"]?.string.flatMap(Double.init), speed > 0,
              let list = root["contacts"]?.array, let contacts = Self.contacts(list) else {
            throw Refused(description: "server: the answer to join is not a synchat server's")
        }
        let given = root["secret"]?.string
        guard let kept = given ?? secret else { throw Refused(description: "server: no secret in the answer to join") }
        return Joined(user: user, secret: kept, isNew: given != nil, address: Address(address), clock: clock, speed: speed, contacts: contacts,
                      people: Self.people(list))
    }

    static func contacts(_ list: [WireValue]) -> [Contact]? {
        var out: [Contact] = []
        for c in list {
            guard let handle = c["handle"]?.string, let address = c["address"]?.string, let name = c["displayName"]?.string else { return nil }
            out.append(Contact(address: Address(address), handle: handle, displayName: name))
        }
        return out
    }

    /// The addresses marked `person` in a list of contacts.
    static func people(_ list: [WireValue]) -> Set<Address> {
        Set(list.compactMap { c in
            guard c["person"]?.int64 == 1, let a = c["address"]?.string else { return nil }
            return Address(a)
        })
    }

    /// `os`: the phone's OS on the client's scheduler.
    public init(io: ServerTransport, joined: Joined, os makeOS: (Scheduler) -> DeviceOS,
                clock: @escaping () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }) {
        self.io = io
        self.clock = clock
        user = joined.user
        secret = joined.secret
        me = joined.address
        speed = joined.speed
        contacts = joined.contacts
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
        openPushRelay()
    }

    /// Asks the server for the user's contacts again.
    public func refreshContacts() {
        io.request(.GET, "/v1/world", token: secret) { [weak self] result in
            guard let self, case .success(let a) = result, a.status == 200,
                  let raw = WireValue.parse(a.body)?["contacts"]?.array, let list = Self.contacts(raw) else { return }
            contacts = list
            people = Self.people(raw)
            contactsChanged?(list)
        }
    }

    /// The faults this user's world has now, as the server's truth says them
    /// (`GET /admin/truth?user=NAME`, with the operator's token); nil when it cannot say.
    public func truthFaults(adminToken: String, reply: @escaping ([String]?) -> Void) {
        let name = user.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? user
        io.request(.GET, "/admin/truth?user=\(name)", body: nil, token: adminToken) { result in
            guard case .success(let a) = result, a.status == 200, let words = WireValue.parse(a.body)?["faults"]?.array else { return reply(nil) }
            reply(words.compactMap(\.string))
        }
    }

    /// Sends a fault directive to the server for this user (`POST /v1/fault`).
    public func fault(_ directive: String, done: ((String?) -> Void)? = nil) {
        io.request(.POST, "/v1/fault", body: Data(directive.utf8), token: secret) { result in
            switch result {
            case .success(let a) where a.status == 200: done?(nil)
            case .success(let a): done?(a.error)
            case .failure(let e): done?(e.message)
            }
        }
    }

    // MARK: - The node

    private final class NodeConnection {
        let id: Int
        var socket: ClientSocket?
        var subscribed = false
        /// The app is listening: false once the OS suspended it (then nothing reaches it).
        var listened = true
        var nextRequest = 1
        var pending: [Int: (Result<WireValue, TransportError>) -> Void] = [:]
        init(id: Int) { self.id = id }
    }

    private var node: NodeConnection?
    private var nextConnection = 0

    /// The OS suspended the app: its sockets are no longer listened to. A connect still in
    /// flight fails, as the embedded node fails one that completes in the background; without
    /// a word its answer was dropped, and the engine said `connecting` for good (issue 28 #13).
    private func stopListening() {
        guard let connection = node else { return }
        let connecting = connection.listened && !connection.subscribed
        connection.listened = false
        guard connecting else { return }  // a live socket dies silently: the engine distrusts it already
        connection.socket?.close()
        scheduler.schedule(after: .zero, "connect refused") { [weak self] in
            self?.app?.realtimeConnectFailed(connection: connection.id, error: "app suspended")
        }
    }

    private func nodeFrame(_ connection: NodeConnection, _ data: Data) {
        guard connection.listened, let app else { return }
        guard let frame = WireValue.parse(data), frame.object != nil else { return }
        if let id = frame["id"]?.int64.map({ Int($0) }), let reply = connection.pending.removeValue(forKey: id) {
            if let error = frame["error"], error.object != nil {
                reply(.failure(TransportError(error["message"]?.string ?? "node error")))
            } else {
                reply(.success(frame["params"] ?? .object([:])))
            }
            return
        }
        guard frame["method"]?.string == "utxosChangedNotification", connection === node,
              let tx = frame["params"]?["transaction"] else { return }
        do {
            let message = try Self.message(tx, me: me, now: scheduler.now)
            if let onNotified, let at = frame["params"]?["at"]?.int64 {
                onNotified(message, Instant(milliseconds: at), virtualNow)
            }
            app.realtimeNotified(connection: connection.id, message: message)
        } catch {
            notice?("node: \(error)")
        }
    }

    private func call(_ connection: NodeConnection, _ method: String, _ params: JSONValue,
                      reply: @escaping (Result<WireValue, TransportError>) -> Void) {
        guard let socket = connection.socket else { return reply(.failure(TransportError("node: not connected"))) }
        let id = connection.nextRequest
        connection.nextRequest += 1
        connection.pending[id] = reply
        socket.send(.object([("id", .int(Int64(id))), ("method", .string(method)), ("params", params)]))
    }

    /// One message document (the node's notification, publishing's answer), read by the
    /// engine's own strict decoder.
    static func message(_ document: WireValue, me: Address, now: Instant?) throws -> NetworkMessage {
        guard document.object != nil, let txId = document["txId"]?.string else { throw WireError("not a message document") }
        let data = JSONValue.object([("messages", .array([document.json])), ("nextPage", .null)]).data
        let page = try IndexerPage.decode(data, for: .messageById(txId), me: me, now: now)
        guard let m = page.messages.first else { throw WireError("no message in the document") }
        return m
    }

    // MARK: - The push relay

    private var pushSocket: ClientSocket?
    private var pushOpen = false
    private var pushQueue: [JSONValue] = []
    private var pushBackoff = Interval.seconds(1)

    private func openPushRelay() {
        pushOpen = false
        pushSocket = io.openSocket("/v1/push", token: secret, opened: { [weak self] socket in
            guard let self else { return }
            pushOpen = true
            pushBackoff = .seconds(1)
            for frame in pushQueue { socket.send(frame) }
            pushQueue.removeAll()
        }, text: { [weak self] data in
            self?.pushFrame(data)
        }, closed: { [weak self] code, reason in
            guard let self else { return }
            pushOpen = false
            pushSocket = nil
            notice?("push relay closed (\(code) \(reason)); again in \(pushBackoff)")
            // Reconnect with backoff, in wall time (the world's clock may run fast).
            let wall = Double(pushBackoff.milliseconds)
            pushBackoff = .milliseconds(min(30_000, pushBackoff.milliseconds * 2))
            scheduler.schedule(after: .milliseconds(Int64(wall * speed)), "push relay reconnect") { [weak self] in self?.openPushRelay() }
        })
    }

    private func pushFrame(_ data: Data) {
        guard let app, let frame = WireValue.parse(data), frame.object != nil else { return }
        let params = frame["params"] ?? .object([:])
        switch frame["method"]?.string {
        case "tokenStatus":
            if let raw = params["status"]?.string, let status = TokenStatus(rawValue: raw) { app.tokenStatusChanged(status) }
        case "push":
            guard let payload = params["payload"]?.string else { return }
            if os.foreground { app.pushDelivered(payload: Data(payload.utf8)) } else { app.notificationExtensionReceived(payload: Data(payload.utf8)) }
        case "contactsChanged":
            // Another user joined: the server says who (one entry, not every user again).
            if let joined = params["joined"], let list = Self.contacts([joined]), let c = list.first {
                guard c.address != me, !contacts.contains(where: { $0.address == c.address }) else { return }
                contacts.append(c)
                people.insert(c.address)
                contactsChanged?(contacts)
            } else {
                refreshContacts()
            }
        case "directive":
            if let line = params["line"]?.string { onDirective?(line) }
        case "faults":
            if let words = params["active"]?.array?.compactMap(\.string) { onFaults?(words) }
        default:
            break  // answers to our requests
        }
    }

    private func sendToRelay(_ method: String, _ params: [(String, JSONValue)] = []) {
        let frame = JSONValue.object([("id", .int(0)), ("method", .string(method)), ("params", .object(params))])
        if pushOpen, let pushSocket { pushSocket.send(frame) } else { pushQueue.append(frame) }
    }
}

extension NetworkWorld: IndexerPort {
    public func send(_ call: IndexerCall, reply: @escaping (Result<Data, TransportError>) -> Void) {
        func q(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? s }
        let path: String
        switch call {
        case .handshakes(let d, let since): path = "/v1/indexer/handshakes?direction=\(d == .incoming ? "in" : "out")&since=\(since.milliseconds)"
        case .contextual(let a, let d, let since):
            path = "/v1/indexer/contextual?address=\(q(a.value))&direction=\(d == .incoming ? "in" : "out")&since=\(since.milliseconds)"
        case .payments(let since, let page): path = "/v1/indexer/payments?since=\(since.milliseconds)&page=\(page)"
        case .messageById(let id): path = "/v1/indexer/messages/\(q(id))"
        case .tip: path = "/v1/indexer/tip"
        }
        io.request(.GET, path, token: secret) { [weak self] result in
            switch result {
            case .success(let a) where a.status == 200: reply(.success(a.body))
            case .success(let a):
                self?.checkKnown(a)
                reply(.failure(TransportError(a.status == 401 ? self?.unknownWords ?? a.error : a.error)))
            case .failure(let e): reply(.failure(e))
            }
        }
    }
}

extension NetworkWorld: RealtimePort {
    public func connect(subscribing address: Address, forced: Bool) -> Int {
        nextConnection += 1
        let connection = NodeConnection(id: nextConnection)
        // A new connection replaces the old socket, forced or not.
        node?.socket?.close()
        node?.listened = false
        node = connection
        guard os.foreground else {
            scheduler.schedule(after: .zero, "connect refused") { [weak self] in
                self?.app?.realtimeConnectFailed(connection: connection.id, error: "app suspended")
            }
            return connection.id
        }
        connection.socket = io.openSocket("/v1/node", token: secret, opened: { [weak self] _ in
            guard let self else { return }
            call(connection, "subscribeUtxosChanged", .object([("addresses", .array([.string(me.value)]))])) { [weak self] result in
                guard let self, connection.listened else { return }
                switch result {
                case .success where !os.foreground:
                    // The app went to the background while the socket opened: the OS would not
                    // let it connect, as the embedded node says (issue 28 #13: `b`, `f`, `b`
                    // quickly left `connecting` on the bar for minutes).
                    connection.listened = false
                    app?.realtimeConnectFailed(connection: connection.id, error: "app suspended")
                    connection.socket?.close()
                case .success:
                    connection.subscribed = true
                    app?.realtimeConnected(connection: connection.id)
                case .failure(let e):
                    // Said once: the socket's end that follows is not news to the app.
                    connection.listened = false
                    app?.realtimeConnectFailed(connection: connection.id, error: e.message)
                    connection.socket?.close()
                }
            }
        }, text: { [weak self] data in
            self?.nodeFrame(connection, data)
        }, closed: { [weak self] code, reason in
            guard let self else { return }
            for (_, reply) in connection.pending { reply(.failure(TransportError("node: socket closed"))) }
            connection.pending.removeAll()
            connection.socket = nil
            guard connection.listened else { return }  // the app was not listening: it learns nothing
            connection.listened = false
            var why = reason.isEmpty ? "socket closed (\(code))" : reason
            if reason.hasSuffix("HTTP 401") {
                checkKnown(NetIO.Answer(status: 401, body: Data()))
                why = unknownWords
            }
            if connection.subscribed {
                app?.realtimeDisconnected(connection: connection.id, error: why)
            } else {
                app?.realtimeConnectFailed(connection: connection.id, error: why)
            }
        })
        return connection.id
    }

    public func requestUtxoSet(for address: Address, since: Instant?, reply: @escaping (Result<[String], TransportError>) -> Void) {
        guard let connection = node, connection.subscribed, connection.listened else {
            scheduler.schedule(after: .zero, "utxo set refused") { reply(.failure(TransportError("node: not connected"))) }
            return
        }
        var params: [(String, JSONValue)] = [("addresses", .array([.string(me.value)]))]
        if let since { params.append(("since", .int(since.milliseconds))) }
        call(connection, "getUtxosByAddresses", .object(params)) { result in
            reply(result.flatMap { params in
                guard let list = params["entries"]?.array else { return .failure(TransportError("node: a UTXO set without entries")) }
                let entries = list.compactMap(\.string)
                guard entries.count == list.count else { return .failure(TransportError("node: a UTXO set entry that is not a txId")) }
                return .success(entries)
            })
        }
    }

    public func ping(connection id: Int, answered: @escaping () -> Void) {
        guard let connection = node, connection.id == id, connection.subscribed else { return }  // never answered
        call(connection, "ping", .object([])) { result in
            if case .success = result, connection.listened { answered() }
        }
    }
}

extension NetworkWorld: PushPort {
    public func registerToken() { sendToRelay("registerToken") }
    public func unregisterToken() { sendToRelay("unregisterToken") }
    public func setMuted(_ contact: Address, _ muted: Bool) {
        sendToRelay("setMuted", [("contact", .string(contact.value)), ("muted", .int(muted ? 1 : 0))])
    }
}

extension NetworkWorld: PublishPort {
    public func publish(from me: Address, to contact: Address, body: String, reply: @escaping (Result<Publication, TransportError>) -> Void) {
        let request = JSONValue.object([("to", .string(contact.value)), ("body", .string(body))]).data
        io.request(.POST, "/v1/publish", body: request, token: secret) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let a) where a.status == 200:
                do {
                    guard let root = WireValue.parse(a.body), let doc = root["message"], let list = root["spent"]?.array,
                          case let spent = list.compactMap(\.string), spent.count == list.count else { throw WireError("publish: not a publication") }
                    reply(.success(Publication(message: try Self.message(doc, me: self.me, now: nil), spent: spent)))
                } catch {
                    reply(.failure(TransportError("\(error)")))
                }
            case .success(let a):
                checkKnown(a)
                reply(.failure(TransportError(a.status == 401 ? unknownWords : a.error)))
            case .failure(let e): reply(.failure(e))
            }
        }
    }
}
