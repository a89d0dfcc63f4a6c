import Foundation
import NIOCore
import NIOHTTP1
import ServerProtocol

// Where NIO's HTTP/1.1 codec and the RFCs part ways, and what the server does there.

/// The request parser (llhttp, inside NIO's `HTTPRequestDecoder`) stops for good after a
/// request that asks for an upgrade (`Upgrade` with `Connection: upgrade`) or a CONNECT: what
/// follows is taken for another protocol's bytes. NIO's upgrader takes over only on a
/// connection's first request; after any other such request, and after a first one the server
/// refuses, the requests that follow would stay unread and unanswered.
enum ParserReset {
    /// Whether the parser stops after `head`, by llhttp's own rule.
    static func stopsParser(_ head: HTTPRequestHead) -> Bool {
        if head.method == .CONNECT { return true }
        let connection = head.headers[canonicalForm: "Connection"].map { $0.lowercased() }
        return head.headers.contains(name: "Upgrade") && connection.contains("upgrade")
    }

    /// Reads on with a new parser, handed the bytes the stopped one holds: a new decoder goes
    /// right after it, and the old one, removed, forwards what it did not parse. On the loop,
    /// once the answer to the stopping request is written.
    static func resume(_ channel: NIOCore.Channel) {
        let pipeline = channel.pipeline.syncOperations
        guard channel.isActive, let stopped = try? pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self) else { return }
        do {
            try pipeline.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes)), position: .after(stopped))
        } catch {
            return channel.close(promise: nil)
        }
        pipeline.removeHandler(stopped, promise: nil)
    }
}

/// An answer written as bytes below NIO's response encoder. The encoder gives no answer to a
/// CONNECT a body (RFC 9110 lets a refusal have one: only a 2xx starts a tunnel), so the JSON
/// line every other refusal has would be lost: it goes out whole, with `Connection: close`,
/// and the connection ends (after a second at most, if the peer reads nothing).
enum RawAnswer {
    static func write(_ channel: NIOCore.Channel, _ answer: WorldServer.Answer) {
        let bytes = Self.bytes(answer)
        guard let below = try? channel.pipeline.syncOperations.context(handlerType: BackPressureHandler.self) else {
            return channel.close(promise: nil)
        }
        below.writeAndFlush(NIOAny(bytes)).whenComplete { _ in channel.close(promise: nil) }
        RequestHandler.closeSoon(channel)
    }

    /// The answer's bytes, whole, with `Connection: close`. `notReadRetryAfter`: the answer of a
    /// request the server did not read, to be sent again after that many seconds.
    static func bytes(_ answer: WorldServer.Answer, notReadRetryAfter: Int? = nil) -> ByteBuffer {
        let notRead = notReadRetryAfter.map { "Retry-After: \($0)\r\n\(ProtocolHeader.requestNotRead): 1\r\n" } ?? ""
        var bytes = ByteBuffer(string: "HTTP/1.1 \(answer.status.code) \(answer.status.reasonPhrase)\r\nContent-Type: application/json\r\n"
                                   + "Content-Length: \(answer.body.count)\r\n" + notRead + "Connection: close\r\n\r\n")
        bytes.writeBytes(answer.body)
        return bytes
    }
}

extension WorldServer {
    /// Why a request's Host is not one HTTP/1.1 allows, or nil: a request of HTTP/1.1 has
    /// exactly one (RFC 7230 §5.4).
    static func hostProblem(_ head: HTTPRequestHead) -> String? {
        guard head.version.major == 1, head.version.minor >= 1 else { return nil }
        let hosts = head.headers["Host"].count
        guard hosts != 1 else { return nil }
        return hosts == 0 ? "an HTTP/1.1 request needs a Host header (RFC 7230 §5.4)" : "a request has one Host header, not \(hosts) (RFC 7230 §5.4)"
    }
}
