import Foundation
import Wire

/// The frames of both WebSockets: a request has an `id`, a `method` and `params`; its answer
/// has the same `id` (exactly as it came: JSON-RPC 2.0 §5) and `method` with `params`, or an
/// `error` object with a `message`; a notification has a `method` and no `id`.
public enum RPC {
    /// A client's request.
    public static func request(id: Int, _ method: String, _ params: [(String, JSONValue)] = []) -> JSONValue {
        .object([("id", .int(Int64(id))), ("method", .string(method)), ("params", .object(params))])
    }

    /// The answer to a request whose id was `rawId` (its JSON text as the peer wrote it).
    public static func reply(rawId: String?, _ method: String, _ params: [(String, JSONValue)] = []) -> JSONValue {
        .object([("id", rawId.map { .raw($0) } ?? .null), ("method", .string(method)), ("params", .object(params))])
    }

    /// A request refused, with its reason.
    public static func error(rawId: String?, _ message: String) -> JSONValue {
        .object([("id", rawId.map { .raw($0) } ?? .null), ("error", .object([("message", .string(message))]))])
    }

    public static func notification(_ method: String, _ params: [(String, JSONValue)] = []) -> JSONValue {
        .object([("method", .string(method)), ("params", .object(params))])
    }

    /// What a client reads from the server: the answer to one of its requests, or a notification.
    public enum Incoming: Equatable {
        case answer(id: Int, Result<WireValue, AnswerError>)
        case notification(method: String, params: WireValue)
    }

    public struct AnswerError: Error, Equatable {
        public var message: String
    }

    /// A frame the server sent, or nil for one that is not a JSON object of either shape.
    public static func read(_ data: Data) -> Incoming? {
        guard let frame = WireValue.parse(data), frame.object != nil else { return nil }
        if let id = frame["id"]?.int64, let n = Int(exactly: id) {
            if let error = frame["error"], error.object != nil {
                return .answer(id: n, .failure(AnswerError(message: error["message"]?.string ?? "error")))
            }
            return .answer(id: n, .success(frame["params"] ?? .object([:])))
        }
        guard let method = frame["method"]?.string else { return nil }
        return .notification(method: method, params: frame["params"] ?? .object([:]))
    }
}
