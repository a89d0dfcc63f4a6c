import Foundation
import NIOCore
import NIOHTTP1
import NIOWebSocket
import ServerProtocol
import SyncCore
import SyncEngine
import Testing
import Wire
import ServerClient
import ServerPair

/// The one protocol module: what the client writes, the server reads with the same code, and
/// back; a version mismatch is one line on each side.
@Suite("ServerProtocol: one codec for both sides")
struct ProtocolTests {
    @Test("every indexer call goes to a path and query that read back as the same call")
    func indexerRoundTrip() throws {
        let calls: [IndexerCall] = [
            .handshakes(.incoming, since: .zero), .handshakes(.outgoing, since: Instant(milliseconds: 12_345)),
            .contextual(Address("kaspa:qabc123"), .incoming, since: Instant(milliseconds: 7)),
            .contextual(Address("kaspa:q é/&=?"), .outgoing, since: .zero),
            .payments(since: Instant(milliseconds: 99), page: 3), .messageById("tx/ü?#1"), .tip,
            .tipCounting(after: Instant(milliseconds: 5), through: Instant(milliseconds: 5)),
            .tipCounting(after: .zero, through: Instant(milliseconds: 86_400_000)),
        ]
        for call in calls {
            let path = IndexerRoute.path(for: call)
            let parts = try #require(URLComponents(string: path), "\(path) is not a path")
            var query: [String: String] = [:]
            for item in parts.queryItems ?? [] { query[item.name] = item.value ?? "" }
            #expect(try IndexerRoute.call(path: parts.percentEncodedPath, query: query) == call, "\(path)")
        }
    }

    @Test("a window or a cursor reaching back before a young server's world began is asked from its beginning: the server refuses negative instants, and nothing lands before 0")
    func instantsBeforeTheWorld() throws {
        let early = IndexerRoute.path(for: .tipCounting(after: Instant(milliseconds: -288_955), through: Instant(milliseconds: 311_045)))
        #expect(early == "/v1/indexer/tip?after=0&through=311045")
        #expect(IndexerRoute.path(for: .handshakes(.incoming, since: Instant(milliseconds: -600_000))) == "/v1/indexer/handshakes?direction=in&since=0")
        let parts = try #require(URLComponents(string: early))
        var query: [String: String] = [:]
        for item in parts.queryItems ?? [] { query[item.name] = item.value ?? "" }
        #expect(try IndexerRoute.call(path: parts.percentEncodedPath, query: query) == .tipCounting(after: .zero, through: Instant(milliseconds: 311_045)))
    }

    @Test("a route the indexer has not is 404, a bad parameter 400, each with its reason")
    func indexerRefusals() {
        #expect(throws: RouteError(status: 404, "no such endpoint: /v1/indexer/nothing")) { try IndexerRoute.call(path: "/v1/indexer/nothing", query: [:]) }
        #expect(throws: RouteError("direction must be in or out, not \"up\"")) {
            try IndexerRoute.call(path: "/v1/indexer/handshakes", query: ["direction": "up"])
        }
        #expect(throws: RouteError("unknown parameter x (expected: direction, page, since)")) {
            try IndexerRoute.call(path: "/v1/indexer/handshakes", query: ["direction": "in", "x": "1"])
        }
        // The tips' count window: both ends or neither, in order, numbers.
        #expect(throws: RouteError("missing parameter through (milliseconds, a non-negative integer)")) {
            try IndexerRoute.call(path: "/v1/indexer/tip", query: ["after": "5"])
        }
        #expect(throws: RouteError("missing parameter after (milliseconds, a non-negative integer)")) {
            try IndexerRoute.call(path: "/v1/indexer/tip", query: ["through": "5"])
        }
        #expect(throws: RouteError("after (9) is later than through (5)")) {
            try IndexerRoute.call(path: "/v1/indexer/tip", query: ["after": "9", "through": "5"])
        }
        #expect(throws: RouteError("through must be a non-negative integer, not \"-1\"")) {
            try IndexerRoute.call(path: "/v1/indexer/tip", query: ["after": "0", "through": "-1"])
        }
        #expect(throws: RouteError("unknown parameter since (expected: after, through)")) {
            try IndexerRoute.call(path: "/v1/indexer/tip", query: ["since": "0"])
        }
    }

    @Test("a join request, a publish request and a publication read back as written")
    func documentsRoundTrip() throws {
        let join = JoinRequest(user: "ada", invite: "code-1234")
        #expect(try JoinRequest.decode(join.document.data) == join)
        let curl = try JoinRequest.decode(Data(#"{"user": "ada"}"#.utf8))
        #expect(curl.protocolVersion == nil, "a join without a version (curl, a script) says none")
        let publish = PublishRequest(to: Address("kaspa:qbob"), body: "pay 100\u{0}99 EUR\n\u{1B}[2J")
        #expect(try PublishRequest.decode(publish.document.data) == publish)
        let keyed = PublishRequest(to: Address("kaspa:qbob"), body: "hi", key: "local-1520274-8")
        #expect(try PublishRequest.decode(keyed.document.data) == keyed)
        for bad in [#"{"to": "kaspa:qbob", "body": "hi", "key": 7}"#, #"{"to": "kaspa:qbob", "body": "hi", "key": ""}"#,
                    #"{"to": "kaspa:qbob", "body": "hi", "key": "\#(String(repeating: "k", count: 101))"}"#] {
            #expect(throws: RouteError.self, "\(bad)") { try PublishRequest.decode(Data(bad.utf8)) }
        }
        let me = Address("kaspa:qme")
        let message = NetworkMessage(txId: "t1", conversation: Address("kaspa:qbob"), direction: .outgoing, kind: .contextual,
                                     body: "x\u{0}y", blockTime: Instant(milliseconds: 5))
        let p = Publication(message: message, spent: ["s1", "s2"])
        #expect(try PublicationDocument.decode(PublicationDocument.encode(p, me: me).data, me: me) == p)
        let c = Contact(address: Address("kaspa:qc"), handle: "c", displayName: "C \"see\"")
        let list = try #require(WireValue.parse(JSONValue.array([ContactDocument.encode(c, person: true)]).data)?.array)
        #expect(ContactDocument.decode(list) == [c])
        #expect(ContactDocument.people(list) == [c.address])
    }

    @Test("a client's join of another protocol version is refused in one line, and one of no version is taken")
    func serverSaysTheVersion() throws {
        let pair = try WorldPair(contacts: 0)
        var status = 0
        var body = Data()
        let other = JoinRequest(user: "ada", invite: nil, protocolVersion: ProtocolVersion.current + 1)
        pair.server.serve(.POST, Route.join, headers: HTTPHeaders([(ProtocolVersion.header, ProtocolVersion.headerValue)]), body: other.document.data, peer: "127.0.0.2") { status = $0; body = $1 }
        #expect(status == 400)
        #expect(ErrorDocument.message(body, status: status)
                == "join: this server speaks synchat protocol \(ProtocolVersion.current), the client speaks \(ProtocolVersion.current + 1): use the same version of synchat on both sides")
        pair.server.serve(.POST, Route.join, headers: HTTPHeaders([(ProtocolVersion.header, ProtocolVersion.headerValue)]), body: Data(#"{"user": "ada"}"#.utf8), peer: "127.0.0.2") { status = $0; body = $1 }
        #expect(status == 201)
        #expect(WireValue.parse(body)?["protocol"]?.int64 == Int64(ProtocolVersion.current), "the server says its version")
    }

    /// A transport whose server answers every request with one fixed answer.
    final class FixedAnswer: ServerTransport {
        let answer: NetIO.Answer
        init(_ answer: NetIO.Answer) { self.answer = answer }
        func request(_ method: HTTPMethod, _ path: String, body: Data?, token: String?, reply: @escaping (Result<NetIO.Answer, TransportError>) -> Void) {
            reply(.success(answer))
        }
        func requestNow(_ method: HTTPMethod, _ path: String, body: Data?, token: String?) throws -> NetIO.Answer { answer }
        func openSocket(_ path: String, token: String, opened: @escaping (ClientSocket) -> Void, text: @escaping (Data) -> Void,
                        closed: @escaping (Int, String) -> Void) -> ClientSocket { fatalError("no sockets here") }
        func drain() -> Int { 0 }
        var wakeDescriptor: Int32? { nil }
        func words(for error: Error) -> String { "\(error)" }
    }

    @Test("a server of another protocol version, or of none, is said so in one line by the client")
    func clientSaysTheVersion() {
        let world = #"{"user":"ada","address":"kaspa:qada","secret":"s","clock":0,"speed":"60","contacts":[]"#
        let older = ProtocolVersion.current - 1
        for (version, line) in [(older, "server: the server speaks protocol \(older), this synchat speaks \(ProtocolVersion.current): use the same version on both sides"),
                                (nil, "server: the server does not say which protocol it speaks (an older synchat server?); this synchat speaks protocol \(ProtocolVersion.current): use the same version on both sides")] {
            let body = world + (version.map { ",\"protocol\":\($0)}" } ?? "}")
            let transport = FixedAnswer(NetIO.Answer(status: 201, body: Data(body.utf8)))
            #expect(throws: NetworkWorld.Refused.self) { try NetworkWorld.join(transport, user: "ada", secret: nil) }
            do { _ = try NetworkWorld.join(transport, user: "ada", secret: nil) } catch {
                #expect("\(error)" == line)
                #expect(!"\(error)".contains("\n"))
            }
        }
    }

    @Test("one frame reader: text must be UTF-8 (1007), reserved opcodes and bad close frames are 1002, a close keeps its code and reason")
    func frames() {
        func frame(_ opcode: WebSocketOpcode, _ bytes: [UInt8]) -> Frame {
            Frame(WebSocketFrame(fin: true, opcode: opcode, data: ByteBuffer(bytes: bytes)))
        }
        #expect(frame(.text, Array("héllo".utf8)) == .text(Array("héllo".utf8)))
        #expect(frame(.text, [0x68, 0xC3]) == .refused(code: 1007, reason: "a text frame that is not UTF-8"))
        #expect(frame(.ping, [1, 2]) == .ping([1, 2]))
        #expect(frame(.connectionClose, []) == .close(code: nil, reason: ""))
        #expect(frame(.connectionClose, [0x03, 0xE8] + Array("bye".utf8)) == .close(code: 1000, reason: "bye"))
        #expect(frame(.connectionClose, [0x03]) == .refused(code: 1002, reason: "a close frame of one byte"))
        #expect(frame(.connectionClose, [0x03, 0xEC]) == .refused(code: 1002, reason: "close code 1004 is not one a peer may send"))
        #expect(frame(.connectionClose, [0x03, 0xE8, 0xFF]) == .refused(code: 1007, reason: "a close reason that is not UTF-8"))
        for op: UInt8 in [3, 4, 5, 6, 7, 11, 12, 13, 14, 15] {
            #expect(frame(WebSocketOpcode(encodedWebSocketOpcode: op)!, []) == .refused(code: 1002, reason: "opcode \(op) is reserved"))
        }
    }

    @Test("a close reaches the log in words: the peer's reason when it gave one, else what its code means; never a bare number (push relay closed (1006 …))")
    func closeWords() {
        #expect(Frame.closeWords(code: 1006, reason: "") == "the connection was lost")
        #expect(Frame.closeWords(code: 1008, reason: "") == "refused by the server's policy")
        #expect(Frame.closeWords(code: 1011, reason: "realtime down") == "realtime down")
        #expect(Frame.closeWords(code: nil, reason: "") == "closed without a reason")
        for code in [1000, 1001, 1002, 1003, 1006, 1007, 1008, 1009, 1011, 1012, 1013, 3000, 4999] {
            let words = Frame.closeWords(code: code, reason: "")
            #expect(!words.isEmpty && (words.rangeOfCharacter(from: .decimalDigits) == nil || code >= 3000), "\(code): \(words)")
        }
    }

    @Test("a join answer whose clock no client can run is refused in one line naming it, never a world that traps at its first step: a speed of inf, nan, 1e300, 1e20, 0 or -1; a clock near Int64.max or before 0")
    func absurdClock() throws {
        func answer(speed: String, clock: String = "1000") -> Data {
            Data(#"{"user":"zed","address":"kaspa:qzed","protocol":\#(ProtocolVersion.current),"clock":\#(clock),"speed":"\#(speed)","contacts":[]}"#.utf8)
        }
        #expect(try JoinAnswer.decode(answer(speed: "60")).world.speed == 60)
        for speed in ["inf", "nan", "1e300", "1e20", "0", "-1", "0.0001"] {
            #expect(throws: RouteError.self, "x\(speed)") { try JoinAnswer.decode(answer(speed: speed)) }
            do { _ = try JoinAnswer.decode(answer(speed: speed)) } catch {
                #expect(error.message.hasPrefix("the server's clock runs at x\(speed), which this client cannot run"), "\(error.message)")
            }
        }
        for clock in ["9223372036854775807", "-5"] {
            do { _ = try JoinAnswer.decode(answer(speed: "1", clock: clock)); Issue.record("clock \(clock) taken") } catch {
                #expect(error.message.hasPrefix("the server's clock") && error.message.hasSuffix("this client can run (from 0 to 100 years)") || error.message.hasSuffix("which this client cannot run (from 0 to 100 years)"), "\(error.message)")
            }
        }
        let escaped = String(decoding: answer(speed: "\\u001b]0;x"), as: UTF8.self)
        do { _ = try JoinAnswer.decode(Data(escaped.utf8)) } catch {
            #expect(!error.message.unicodeScalars.contains { $0.value == 0x1B }, "the server's words reach the terminal escaped")
        }
    }

    @Test("the indexer's words: a contextual or handshakes path with a page is read back as that call; a page past a million is refused")
    func routes() throws {
        let a = Address("kaspa:alice")
        for call in [IndexerCall.contextual(a, .incoming, since: .zero + .seconds(5), page: 2), .handshakes(.outgoing, since: .zero, page: 1),
                     .contextual(a, .outgoing, since: .zero)] {
            let path = IndexerRoute.path(for: call)
            let (route, query) = try #require(Self.splitPath(path))
            #expect(try IndexerRoute.call(path: route, query: query) == call, "\(path)")
        }
        #expect(!IndexerRoute.path(for: .contextual(a, .incoming, since: .zero)).contains("page"), "page 0 is the protocol's default: not sent")
        #expect(throws: RouteError.self) { try IndexerRoute.call(path: Route.indexer + "contextual", query: ["address": "a", "direction": "in", "page": "1000001"]) }
    }

    static func splitPath(_ path: String) -> (String, [String: String])? {
        let parts = path.split(separator: "?", maxSplits: 1)
        guard let route = parts.first else { return nil }
        var query: [String: String] = [:]
        for pair in (parts.count > 1 ? parts[1] : "").split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1).map(String.init)
            if kv.count == 2 { query[kv[0]] = kv[1].removingPercentEncoding ?? kv[1] }
        }
        return (String(route), query)
    }
}
