import Directives
import Foundation
import ServerProtocol
import SyncCore
import Testing
import Wire
import ServerPair
import ChatServer

/// What a careless or hostile peer sends the server is held to the protocol's own limits
/// on every path, and the documents say what the code does.
@Suite("The server against careless input: every path held to the protocol")
struct HostileInputTests {
    @Test("a receive line (a user's own POST /v1/fault, and the operator's /admin/fault) is held to a message's 16 KiB, as a publish is: 413 saying so, nothing written")
    func receiveIsAMessage() throws {
        let pair = try WorldPair(contacts: 1, speed: 60)
        let secret = try ServerLimitsTests.join(pair, "zed")
        let zed = try #require(pair.host.user(named: "zed"))
        let before = zed.world.history.messageCount
        let long = "receive alice \"\(String(repeating: "y", count: MessageLimits.maxBodyBytes + 1))\""
        let own = ServerLimitsTests.request(pair, .POST, Route.fault, body: long, token: secret)
        #expect(own?.status == 413)
        #expect(ServerLimitsTests.words(own).hasPrefix("receive: a message is at most 16384 bytes; this one is 16385"), "\(ServerLimitsTests.words(own))")
        let operatorLine = ServerLimitsTests.request(pair, .POST, Route.adminFault(user: "zed"), body: long, token: pair.server.adminToken)
        #expect(operatorLine?.status == 413, "\(ServerLimitsTests.words(operatorLine))")
        let fits = "receive alice \"\(String(repeating: "y", count: MessageLimits.maxBodyBytes))\""
        #expect(ServerLimitsTests.request(pair, .POST, Route.fault, body: fits, token: secret)?.status == 200)
        pair.run(milliseconds: 2_000)
        #expect(zed.world.history.messageCount == before + 1, "only the line that fits was written")
    }

    @Test("a join whose \"protocol\" is null is one without a version, taken as the server's (as docs/server.md says); a version that is not a number is refused")
    func protocolNull() throws {
        #expect(try JoinRequest.decode(Data(#"{"user":"ada","protocol":null}"#.utf8)).protocolVersion == nil)
        #expect(throws: RouteError.self) { try JoinRequest.decode(Data(#"{"user":"ada","protocol":"1"}"#.utf8)) }
    }

    @Test("a burst of contactsChanged (5 000 frames) asks GET /v1/world once at a time, not once a frame; failing, it waits for one retry at a time, not one each")
    func contactsChangedCoalesced() throws {
        let pair = try WorldPair(contacts: 1, speed: 60)
        let ada = try pair.join("ada")
        pair.run(milliseconds: 2_000)
        let before = ada.transport.sent[Route.world, default: 0]
        for _ in 0..<5_000 { ada.world.refreshContacts() }
        pair.run(milliseconds: 2_000)
        let asked = ada.transport.sent[Route.world, default: 0] - before
        #expect(asked == 2, "one in flight and one more for all the frames that came meanwhile: \(asked)")
        // The server failing every one: a retry at a time.
        ada.transport.cutNext[Route.world] = 1_000_000
        let failing = ada.transport.sent[Route.world, default: 0]
        for _ in 0..<5_000 { ada.world.refreshContacts() }
        pair.run(milliseconds: 60_000)
        let retried = ada.transport.sent[Route.world, default: 0] - failing
        #expect(retried <= 20, "one request at a time, a retry each 5 s of the world's clock at x60: \(retried)")
    }

    @Test("a server may ask a client only for the app's lifecycle and sync: the server refuses to pass on send, contact, mute, open or quit (400 saying what it may), and a client refuses them if a server sends one anyway")
    func directivesAServerMaySend() throws {
        let pair = try WorldPair(contacts: 1, speed: 60)
        let ada = try pair.join("ada")
        pair.run(milliseconds: 2_000)
        for line in ["send alice \"from the server\"", "contact alice \"Mallory\"", "mute alice", "open alice", "quit", "preview hidden"] {
            let answer = ServerLimitsTests.request(pair, .POST, Route.adminFault(user: "ada"), body: line, token: pair.server.adminToken)
            #expect(answer?.status == 400, "\(line): \(ServerLimitsTests.words(answer))")
            #expect(ServerLimitsTests.words(answer).contains(Directive.whatAServerMayAsk), "\(line): \(ServerLimitsTests.words(answer))")
        }
        #expect(ServerLimitsTests.request(pair, .POST, Route.adminFault(user: "ada"), body: "background", token: pair.server.adminToken)?.status == 200)
        pair.run(milliseconds: 2_000)
        #expect(!ada.world.os.foreground, "background is the app's lifecycle: passed on and done")
        // A server that passes them on anyway: the client does none of it.
        let sent = ada.session.storage.allMessages().filter { $0.message.direction == .outgoing }.count
        let socket = try #require(pair.host.user(named: "ada")?.link.pushSocket)
        socket.directive(.send(handle: "alice", text: "from the server"))
        socket.directive(.quit)
        pair.run(milliseconds: 10_000)
        #expect(ada.session.storage.allMessages().filter { $0.message.direction == .outgoing }.count == sent, "nothing published as ada")
        #expect(!ada.session.app.quitRequested)
        let refused = ada.session.app.log.filter { $0.event.line.contains("refused: \(Directive.whatAServerMayAsk)") }
        #expect(refused.count == 2, "\(ada.session.app.log.suffix(5).map(\.event.line))")
    }
}
