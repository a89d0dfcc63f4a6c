import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
import ServerProtocol
import Testing
import ServerPair
@testable import ChatServer

/// A WebSocket opening refused for the moment's reason (the user's rate, its sockets) is
/// answered with that reason, however much later its answer is written: the decision is
/// made once, by `shouldUpgrade`, and kept for the connection.
@Suite("The server: a refused upgrade says why it was refused")
struct UpgradeRefusalTests {
    static func head(_ secret: String) -> HTTPRequestHead {
        var headers = HTTPHeaders()
        for (name, value) in [("Host", "127.0.0.1"), (ProtocolVersion.header, ProtocolVersion.headerValue), ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Version", "13"),
                              ("Sec-WebSocket-Key", Data(repeating: 7, count: 16).base64EncodedString()), ("Authorization", "Bearer \(secret)")] {
            headers.add(name: name, value: value)
        }
        return HTTPRequestHead(version: .http1_1, method: .GET, uri: Route.node, headers: headers)
    }

    static func message(_ answer: WorldServer.Answer) -> String {
        ErrorDocument.message(answer.body, status: Int(answer.status.code))
    }

    @Test("an upgrade refused for the rate is answered 429 saying so, though the bucket refilled before the answer: asked again then, the limiter alone says 426; the kept refusal answers once")
    func rateRefusalKept() throws {
        let pair = try WorldPair(contacts: 1, speed: 60)
        let secret = try ServerLimitsTests.join(pair, "zed")
        let server = pair.server
        // Spend zed's bucket.
        var spent = 0
        while spent < 2_000, ServerLimitsTests.request(pair, .GET, Route.world, token: secret)?.status != 429 { spent += 1 }
        #expect(spent < 2_000, "the bucket empties")
        let channel = EmbeddedChannel()
        let connection = ObjectIdentifier(channel)
        #expect(server.shouldUpgrade(Self.head(secret), connection: connection) == nil, "over its rate: refused")
        pair.clock.advance(milliseconds: 50)  // 10 tokens refill before the answer is written
        #expect(!server.limited("zed"), "asked again now, zed is not over its rate")
        let headers = Self.head(secret).headers
        let answer = server.socketRefusal(connection: connection, path: Route.node, headers: headers)
        #expect(answer.status == .tooManyRequests && Self.message(answer).contains("requests a second"), "\(Self.message(answer))")
        // Asked again, without the kept decision: what the server answered before.
        let again = server.socketRefusal(connection: connection, path: Route.node, headers: headers)
        #expect(again.status == .upgradeRequired, "the kept refusal is used once")
        #expect(server.refusedUpgrades.isEmpty)
        _ = try? channel.finish()
    }

    @Test("through a connection's own pipeline, a refused upgrade's answer is the kept one, and the connection forgets it when it closes")
    func throughThePipeline() throws {
        let pair = try WorldPair(contacts: 1, speed: 60)
        let secret = try ServerLimitsTests.join(pair, "zed")
        var spent = 0
        while spent < 2_000, ServerLimitsTests.request(pair, .GET, Route.world, token: secret)?.status != 429 { spent += 1 }
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.2", port: 40_002)).wait()
        try pair.server.configureConnection(channel, tls: nil)
        // NIO passes the refusal on as an error (unsupportedWebSocketTarget) beside the request.
        _ = try? channel.writeInbound(ByteBuffer(string: "GET /v1/node HTTP/1.1\r\nHost: x\r\n\(ProtocolVersion.header): \(ProtocolVersion.headerValue)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(Data(repeating: 7, count: 16).base64EncodedString())\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer \(secret)\r\n\r\n"))
        channel.embeddedEventLoop.run()
        var written = ""
        while let b = try? channel.readOutbound(as: ByteBuffer.self) { written += String(buffer: b) }
        #expect(written.hasPrefix("HTTP/1.1 429"), "\(written.prefix(200))")
        #expect(pair.server.refusedUpgrades.isEmpty, "its answer took it")
        _ = try? channel.finish()
        #expect(pair.server.refusalsWatched.isEmpty, "closed: nothing kept for it")
    }
}
