import Foundation
import SyncCore
import SyncEngine

/// Headers of the protocol's own.
public enum ProtocolHeader {
    /// On an answer the server wrote without reading the request (a connection refused or shed
    /// by a per-address limit): nothing of it was done, and it may be sent again whatever it
    /// is, after `Retry-After` seconds (HTTP/2's REFUSED_STREAM, which HTTP/1.1 lacks).
    public static let requestNotRead = "Synchat-Request-Not-Read"
}

/// The paths of `synchat server` (docs/server.md), for the server that routes them and the
/// clients that ask them: one list, so the two cannot drift.
public enum Route {
    /// `POST`: a first join or a rejoin (`JoinRequest`, answered by a `JoinAnswer`).
    /// Every path of the protocol's own, under this prefix; the operator's under `admin`.
    public static let protocolPrefix = "/v1/"
    public static let adminPrefix = "/admin/"
    public static let join = "/v1/join"
    /// `GET`: the clock, the speed and the user's contacts (`WorldDocument`).
    public static let world = "/v1/world"
    /// `POST`: a message to a contact (`PublishRequest`, answered by a `PublicationDocument`).
    public static let publish = "/v1/publish"
    /// `POST`: a scenario directive for the user's own world.
    public static let fault = "/v1/fault"
    /// The indexer's calls, under this prefix (`IndexerRoute`).
    public static let indexer = "/v1/indexer/"
    /// WebSockets: the node (`NodeMethod`) and the push relay (`RelayMethod`).
    public static let node = "/v1/node"
    public static let push = "/v1/push"
    public static let sockets: Set<String> = [node, push]
    /// The operator's (`Authorization: Bearer ADMIN-TOKEN`): a world's faults, and giving one.
    public static let adminTruth = "/admin/truth"
    public static let adminFault = "/admin/fault"

    /// `/admin/truth?user=NAME`: one user's world.
    public static func adminTruth(user: String) -> String { adminTruth + "?user=" + percentEncoded(user) }

    /// `/admin/fault`, for every user, or `?user=NAME` for one.
    public static func adminFault(user: String?) -> String { adminFault + (user.map { "?user=" + percentEncoded($0) } ?? "") }

    /// Everything but ASCII letters and digits as `%XX` of its UTF-8 bytes.
    public static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = "0123456789ABCDEF".utf8.map { Character(Unicode.Scalar($0)) }
                out += "%\(hex[Int(byte >> 4)])\(hex[Int(byte & 0xF)])"
            }
        }
        return out
    }
}

/// A request the server does not take: the HTTP status and one line saying why.
public struct RouteError: Error, Equatable, Sendable, CustomStringConvertible {
    public var status: Int
    public var message: String
    public init(status: Int = 400, _ message: String) {
        self.status = status
        self.message = message
    }
    public var description: String { message }
}

/// The indexer's calls over HTTP, both ways: the path and query a client asks
/// (`path(for:)`), and the call the server reads from them (`call(path:query:)`).
public enum IndexerRoute {
    /// An instant before the world began (a reorg buffer or a look's window reaching back past a
    /// young server's first minutes) is sent as its beginning, 0: the protocol's instants are
    /// not negative, and nothing lands before the world is made.
    public static func path(for call: IndexerCall) -> String {
        func direction(_ d: Direction) -> String { d == .incoming ? "in" : "out" }
        func ms(_ t: Instant) -> Int64 { max(0, t.milliseconds) }
        switch call {
        case .handshakes(let d, let since, let page):
            return Route.indexer + "handshakes?direction=\(direction(d))&since=\(ms(since))" + (page > 0 ? "&page=\(page)" : "")
        case .contextual(let a, let d, let since, let page):
            return Route.indexer + "contextual?address=\(Route.percentEncoded(a.value))&direction=\(direction(d))&since=\(ms(since))"
                + (page > 0 ? "&page=\(page)" : "")
        case .payments(let since, let page): return Route.indexer + "payments?since=\(ms(since))&page=\(page)"
        case .messageById(let id): return Route.indexer + "messages/\(Route.percentEncoded(id))"
        case .tip: return Route.indexer + "tip"
        case .tipCounting(let after, let through): return Route.indexer + "tip?after=\(ms(after))&through=\(ms(through))"
        }
    }

    /// The call a path under `Route.indexer` (as it was sent, percent-encoded) and its decoded
    /// parameters ask for; a clear error naming the parameter otherwise (404 for a path that is
    /// no call).
    public static func call(path: String, query: [String: String]) throws(RouteError) -> IndexerCall {
        func direction() throws(RouteError) -> Direction {
            switch query["direction"] {
            case "in": return .incoming
            case "out": return .outgoing
            case nil: throw RouteError("missing parameter direction (in or out)")
            case let other?: throw RouteError("direction must be in or out, not \"\(other.prefix(40))\"")
            }
        }
        func number(_ name: String, default value: Int64? = nil) throws(RouteError) -> Int64 {
            guard let text = query[name] else {
                if let value { return value }
                throw RouteError("missing parameter \(name) (milliseconds, a non-negative integer)")
            }
            guard let n = Int64(text), n >= 0 else { throw RouteError("\(name) must be a non-negative integer, not \"\(text.prefix(40))\"") }
            return n
        }
        func page() throws(RouteError) -> Int {
            let page = try number("page", default: 0)
            guard page <= 1_000_000 else { throw RouteError("page is too large") }
            return Int(page)
        }
        func only(_ allowed: Set<String>) throws(RouteError) {
            if let extra = query.keys.sorted().first(where: { !allowed.contains($0) }) {
                throw RouteError("unknown parameter \(extra.prefix(40)) (expected: \(allowed.sorted().joined(separator: ", ")))")
            }
        }
        guard path.hasPrefix(Route.indexer) else { throw RouteError(status: 404, "no such endpoint: \(path.prefix(100))") }
        let rest = String(path.dropFirst(Route.indexer.count))
        switch rest {
        case "handshakes":
            try only(["direction", "since", "page"])
            return .handshakes(try direction(), since: Instant(milliseconds: try number("since", default: 0)), page: try page())
        case "contextual":
            try only(["address", "direction", "since", "page"])
            guard let a = query["address"], !a.isEmpty else { throw RouteError("missing parameter address") }
            return .contextual(Address(a), try direction(), since: Instant(milliseconds: try number("since", default: 0)), page: try page())
        case "payments":
            try only(["since", "page"])
            return .payments(since: Instant(milliseconds: try number("since", default: 0)), page: try page())
        case "tip":
            try only(["after", "through"])
            guard query["after"] != nil || query["through"] != nil else { return .tip }
            let after = try number("after"), through = try number("through")
            guard after <= through else { throw RouteError("after (\(after)) is later than through (\(through))") }
            return .tipCounting(after: Instant(milliseconds: after), through: Instant(milliseconds: through))
        default:
            // The id is one segment of the path as it was sent: a `/` in it came as `%2F`.
            if rest.hasPrefix("messages/"), case let raw = rest.dropFirst("messages/".count), !raw.isEmpty, !raw.contains("/"),
               let id = String(raw).removingPercentEncoding, !id.isEmpty {
                try only([])
                return .messageById(id)
            }
            throw RouteError(status: 404, "no such endpoint: \(path.prefix(100))")
        }
    }
}
