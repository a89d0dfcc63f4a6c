import Foundation
import NIOHTTP1
import SyncEngine
import Wire

/// What the client needs of the network to reach `synchat server`: HTTP requests and
/// WebSockets whose outcomes run on the owner's thread at its next `drain()`. `NetIO` is the
/// real one (swift-nio sockets, TLS); an in-process pair (`WorldPair`) joins a client to a
/// server in one process and in virtual time, the way quinn's `Pair` drives two endpoints.
public protocol ServerTransport: AnyObject {
    /// One request; `reply` runs at a later `drain()` (a transport failure says why).
    func request(_ method: HTTPMethod, _ path: String, body: Data?, token: String?,
                 reply: @escaping (Result<NetIO.Answer, TransportError>) -> Void)
    /// The same, answered before it returns (joining, before the loop starts).
    func requestNow(_ method: HTTPMethod, _ path: String, body: Data?, token: String?) throws -> NetIO.Answer
    /// Opens a WebSocket to `path`: `opened` once it is upgraded, `text` for each text frame,
    /// `closed` once, with the close code (1006 when none came) and reason.
    func openSocket(_ path: String, token: String, opened: @escaping (ClientSocket) -> Void,
                    text: @escaping (Data) -> Void, closed: @escaping (Int, String) -> Void) -> ClientSocket
    /// Runs what the network brought, in order. Returns how many.
    @discardableResult func drain() -> Int
    /// Readable when something was brought (nil: nothing to wait on; the owner steps it).
    var wakeDescriptor: Int32? { get }
    /// A network failure in a person's words.
    func words(for error: Error) -> String
}

/// A client's WebSocket: text frames out, and its end.
public protocol ClientSocket: AnyObject {
    func send(_ value: JSONValue)
    func close()
}

extension ServerTransport {
    public func request(_ method: HTTPMethod, _ path: String, token: String?, reply: @escaping (Result<NetIO.Answer, TransportError>) -> Void) {
        request(method, path, body: nil, token: token, reply: reply)
    }

    public func requestNow(_ method: HTTPMethod, _ path: String, token: String?) throws -> NetIO.Answer {
        try requestNow(method, path, body: nil, token: token)
    }
}
