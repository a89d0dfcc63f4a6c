@testable import ChatServer
import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
import ServerClient
import ServerPair
import ServerProtocol
import Testing
import Wire

/// Every request and socket opening says the protocol's version in a header: a request
/// without it, or of another version, is refused before anything of it is read, in one line
/// that says which to run; the same request with it is answered as ever.
@Suite("The protocol's version on every request: a header, judged first")
struct VersionHeaderTests {
    static let none = "this server speaks synchat protocol \(ProtocolVersion.current); the request says none: send the header "
        + "Synchat-Protocol: \(ProtocolVersion.current) (synchat does; from curl add -H 'Synchat-Protocol: \(ProtocolVersion.current)')"
    static let other = "this server speaks synchat protocol \(ProtocolVersion.current), the client speaks \(ProtocolVersion.current + 1): "
        + "use the same version of synchat on both sides"

    /// What a request that says `version` (nil: no header) is refused with, or nil when taken.
    static let cases: [(version: String?, line: String)] = [(nil, none), (String(ProtocolVersion.current + 1), other)]

    @Test("the header's value judged: none, twice, not a number, another version, the server's own; each refusal one line saying which to run")
    func judged() {
        let v = ProtocolVersion.current
        #expect(ProtocolVersion.header == "Synchat-Protocol" && ProtocolVersion.headerValue == "\(v)")
        #expect(ProtocolVersion.judge([]) == .none)
        #expect(ProtocolVersion.judge(["\(v)"]) == .same)
        #expect(ProtocolVersion.judge([" \(v) "]) == .same)
        #expect(ProtocolVersion.judge(["\(v)", "\(v)"]) == .repeated)
        #expect(ProtocolVersion.judge(["\(v + 1)"]) == .other(v + 1))
        #expect(ProtocolVersion.judge(["+\(v)"]) == .notAVersion("+\(v)"))
        #expect(ProtocolVersion.judge(["two"]) == .notAVersion("two"))
        #expect(ProtocolVersion.refusal(header: ["\(v)"]) == nil)
        #expect(ProtocolVersion.refusal(header: []) == Self.none)
        #expect(ProtocolVersion.refusal(header: ["\(v + 1)"]) == Self.other)
        #expect(ProtocolVersion.refusal(header: ["two"]) == "this server speaks synchat protocol \(v); the request's Synchat-Protocol is \"two\", "
                + "not a version: send the header Synchat-Protocol: \(v) (synchat does; from curl add -H 'Synchat-Protocol: \(v)')")
        #expect(ProtocolVersion.refusal(header: ["\(v)", "\(v + 1)"])?.hasPrefix("this server speaks synchat protocol \(v); the request says Synchat-Protocol 2 times: send the header") == true)
        let escaped = ProtocolVersion.refusal(header: ["\u{1B}]0;x\u{7}" + String(repeating: "9", count: 100)]) ?? ""
        #expect(!escaped.unicodeScalars.contains { $0.value < 0x20 } && escaped.count < 300, "a peer's bytes reach a terminal visible and short: \(escaped)")
    }

    /// A connection of the server's own pipeline, its bytes written by hand.
    static func connection(_ pair: WorldPair) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.3", port: 40_003)).wait()
        try pair.server.configureConnection(channel, tls: nil)
        return channel
    }

    /// The answer to one request on a connection of its own: its status and its body.
    static func exchange(_ pair: WorldPair, _ request: String) throws -> (status: Int, body: String) {
        let channel = try connection(pair)
        defer { _ = try? channel.finish() }
        _ = try? channel.writeInbound(ByteBuffer(string: request))
        channel.embeddedEventLoop.run()
        var written = ""
        func read() { while let b = try? channel.readOutbound(as: ByteBuffer.self) { written += String(buffer: b) } }
        read()
        if written.isEmpty {  // an answer the world gives later (an indexer's)
            _ = pair.run(upTo: 5_000) { channel.embeddedEventLoop.run(); read(); return !written.isEmpty }
        }
        let status = written.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        let body = written.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
        return (status, body)
    }

    static func request(_ method: String, _ uri: String, token: String?, body: String = "", version: String?) -> String {
        var lines = ["\(method) \(uri) HTTP/1.1", "Host: 127.0.0.1", "Connection: close", "Content-Length: \(body.utf8.count)"]
        if let version { lines.append("\(ProtocolVersion.header): \(version)") }
        if let token { lines.append("Authorization: Bearer \(token)") }
        return lines.joined(separator: "\r\n") + "\r\n\r\n" + body
    }

    static func opening(_ path: String, token: String, version: String?) -> String {
        var lines = ["GET \(path) HTTP/1.1", "Host: 127.0.0.1", "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13",
                     "Sec-WebSocket-Key: \(Data(repeating: 7, count: 16).base64EncodedString())", "Authorization: Bearer \(token)"]
        if let version { lines.append("\(ProtocolVersion.header): \(version)") }
        return lines.joined(separator: "\r\n") + "\r\n\r\n"
    }

    @Test("every route, an unknown path among them, is refused 400 without the header and with another version, in the words that say which to run, and answered as ever with it")
    func everyRoute() throws {
        let pair = try WorldPair(contacts: 1)
        let secret = try ServerLimitsTests.join(pair, "zed")
        let admin = pair.server.adminToken
        let world = try #require(ServerLimitsTests.request(pair, .GET, Route.world, token: secret))
        let contact = try #require(WireValue.parse(world.body)?["contacts"]?.array?.first?["address"]?.string)
        let routes: [(method: String, uri: String, token: String?, body: String, taken: Int)] = [
            ("POST", Route.join, nil, #"{"user": "ivy"}"#, 201),
            ("GET", Route.world, secret, "", 200),
            ("POST", Route.publish, secret, #"{"to": "\#(contact)", "body": "hi"}"#, 200),
            ("POST", Route.fault, secret, "indexer up", 200),
            ("GET", IndexerRoute.path(for: .tip), secret, "", 200),
            ("GET", Route.adminTruth(user: "zed"), admin, "", 200),
            ("POST", Route.adminFault(user: "zed"), admin, "indexer up", 200),
            ("GET", Route.protocolPrefix + "nowhere", secret, "", 404),
            ("GET", "/", nil, "", 404),
        ]
        for route in routes {
            for (version, line) in Self.cases {
                let answer = try Self.exchange(pair, Self.request(route.method, route.uri, token: route.token, body: route.body, version: version))
                #expect(answer.status == 400, "\(route.method) \(route.uri) with \(version ?? "no version")")
                #expect(ErrorDocument.message(Data(answer.body.utf8), status: answer.status) == line, "\(route.method) \(route.uri): \(answer.body)")
            }
            let taken = try Self.exchange(pair, Self.request(route.method, route.uri, token: route.token, body: route.body, version: ProtocolVersion.headerValue))
            #expect(taken.status == route.taken, "\(route.method) \(route.uri) with the header: \(taken.status) \(taken.body.prefix(120))")
        }
    }

    @Test("both sockets' openings are refused 400 before switching, without the header and with another version, in the words; with it, switched (101)")
    func bothSockets() throws {
        let pair = try WorldPair(contacts: 1)
        let secret = try ServerLimitsTests.join(pair, "zed")
        for path in [Route.node, Route.push] {
            for (version, line) in Self.cases {
                let answer = try Self.exchange(pair, Self.opening(path, token: secret, version: version))
                #expect(answer.status == 400, "\(path) with \(version ?? "no version")")
                #expect(ErrorDocument.message(Data(answer.body.utf8), status: answer.status) == line, "\(path): \(answer.body)")
                // The in-process opening (WorldPair's) is judged the same.
                var headers = HTTPHeaders()
                for l in Self.opening(path, token: secret, version: version).split(separator: "\r\n").dropFirst() {
                    let parts = l.split(separator: ":", maxSplits: 1)
                    headers.add(name: String(parts[0]), value: String(parts[1]).trimmingCharacters(in: .whitespaces))
                }
                let channel = EmbeddedChannel()
                let refused = pair.server.upgrade(channel, HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers))
                #expect(refused?.status == 400 && refused.map { ErrorDocument.message($0.body, status: $0.status) } == line, "\(path) in process")
                _ = try? channel.finish()
            }
            let channel = try Self.connection(pair)
            _ = try? channel.writeInbound(ByteBuffer(string: Self.opening(path, token: secret, version: ProtocolVersion.headerValue)))
            channel.embeddedEventLoop.run()
            var written = ""
            while let b = try? channel.readOutbound(as: ByteBuffer.self) { written += String(buffer: b) }
            #expect(written.hasPrefix("HTTP/1.1 101"), "\(path) with the header: \(written.prefix(120))")
            _ = try? channel.finish()
        }
    }

    @Test("a client of another version is told the server's line plainly at its join, and the server says it on its side")
    func clientSaysTheServersLine() throws {
        let pair = try WorldPair(contacts: 0)
        var headers = HTTPHeaders([(ProtocolVersion.header, String(ProtocolVersion.current + 1))])
        headers.add(name: "Host", value: "127.0.0.1")
        var answer: (Int, Data)?
        pair.server.serve(.POST, Route.join, headers: headers, body: Data(#"{"user": "ada"}"#.utf8), peer: "127.0.0.2") { answer = ($0, $1) }
        let (status, body) = try #require(answer)
        #expect(status == 400 && ErrorDocument.message(body, status: status) == Self.other)
        // What a synchat client of another version meets: said as the server's line.
        let transport = ProtocolTests.FixedAnswer(NetIO.Answer(status: status, body: body))
        do { _ = try NetworkWorld.join(transport, user: "ada", secret: nil); Issue.record("joined a server that refused its version") } catch {
            #expect("\(error)" == "server: \(Self.other)")
        }
    }
}
