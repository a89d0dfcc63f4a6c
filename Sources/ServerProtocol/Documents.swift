import Foundation
import SyncCore
import SyncEngine
import Wire

// The JSON documents of `synchat server`'s HTTP routes, written by one side and read by the
// other with the same code. Messages travel as the engine's own `MessageDocument`.

/// A contact as `Route.world` lists it: `{"handle", "address", "displayName", "person"}`
/// (`person`: 1 for another user of the server, 0 for a simulated contact).
public enum ContactDocument {
    public static func encode(_ c: Contact, person: Bool = true) -> JSONValue {
        .object([("handle", .string(c.handle)), ("address", .string(c.address.value)), ("displayName", .string(c.displayName)),
                 ("person", .int(person ? 1 : 0))])
    }

    /// The contacts of a list, or nil when one of them is not a contact document.
    public static func decode(_ list: [WireValue]) -> [Contact]? {
        var out: [Contact] = []
        for c in list {
            guard let handle = c["handle"]?.string, let address = c["address"]?.string, let name = c["displayName"]?.string else { return nil }
            out.append(Contact(address: Address(address), handle: handle, displayName: name))
        }
        return out
    }

    /// The addresses of a list marked `person`.
    public static func people(_ list: [WireValue]) -> Set<Address> {
        Set(list.compactMap { c in
            guard c["person"]?.int64 == 1, let a = c["address"]?.string else { return nil }
            return Address(a)
        })
    }
}

/// What a client needs to run on the server's world: `{"clock", "speed", "contacts"}`.
public struct WorldDocument: Equatable, Sendable {
    public var clock: Instant
    public var speed: Double
    public var contacts: [Contact]
    /// The contacts who are other users of the server.
    public var people: Set<Address>

    /// The members of the document, with `contacts` already encoded (a server of 1 000 users
    /// copies each person's document, written once, rather than encode it again).
    public static func members(clock: Instant, speed: Double, contacts: [JSONValue]) -> [(String, JSONValue)] {
        [("clock", .int(clock.milliseconds)), ("speed", .string(speed.formatted(.number.grouping(.never)))), ("contacts", .array(contacts))]
    }

    /// The speeds a client runs a world at: a server's `--speed` is held to the same.
    public static let speeds: ClosedRange<Double> = 0.001...10_000
    /// The clocks a client runs a world at: from its start to 100 years on (a clock near
    /// `Int64.max` would overflow at its first step).
    public static let clocks: ClosedRange<Int64> = 0...(100 * 365 * 86_400_000)

    public static func decode(_ root: WireValue) -> WorldDocument? {
        try? decoding(root)
    }

    /// The document, or why it is not one a client can run (a speed of `inf` or `1e300`, a
    /// clock past 100 years): refused in words, never a world that traps at its first step.
    public static func decoding(_ root: WireValue) throws(RouteError) -> WorldDocument {
        if root["clock"] != nil, root["clock"]?.int64 == nil {
            throw RouteError("the server's clock is not a whole number of ms this client can run (from 0 to 100 years)")
        }
        guard let clock = root["clock"]?.int64, let speedText = root["speed"]?.string, let speed = Double(speedText),
              let list = root["contacts"]?.array, let contacts = ContactDocument.decode(list) else {
            throw RouteError("the server's world is not a synchat server's (clock, speed, contacts)")
        }
        guard speed.isFinite, speeds.contains(speed) else {
            throw RouteError("the server's clock runs at x\(UntrustedText.visible(String(speedText.prefix(24)))), which this client cannot run (from x\(speeds.lowerBound) to x\(Int(speeds.upperBound)))")
        }
        guard clocks.contains(clock) else {
            throw RouteError("the server's clock is at \(clock) ms, which this client cannot run (from 0 to 100 years)")
        }
        return WorldDocument(clock: Instant(milliseconds: clock), speed: speed, contacts: contacts, people: ContactDocument.people(list))
    }
}

/// `POST Route.join`: `{"user", "invite"?, "protocol"?}`; a rejoin also shows its secret as
/// `Authorization: Bearer SECRET`.
public struct JoinRequest: Equatable, Sendable {
    public var user: String
    public var invite: String?
    /// The protocol the client speaks; a request without it (curl, a script) is taken as the server's.
    public var protocolVersion: Int?

    public init(user: String, invite: String?, protocolVersion: Int? = ProtocolVersion.current) {
        self.user = user
        self.invite = invite
        self.protocolVersion = protocolVersion
    }

    public var document: JSONValue {
        var fields: [(String, JSONValue)] = [("user", .string(user))]
        if let invite { fields.append(("invite", .string(invite))) }
        if let protocolVersion { fields.append(("protocol", .int(Int64(protocolVersion)))) }
        return .object(fields)
    }

    public static func decode(_ body: Data) throws(RouteError) -> JoinRequest {
        let object = try Body.object(body, "join")
        guard let user = object["user"]?.string else { throw RouteError("join: missing \"user\" (a name)") }
        var version: Int?
        // `"protocol": null` is no version, as a missing one is: taken as the server's.
        if let raw = object["protocol"], raw != .null {
            guard let v = raw.int64, let n = Int(exactly: v) else { throw RouteError("join: \"protocol\" is a whole number (this server speaks \(ProtocolVersion.current))") }
            version = n
        }
        return JoinRequest(user: user, invite: object["invite"]?.string, protocolVersion: version)
    }
}

/// What a join answers: `{"user", "address", "secret"? (a first join only), "protocol",
/// "clock", "speed", "contacts"}`.
public struct JoinAnswer: Equatable, Sendable {
    public var user: String
    public var address: Address
    /// Given once, at the first join.
    public var secret: String?
    public var protocolVersion: Int
    public var world: WorldDocument

    public static func members(user: String, address: Address, secret: String?, world: [(String, JSONValue)]) -> [(String, JSONValue)] {
        var fields: [(String, JSONValue)] = [("user", .string(user)), ("address", .string(address.value))]
        if let secret { fields.append(("secret", .string(secret))) }
        fields.append(("protocol", .int(Int64(ProtocolVersion.current))))
        return fields + world
    }

    /// The answer, or why it is not one of a synchat server's (a server of another protocol
    /// is said so, in one line).
    public static func decode(_ body: Data) throws(RouteError) -> JoinAnswer {
        guard let root = WireValue.parse(body) else { throw RouteError("the answer to join is not a synchat server's") }
        let version = root["protocol"]?.int64.flatMap { Int(exactly: $0) } ?? 0
        guard version == ProtocolVersion.current else { throw RouteError(ProtocolVersion.mismatch(server: version)) }
        guard let user = root["user"]?.string, let address = root["address"]?.string else {
            throw RouteError("the answer to join is not a synchat server's")
        }
        let world = try WorldDocument.decoding(root)
        return JoinAnswer(user: user, address: Address(address), secret: root["secret"]?.string, protocolVersion: version, world: world)
    }
}

/// `POST Route.publish`: `{"to", "body"}`.
public struct PublishRequest: Equatable, Sendable {
    public var to: Address
    public var body: String
    /// The client's own name for this message (its outbox entry), the same at every retry: a
    /// publish the client gave up on that the network still delivered, and its retry, are one
    /// message (the server answers the second with the first's publication). Optional: a
    /// request without one is published as it comes.
    public var key: String?
    /// The longest key, in bytes.
    public static let keyLimit = 100

    public init(to: Address, body: String, key: String? = nil) {
        self.to = to
        self.body = body
        self.key = key
    }

    public var document: JSONValue {
        .object([("to", .string(to.value)), ("body", .string(body))] + (key.map { [("key", .string($0))] } ?? []))
    }

    public static func decode(_ body: Data) throws(RouteError) -> PublishRequest {
        let object = try Body.object(body, "publish")
        guard let to = object["to"]?.string, !to.isEmpty else { throw RouteError("publish: missing \"to\" (an address)") }
        guard let text = object["body"]?.string else { throw RouteError("publish: missing \"body\" (the text)") }
        var key: String?
        if let value = object["key"] {
            guard let k = value.string, !k.isEmpty, k.utf8.count <= keyLimit else {
                throw RouteError("publish: \"key\" is a string of 1 to \(keyLimit) bytes, the client's name for the message")
            }
            key = k
        }
        return PublishRequest(to: Address(to), body: text, key: key)
    }
}

/// What publishing answers: `{"message": MessageDocument, "spent": [txId…]}`.
public enum PublicationDocument {
    public static func encode(_ p: Publication, me: Address) -> JSONValue {
        .object([("message", MessageDocument.encode(p.message, me: me)), ("spent", .array(p.spent.map { .string($0) }))])
    }

    public static func decode(_ body: Data, me: Address) throws -> Publication {
        guard let root = WireValue.parse(body), let doc = root["message"], let list = root["spent"]?.array,
              case let spent = list.compactMap(\.string), spent.count == list.count else { throw WireError("publish: not a publication") }
        return Publication(message: try MessageDocument.decode(doc, me: me, now: nil, at: "publish"), spent: spent)
    }
}

/// Every refusal: `{"error": "one line"}`.
public enum ErrorDocument {
    public static func encode(_ message: String) -> JSONValue { .object([("error", .string(message))]) }

    /// The line of an error answer, or its status when it is not one.
    public static func message(_ body: Data, status: Int) -> String {
        WireValue.parse(body)?["error"]?.string ?? "HTTP \(status)"
    }
}

/// The body of a POST as a JSON object, or a clear error.
enum Body {
    static func object(_ body: Data, _ what: String) throws(RouteError) -> [String: WireValue] {
        guard let object = WireValue.parse(body)?.object else { throw RouteError("\(what): the body must be a JSON object") }
        return object
    }
}

/// The protocol client and server speak: said by the client in a header on every request and
/// socket opening (`Synchat-Protocol: 2`) and in its join's body, and by the server in the
/// join's answer. Each side that finds another version says so in one plain line.
public enum ProtocolVersion {
    public static let current = 2

    /// The header every request and WebSocket opening carries, and its value.
    public static let header = "Synchat-Protocol"
    public static var headerValue: String { String(current) }

    /// What a request's header says of its version.
    public enum Said: Equatable, Sendable {
        /// No header.
        case none
        /// The header more than once.
        case repeated
        /// A value that is not a whole number.
        case notAVersion(String)
        /// Another version than the server's.
        case other(Int)
        /// The server's own.
        case same
    }

    /// What the values of a request's `header` (each one given, in order) say.
    public static func judge(_ values: [String]) -> Said {
        guard let value = values.first else { return .none }
        guard values.count == 1 else { return .repeated }
        let text = value.trimmingCharacters(in: .whitespaces)
        guard let n = Int(text), String(n) == text else { return .notAVersion(text) }
        return n == current ? .same : .other(n)
    }

    /// The line a server refuses a request with for what its header says, or nil when it
    /// speaks the server's version: the version to run, and how to say it.
    public static func refusal(header values: [String]) -> String? {
        let send = "send the header \(header): \(current) (synchat does; from curl add -H '\(header): \(current)')"
        switch judge(values) {
        case .same: return nil
        case .none: return "this server speaks synchat protocol \(current); the request says none: \(send)"
        case .repeated: return "this server speaks synchat protocol \(current); the request says \(header) \(values.count) times: \(send), once"
        case .notAVersion(let text):
            return "this server speaks synchat protocol \(current); the request's \(header) is \"\(UntrustedText.visible(String(text.prefix(24))))\", not a version: \(send)"
        case .other(let n): return otherVersion(n)
        }
    }

    /// What a client says of a server of another protocol (0: one that does not say).
    public static func mismatch(server: Int) -> String {
        server == 0
            ? "the server does not say which protocol it speaks (an older synchat server?); this synchat speaks protocol \(current): use the same version on both sides"
            : "the server speaks protocol \(server), this synchat speaks \(current): use the same version on both sides"
    }

    /// What a server says of a join whose body says another protocol (the header agreeing).
    public static func refusal(client: Int) -> String { "join: " + otherVersion(client) }

    /// The words for a client of version `n`, whether its header or its join's body says it.
    static func otherVersion(_ n: Int) -> String {
        "this server speaks synchat protocol \(current), the client speaks \(n): use the same version of synchat on both sides"
    }
}

/// A world's faults as the wire carries them, read as fields: `{"push": {"down", "drop",
/// "delay"}, "realtime": {"down", "stale", "flaky"}, "indexer": {"down", "latency"}, "token",
/// "network"}` (shares in percent, durations in milliseconds, `latency` and `token` null when
/// none, `network` `"on"` or `"off"`).
public enum FaultsDocument {
    public static func encode(_ f: WorldFaults) -> JSONValue {
        .object([
            ("push", .object([("down", .raw(f.push.down ? "true" : "false")), ("drop", .raw(WorldFaults.percent(f.push.dropPercent))),
                              ("delay", .int(f.push.extraDelay.milliseconds))])),
            ("realtime", .object([("down", .raw(f.realtime.down ? "true" : "false")), ("stale", .raw(f.realtime.stale ? "true" : "false")),
                                  ("flaky", .raw(WorldFaults.percent(f.realtime.flakyPercent)))])),
            ("indexer", .object([("down", .raw(f.indexer.down ? "true" : "false")), ("latency", f.indexer.latency.map { .int($0.milliseconds) } ?? .null)])),
            ("token", f.token.map { .string($0.rawValue) } ?? .null),
            ("network", .string(f.networkOff ? "off" : "on")),
        ])
    }

    /// The faults a document holds, or nil when it is not one.
    public static func decode(_ v: WireValue) -> WorldFaults? {
        func percent(_ x: WireValue?) -> Double? { x?.double.flatMap { (0...100).contains($0) ? $0 : nil } }
        func millis(_ x: WireValue?) -> Interval? { x?.int64.flatMap { $0 >= 0 ? Interval(milliseconds: $0) : nil } }
        guard let push = v["push"], let realtime = v["realtime"], let indexer = v["indexer"],
              let pushDown = push["down"]?.bool, let drop = percent(push["drop"]), let delay = millis(push["delay"]),
              let rtDown = realtime["down"]?.bool, let stale = realtime["stale"]?.bool, let flaky = percent(realtime["flaky"]),
              let ixDown = indexer["down"]?.bool, let network = v["network"]?.string, network == "on" || network == "off" else { return nil }
        var latency: Interval?
        if let raw = indexer["latency"], raw != .null {
            guard let l = millis(raw) else { return nil }
            latency = l
        }
        var token: WorldFaults.Token?
        if let raw = v["token"], raw != .null {
            guard let t = raw.string.flatMap(WorldFaults.Token.init(rawValue:)) else { return nil }
            token = t
        }
        return WorldFaults(push: .init(down: pushDown, dropPercent: drop, extraDelay: delay),
                           realtime: .init(down: rtDown, stale: stale, flakyPercent: flaky),
                           indexer: .init(down: ixDown, latency: latency), token: token, networkOff: network == "off")
    }
}
