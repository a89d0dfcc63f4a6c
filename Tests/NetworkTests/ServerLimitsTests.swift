import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOWebSocket
import ServerProtocol
import SyncCore
import SyncEngine
import Testing
import TestSupport
import Wire
import ServerPair
import ChatServer

/// What the server promises a crowd of strangers, held in one process and in virtual time:
/// the real `WorldServer` on a manual clock, its sockets on NIO's `EmbeddedChannel`, whose
/// timers move only when the test moves them. docs/server.md, "What the server promises".
@Suite("The server against a crowd: its limits, in virtual time")
struct ServerLimitsTests {
    /// One HTTP request to the pair's server; the pair runs until it is answered (an indexer
    /// answer comes after the world's latency), at most `within` ms of wall time.
    @discardableResult
    static func request(_ pair: WorldPair, _ method: HTTPMethod, _ path: String, body: String = "", token: String? = nil, peer: String = "127.0.0.2",
                        within: Int64 = 0) -> (status: Int, body: Data)? {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: "127.0.0.1")
        headers.add(name: ProtocolVersion.header, value: ProtocolVersion.headerValue)
        if let token { headers.add(name: "Authorization", value: "Bearer \(token)") }
        var answer: (status: Int, body: Data)?
        pair.server.serve(method, path, headers: headers, body: Data(body.utf8), peer: peer) { answer = ($0, $1) }
        if answer == nil, within > 0 { pair.run(upTo: within) { answer != nil } }
        return answer
    }

    static func join(_ pair: WorldPair, _ name: String, invite: String? = nil, peer: String = "127.0.0.2") throws -> String {
        let body = JSONValue.object([("user", .string(name))] + (invite.map { [("invite", .string($0))] } ?? [])).data
        let answer = try #require(request(pair, .POST, Route.join, body: String(decoding: body, as: UTF8.self), peer: peer))
        #expect(answer.status == 201, "\(String(decoding: answer.body, as: UTF8.self))")
        return try #require(WireValue.parse(answer.body)?["secret"]?.string)
    }

    static func words(_ answer: (status: Int, body: Data)?) -> String {
        answer.map { ErrorDocument.message($0.body, status: $0.status) } ?? "no answer"
    }

    @Test("a body published over HTTP (NUL, C0 and C1 controls, lone combining marks, 16 KiB) comes back byte for byte from the indexer, after a kill and a restart too")
    func bodiesSurviveRestart() throws {
        let dir = try TemporaryDirectory("limits-bodies")
        defer { dir.remove() }
        let pair = try WorldPair(contacts: 1, speed: 60, store: try ServerStore(directory: dir.file("server")))
        let secret = try Self.join(pair, "zed")
        let zed = try #require(pair.host.user(named: "zed"))
        let alice = try #require(zed.world.contact(handle: "alice")).address
        var sent: [(txId: String, body: String)] = []
        for body in StoredBodies.all {
            let publish = String(decoding: PublishRequest(to: alice, body: body).document.data, as: UTF8.self)
            let answer = try #require(Self.request(pair, .POST, Route.publish, body: publish, token: secret))
            #expect(answer.status == 200, "\(Self.words(answer))")
            let p = try PublicationDocument.decode(answer.body, me: zed.address)
            #expect(Array(p.message.body.utf8) == Array(body.utf8), "the answer to the publish carries it whole")
            sent.append((p.message.txId, body))
        }
        pair.run(milliseconds: 5_000)  // indexed
        func served() throws -> [[UInt8]] {
            try sent.map { m in
                let answer = try #require(Self.request(pair, .GET, IndexerRoute.path(for: .messageById(m.txId)), token: secret, within: 10_000))
                #expect(answer.status == 200)
                return Array(try IndexerPage.decode(answer.body, for: .messageById(m.txId), me: zed.address).messages.first?.body.utf8 ?? "?".utf8)
            }
        }
        #expect(try served() == StoredBodies.bytes(sent.map(\.body)))
        pair.crash()
        try pair.restart(store: try ServerStore(directory: dir.file("server")))
        pair.run(milliseconds: 5_000)
        #expect(try served() == StoredBodies.bytes(sent.map(\.body)), "after a kill and a restart")
        pair.host.store?.close()
    }

    /// A node or push socket of `secret`'s user on an `EmbeddedChannel`, as an upgraded
    /// connection has it; what the server wrote at opening is read and dropped.
    static func socket(_ pair: WorldPair, _ path: String, secret: String) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.2", port: 40_000)).wait()
        var headers = HTTPHeaders()
        for (name, value) in [("Host", "127.0.0.1"), (ProtocolVersion.header, ProtocolVersion.headerValue), ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Version", "13"),
                              ("Sec-WebSocket-Key", Data(repeating: 7, count: 16).base64EncodedString()), ("Authorization", "Bearer \(secret)")] {
            headers.add(name: name, value: value)
        }
        let refused = pair.server.upgrade(channel, HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers))
        #expect(refused == nil)
        _ = frames(channel)
        return channel
    }

    /// A client's frame (masked) into the socket.
    static func send(_ channel: EmbeddedChannel, _ opcode: WebSocketOpcode, _ payload: [UInt8] = []) {
        let key = WebSocketMaskingKey.random()
        var data = ByteBuffer(bytes: payload)
        data.webSocketMask(key)
        _ = try? channel.writeInbound(WebSocketFrame(fin: true, opcode: opcode, maskKey: key, data: data))
        channel.embeddedEventLoop.run()
    }

    /// What the server wrote since, frame by frame.
    static func frames(_ channel: EmbeddedChannel) -> [Frame] {
        var out: [Frame] = []
        while let frame = try? channel.readOutbound(as: WebSocketFrame.self) { out.append(Frame(frame)) }
        return out
    }

    @Test("a socket silent for 60 s is pinged; one that answers nothing within 15 s is closed with 1001; an answer, or any frame, keeps it")
    func silentSocketsGo() throws {
        let pair = try WorldPair(contacts: 1)
        let secret = try Self.join(pair, "zed")
        let silent = try Self.socket(pair, Route.push, secret: secret), answering = try Self.socket(pair, Route.node, secret: secret)
        for channel in [silent, answering] {
            channel.embeddedEventLoop.advanceTime(by: .seconds(59))
            #expect(Self.frames(channel).isEmpty, "nothing before 60 s of silence")
            channel.embeddedEventLoop.advanceTime(by: .seconds(1))
            #expect(Self.frames(channel) == [.ping(Array("still there?".utf8))])
        }
        Self.send(answering, .pong, Array("still there?".utf8))
        for channel in [silent, answering] { channel.embeddedEventLoop.advanceTime(by: .seconds(14)) }
        #expect(silent.isActive && Self.frames(silent).isEmpty, "15 s to answer")
        for channel in [silent, answering] { channel.embeddedEventLoop.advanceTime(by: .seconds(1)) }
        #expect(Self.frames(silent) == [.close(code: 1001, reason: "no answer to a ping in 15 s")])
        #expect(!silent.isActive)
        #expect(answering.isActive && Self.frames(answering).isEmpty, "the pong answered it")
        // Any frame counts as an answer; the next silence is timed from the last frame heard.
        Self.send(answering, .text, Array(#"{"id": 1, "method": "nothing"}"#.utf8))
        _ = Self.frames(answering)
        answering.embeddedEventLoop.advanceTime(by: .seconds(59))
        #expect(Self.frames(answering).isEmpty)
        answering.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(Self.frames(answering) == [.ping(Array("still there?".utf8))])
    }

    @Test("pings and pongs count against the frame rate: the 401st frame of a burst, a control frame too, closes the socket with 1008; reserved opcodes close it with 1002")
    func controlFramesCount() throws {
        let pair = try WorldPair(contacts: 1)
        let secret = try Self.join(pair, "zed")
        for opcode in [WebSocketOpcode.ping, .pong] {
            let channel = try Self.socket(pair, Route.node, secret: secret)
            for _ in 0..<450 where channel.isActive { Self.send(channel, opcode) }
            let frames = Self.frames(channel)
            // The opening spent one of the user's 400; each ping is answered until the rest are spent.
            #expect(frames.dropLast() == Array(repeating: .pong, count: opcode == .ping ? 399 : 0), "\(opcode): \(frames.count) frames")
            #expect(frames.last == .close(code: 1008, reason: "more than 200 frames a second"), "\(opcode): \(frames.suffix(2))")
            #expect(!channel.isActive)
            pair.clock.advance(milliseconds: 3_000)  // the bucket refills
        }
        for op: UInt8 in [3, 4, 5, 6, 7, 11, 12, 13, 14, 15] {
            let channel = try Self.socket(pair, Route.node, secret: secret)
            Self.send(channel, WebSocketOpcode(encodedWebSocketOpcode: op)!)
            #expect(Self.frames(channel) == [.close(code: 1002, reason: "opcode \(op) is reserved")])
            #expect(!channel.isActive)
        }
    }

    @Test("a user's pending indexer answers are bounded: past the bound 429 in words at once, room again as answers come; its own fault waits at most 10 minutes, the operator's longer")
    func pendingAnswersBounded() throws {
        let pair = try WorldPair(contacts: 1, speed: 60)
        pair.server.maxPendingAnswers = 4
        let secret = try Self.join(pair, "zed")
        let tooLong = Self.request(pair, .POST, Route.fault, body: "indexer latency 11m", token: secret)
        #expect(tooLong?.status == 400 && Self.words(tooLong) == "indexer latency 11m: a user's own fault waits at most 10m (the operator may give longer)")
        #expect(Self.request(pair, .POST, Route.fault, body: "push delay 3650d", token: secret)?.status == 400)
        #expect(Self.request(pair, .POST, Route.fault, body: "indexer latency 10m", token: secret)?.status == 200)
        var answers: [Int] = []
        for _ in 0..<4 {
            var headers = HTTPHeaders()
            headers.add(name: ProtocolVersion.header, value: ProtocolVersion.headerValue)
            headers.add(name: "Authorization", value: "Bearer \(secret)")
            pair.server.serve(.GET, IndexerRoute.path(for: .tip), headers: headers, body: Data(), peer: "127.0.0.2") { status, _ in answers.append(status) }
        }
        let over = Self.request(pair, .GET, IndexerRoute.path(for: .tip), token: secret)
        #expect(over?.status == 429 && Self.words(over) == "zed has 4 indexer answers pending already (its indexer is slow): wait for them")
        #expect(answers.isEmpty)
        pair.run(milliseconds: 10_000)  // 10 minutes of the world at x60
        #expect(answers == [200, 200, 200, 200])
        #expect(Self.request(pair, .POST, Route.fault, body: "indexer latency 1s", token: secret)?.status == 200)
        #expect(Self.request(pair, .GET, IndexerRoute.path(for: .tip), token: secret, within: 5_000)?.status == 200, "room again")
        // The operator is not held to a user's limit.
        var headers = HTTPHeaders()
        headers.add(name: ProtocolVersion.header, value: ProtocolVersion.headerValue)
        headers.add(name: "Authorization", value: "Bearer \(pair.server.adminToken)")
        var status = 0
        pair.server.serve(.POST, "/admin/fault?user=zed", headers: headers, body: Data("indexer latency 2h".utf8), peer: "127.0.0.1") { s, _ in status = s }
        #expect(status == 200)
    }

    @Test("a publish and its retry with the same key are one message: the retry is answered with the first's publication (a request the client gave up on, which the network still delivered, then its outbox's retry: the soak's line published twice); another key, or none, is another message; a key with another text is another message, never dropped")
    func publishOnceByKey() throws {
        let pair = try WorldPair(contacts: 1, speed: 60)
        let secret = try Self.join(pair, "zed")
        let zed = try #require(pair.host.user(named: "zed"))
        let alice = try #require(zed.world.contact(handle: "alice")).address
        func publish(_ body: String, key: String?) throws -> String {
            let request = String(decoding: PublishRequest(to: alice, body: body, key: key).document.data, as: UTF8.self)
            let answer = try #require(Self.request(pair, .POST, Route.publish, body: request, token: secret))
            #expect(answer.status == 200, "\(Self.words(answer))")
            return try PublicationDocument.decode(answer.body, me: zed.address).message.txId
        }
        func outgoing() -> Int { zed.world.history.messageCount }
        let before = outgoing()
        let first = try publish("bot47 #8: hello", key: "local-1-8")
        #expect(try publish("bot47 #8: hello", key: "local-1-8") == first)
        #expect(outgoing() == before + 1, "the retry published nothing")  // traffic 0: only these land
        #expect(try publish("bot47 #8: hello", key: "local-1-9") != first)
        #expect(try publish("another text", key: "local-1-8") != first, "a key that names another message is no repeat")
        #expect(try publish("bot47 #8: hello", key: nil) != first)
        #expect(outgoing() == before + 4)
        // The server keeps the last 32 keys a user used (a bound a stranger cannot push past):
        // older than that, a key is a new message again.
        for i in 0..<32 { _ = try publish("filler \(i)", key: "filler-\(i)") }
        #expect(try publish("bot47 #8: hello", key: "local-1-8") != first)
    }

    @Test("a publish's key outlives a restart: the server made the message durable and died before answering; the retry on the restarted server is answered with the same message and the output it spent, not a second message")
    func publishOnceByKeyAcrossRestart() throws {
        let dir = try TemporaryDirectory("limits-publish-key")
        defer { dir.remove() }
        let pair = try WorldPair(contacts: 1, speed: 60, store: try ServerStore(directory: dir.file("server")))
        let secret = try Self.join(pair, "zed")
        var zed = try #require(pair.host.user(named: "zed"))
        let alice = try #require(zed.world.contact(handle: "alice")).address
        func publish(_ body: String, key: String?) throws -> Publication {
            let request = String(decoding: PublishRequest(to: alice, body: body, key: key).document.data, as: UTF8.self)
            let answer = try #require(Self.request(pair, .POST, Route.publish, body: request, token: secret))
            #expect(answer.status == 200, "\(Self.words(answer))")
            return try PublicationDocument.decode(answer.body, me: zed.address)
        }
        let older = try publish("an older line", key: "local-1-7")
        let first = try publish("bot47 #8: hello", key: "local-1-8")
        pair.crash()
        try pair.restart(store: try ServerStore(directory: dir.file("server")))
        zed = try #require(pair.host.user(named: "zed"))
        let before = zed.world.history.messageCount
        #expect(try publish("bot47 #8: hello", key: "local-1-8") == first, "the same message, the same spent output")
        #expect(try publish("an older line", key: "local-1-7") == older)
        #expect(zed.world.history.messageCount == before, "the retries published nothing")
        #expect(try publish("bot47 #8: hello", key: "local-1-9").message.txId != first.message.txId, "another key is another message")
        pair.host.store?.close()
    }

    @Test("a user's quota of kept bytes: past it, 507 saying so, for a publish and for its own receive line; counted again from the world after a restart")
    func quotaOfKeptBytes() throws {
        let dir = try TemporaryDirectory("limits-quota")
        defer { dir.remove() }
        let pair = try WorldPair(contacts: 1, speed: 60, store: try ServerStore(directory: dir.file("server")))
        pair.server.userQuotaBytes = 40_000
        let secret = try Self.join(pair, "zed")
        let zed = try #require(pair.host.user(named: "zed"))
        let alice = try #require(zed.world.contact(handle: "alice")).address
        let publish = String(decoding: PublishRequest(to: alice, body: String(repeating: "x", count: 16_384)).document.data, as: UTF8.self)
        #expect(Self.request(pair, .POST, Route.publish, body: publish, token: secret)?.status == 200)
        #expect(Self.request(pair, .POST, Route.publish, body: publish, token: secret)?.status == 200)
        let over = Self.request(pair, .POST, Route.publish, body: publish, token: secret)
        #expect(over?.status == 507)
        #expect(Self.words(over).hasPrefix("publish: zed keeps 32 KiB of messages on this server, and may keep 39 KiB (its quota): this one is not kept"))
        let receive = "receive alice \"\(String(repeating: "y", count: 8_000))\""
        #expect(Self.request(pair, .POST, Route.fault, body: receive, token: secret)?.status == 507)
        #expect(Self.request(pair, .POST, Route.fault, body: "receive alice \"short\"", token: secret)?.status == 200)
        pair.run(milliseconds: 2_000)
        pair.crash()
        try pair.restart(store: try ServerStore(directory: dir.file("server")))
        pair.server.userQuotaBytes = 40_000
        #expect(Self.request(pair, .POST, Route.publish, body: publish, token: secret)?.status == 507, "after a restart, the world's messages still count")
        let small = String(decoding: PublishRequest(to: alice, body: "hi").document.data, as: UTF8.self)
        #expect(Self.request(pair, .POST, Route.publish, body: small, token: secret)?.status == 200, "what fits is kept")
        pair.host.store?.close()
    }

    @Test("wrong invites are capped server-wide, whatever the address: past the cap every first join waits, the right invite too (429); the log says so once; they refill with time")
    func invitesGuessedInParallel() throws {
        let pair = try WorldPair(contacts: 1)
        let invite = "0123456789abcdef"
        pair.server.invite = invite
        pair.server.failedInvitesPerMinute = 5
        var logged: [String] = []
        pair.server.log = { logged.append($0) }
        func join(_ name: String, _ code: String, from peer: String) -> Int? {
            let body = String(decoding: JSONValue.object([("user", .string(name)), ("invite", .string(code))]).data, as: UTF8.self)
            return Self.request(pair, .POST, Route.join, body: body, peer: peer)?.status
        }
        for i in 0..<5 { #expect(join("guess\(i)", "guess-\(i)-0000000000", from: "127.0.1.\(i)") == 403) }
        #expect(join("guess5", "guess-5-0000000000", from: "127.0.1.5") == 429, "past the cap, from yet another address")
        #expect(join("ada", invite, from: "127.0.2.1") == 429, "the right invite waits too: checking it would be one more guess")
        #expect(logged.count == 1 && logged[0].contains("wrong invites a minute"), "\(logged)")
        pair.clock.advance(milliseconds: 12_000)  // one more attempt a twelfth of a minute
        #expect(join("ada", invite, from: "127.0.2.1") == 201)
        for i in 0..<3 { _ = join("again\(i)", "again-\(i)-0000000000", from: "127.0.3.\(i)") }
        #expect(logged.count == 1, "said once")
    }

    @Test("the connection table: one peer's limit, and at the cap the peer holding the most gives way to a newcomer, oldest first; IPv6 counts per /64")
    func connectionTable() {
        final class Connection {}
        var closed: [String] = []
        var table = ConnectionTable(maxConnections: 6, maxPerPeer: 3)
        var held: [(Connection, String)] = []
        func admit(_ peer: String, _ name: String) -> ConnectionTable.Admission {
            let c = Connection()
            let admission = table.admit(ObjectIdentifier(c), peer: peer) { _ in closed.append(name) }
            if case .refused = admission {} else { held.append((c, peer)) }
            return admission
        }
        for i in 0..<3 { #expect(admit("10.0.0.1", "a\(i)") == .admitted) }
        #expect(admit("10.0.0.1", "a3") == .refused(.peerConnections(peer: "10.0.0.1", limit: 3)), "a peer's own limit")
        for i in 0..<3 { #expect(admit("10.0.0.2", "b\(i)") == .admitted) }
        #expect(table.count == 6)
        #expect(admit("10.0.0.3", "c0") == .admittedShedding(.peer("10.0.0.1")))
        #expect(closed == ["a0"], "the oldest of the largest holder")
        #expect(admit("10.0.0.3", "c1") == .admittedShedding(.peer("10.0.0.2")))
        #expect(admit("10.0.0.3", "c2") == .refused(.maxConnections(6)), "2, 2, 2: nobody holds more than the newcomer would")
        #expect(table.count == 6 && table.held(by: "10.0.0.3") == 2)
        for (c, _) in held { table.remove(ObjectIdentifier(c)) }
        #expect(table.count == 0)
        #expect(ConnectionTable.peer(ofAddress: "2001:db8:0:1::5") == "2001:db8:0:1::/64")
        #expect(ConnectionTable.peer(ofAddress: "2001:db8:0:1:ffff:1:2:3") == ConnectionTable.peer(ofAddress: "2001:db8:0:1::5"))
        #expect(ConnectionTable.peer(ofAddress: "2001:db8:0:2::5") != ConnectionTable.peer(ofAddress: "2001:db8:0:1::5"))
        #expect(ConnectionTable.peer(ofAddress: "::ffff:10.1.2.3") == "10.1.2.3")
        #expect(ConnectionTable.peer(ofAddress: "10.1.2.3") == "10.1.2.3")
    }

    @Test("a peer holds at most maxWaitingPerPeer connections waiting for their first head: its newest closes its oldest; one whose head was read no longer counts, nor does another peer's")
    func waitingHeads() {
        final class Connection {}
        var closed: [String] = []
        var table = ConnectionTable(maxConnections: 100, maxPerPeer: 10, maxWaitingPerPeer: 2)
        var kept: [String: Connection] = [:]
        func admit(_ peer: String, _ name: String) -> ConnectionTable.Admission {
            let c = Connection()
            kept[name] = c
            return table.admit(ObjectIdentifier(c), peer: peer) { _ in closed.append(name) }
        }
        #expect(admit("10.0.0.1", "a0") == .admitted && admit("10.0.0.1", "a1") == .admitted)
        table.headRead(ObjectIdentifier(kept["a1"]!), peer: "10.0.0.1")
        #expect(admit("10.0.0.1", "a2") == .admitted)
        #expect(closed.isEmpty, "a0 and a2 wait; a1's head came")
        #expect(admit("10.0.0.1", "a3") == .admitted)
        #expect(closed == ["a0"], "the third waiting closes the oldest waiting, not a1")
        #expect(admit("10.0.0.2", "b0") == .admitted && admit("10.0.0.2", "b1") == .admitted)
        #expect(closed == ["a0"], "another peer's heads are its own")
        #expect(table.held(by: "10.0.0.1") == 3 && table.waiting(by: "10.0.0.1") == 2 && table.count == 5)
        table.remove(ObjectIdentifier(kept["a0"]!))
        #expect(table.count == 5, "removing a shed connection again changes nothing")
    }

    @Test("over TLS a connection waits for its first head only once its handshake is done: handshakes under way count against --peer-connections, not --peer-heads; done, the oldest of those waiting closes as on plain HTTP")
    func headsAfterTheHandshake() {
        final class Connection {}
        var closed: [String] = []
        var table = ConnectionTable(maxConnections: 100, maxPerPeer: 5, maxWaitingPerPeer: 2)
        var kept: [String: Connection] = [:]
        func admit(_ name: String) -> ConnectionTable.Admission {
            let c = Connection()
            kept[name] = c
            return table.admit(ObjectIdentifier(c), peer: "10.0.0.1", waiting: false) { _ in closed.append(name) }
        }
        for name in ["t0", "t1", "t2", "t3", "t4"] { #expect(admit(name) == .admitted) }
        #expect(closed.isEmpty && table.waiting(by: "10.0.0.1") == 0, "five handshakes under way, none waiting for a head")
        #expect(admit("t5") == .refused(.peerConnections(peer: "10.0.0.1", limit: 5)))
        for name in ["t3", "t1"] { table.mayRequest(ObjectIdentifier(kept[name]!), peer: "10.0.0.1") }
        #expect(closed.isEmpty && table.waiting(by: "10.0.0.1") == 2)
        table.mayRequest(ObjectIdentifier(kept["t0"]!), peer: "10.0.0.1")
        #expect(closed == ["t0"], "the oldest connection of those waiting closes (t0 came first; its handshake took longest)")
        table.mayRequest(ObjectIdentifier(kept["t1"]!), peer: "10.0.0.1")
        #expect(closed == ["t0"] && table.waiting(by: "10.0.0.1") == 2, "a handshake done twice changes nothing")
        table.mayRequest(ObjectIdentifier(kept["t0"]!), peer: "10.0.0.1")
        #expect(closed == ["t0"] && table.held(by: "10.0.0.1") == 4, "nor does a closed one's")
    }

    @Test("a connection whose head shows a user's secret is the user's, not its address's: fifty users behind one address hold their own connections, a stranger at that address is held to the address's limit, and a user past its own limit loses its oldest")
    func usersBehindOneAddress() {
        final class Connection {}
        var closed: [ConnectionTable.Limit] = []
        var table = ConnectionTable(maxConnections: 1_000, maxPerPeer: 4, maxWaitingPerPeer: 4, maxPerUser: 8)
        var kept: [Connection] = []
        func admit() -> (ObjectIdentifier, ConnectionTable.Admission) {
            let c = Connection()
            kept.append(c)
            return (ObjectIdentifier(c), table.admit(ObjectIdentifier(c), peer: "10.0.0.9") { closed.append($0) })
        }
        for user in 0..<50 {
            for _ in 0..<6 {
                let (id, admission) = admit()
                #expect(admission == .admitted)
                table.headRead(id, peer: "10.0.0.9", user: "u\(user)")
            }
        }
        #expect(table.count == 300 && table.held(by: "10.0.0.9") == 0 && table.held(byUser: "u7") == 6 && closed.isEmpty,
                "300 connections of 50 users, none of them the address's")
        var stranger: [ObjectIdentifier] = []
        for _ in 0..<4 {
            let (id, admission) = admit()
            #expect(admission == .admitted)
            table.headRead(id, peer: "10.0.0.9")  // a head with no secret
            stranger.append(id)
        }
        #expect(admit().1 == .refused(.peerConnections(peer: "10.0.0.9", limit: 4)), "the stranger is held to the address's 4")
        for id in stranger { table.remove(id) }
        for _ in 0..<3 {
            let (id, _) = admit()
            table.headRead(id, peer: "10.0.0.9", user: "u7")
        }
        #expect(table.held(byUser: "u7") == 8 && closed == [.userConnections(user: "u7", limit: 8)], "the ninth closed u7's oldest")
        #expect(table.held(byUser: "u8") == 6, "nobody else's")
        for c in kept { table.remove(ObjectIdentifier(c)) }
        #expect(table.count == 0)
    }

    @Test("NIO's upgrade handler (a 16-message buffer from the first byte) is in a connection's pipeline only once its first request asks to upgrade: a plain request is answered without it, an upgrade gets 101")
    func upgradeHandlerOnAsk() throws {
        let pair = try WorldPair(contacts: 1, speed: 60)
        let secret = try Self.join(pair, "zed")
        func connection() throws -> EmbeddedChannel {
            let channel = EmbeddedChannel()
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.2", port: 40_001)).wait()
            try pair.server.configureConnection(channel, tls: nil)
            return channel
        }
        func upgradeHandlers(_ channel: EmbeddedChannel) -> Int {
            (try? channel.pipeline.syncOperations.handler(type: HTTPServerUpgradeHandler.self)) == nil ? 0 : 1
        }
        func written(_ channel: EmbeddedChannel) -> String {
            var out = ""
            while let b = try? channel.readOutbound(as: ByteBuffer.self) { out += String(buffer: b) }
            return out
        }
        let plain = try connection()
        #expect(upgradeHandlers(plain) == 0, "none while the head is awaited")
        try plain.writeInbound(ByteBuffer(string: "GET /v1/indexer/tip HTTP/1.1\r\nHost: x\r\n\(ProtocolVersion.header): \(ProtocolVersion.headerValue)\r\n"))
        #expect(upgradeHandlers(plain) == 0, "none in the middle of a head")
        try plain.writeInbound(ByteBuffer(string: "\r\n"))
        plain.embeddedEventLoop.run()
        #expect(written(plain).hasPrefix("HTTP/1.1 401"), "the plain request is answered")
        #expect(upgradeHandlers(plain) == 0)
        let upgrading = try connection()
        try upgrading.writeInbound(ByteBuffer(string: "GET /v1/node HTTP/1.1\r\nHost: x\r\n\(ProtocolVersion.header): \(ProtocolVersion.headerValue)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(Data(repeating: 7, count: 16).base64EncodedString())\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer \(secret)\r\n\r\n"))
        upgrading.embeddedEventLoop.run()
        #expect(written(upgrading).hasPrefix("HTTP/1.1 101"), "the upgrade is made by NIO's handler, added on asking")
        #expect(upgradeHandlers(upgrading) == 0, "and gone with the upgrade")
        _ = try? plain.finish()
        _ = try? upgrading.finish()
    }
}
