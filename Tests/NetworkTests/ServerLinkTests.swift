import ClientRuntime
import Foundation
import ServerProtocol
import SyncCore
import SyncEngine
import Testing
import ServerClient
import ServerPair
import ChatServer
import TestSupport

/// A server that went away, and one that came back without its data: the client says so and
/// does not pretend (in one process, in virtual time; `ServerGoneEndToEndTests` has the binary).
@Suite("A server that went away")
struct ServerLinkTests {
    @Test("the server killed: within 20 s the app says the server is unreachable and the gone world's faults leave; started again on its data, it is reached")
    func unreachableThenBack() throws {
        let dir = try TemporaryDirectory("server-gone")
        defer { dir.remove() }
        let pair = try WorldPair(contacts: 1, speed: 60, store: try ServerStore(directory: dir.file("server")))
        let ada = try pair.join("ada")
        var told: [ServerLink] = []
        ada.session.onLinkChanged = { told.append($0) }
        PairFaultTests.fault(pair, "push drop 100%", user: "ada")
        #expect(pair.run(upTo: 5_000) { ada.session.faults.words == ["push drop 100%"] })
        pair.crash()
        let gone = pair.clock.nanoseconds
        #expect(pair.run(upTo: 20_000) { ada.session.app.link == .unreachable }, "told: \(told)")
        #expect(pair.clock.nanoseconds - gone <= 20_000_000_000)
        #expect(ada.session.faults.isEmpty, "the gone world's faults left the bar")
        #expect(ada.session.log.contains { $0.line.contains("server unreachable") })
        try pair.restart(store: try ServerStore(directory: dir.file("server")))
        #expect(pair.run(upTo: 60_000) { ada.session.app.link == .reached })
        #expect(told == [.reached, .unreachable, .reached])
        pair.host.store?.close()
    }

    @Test("the network to a server that runs on is cut: unreachable, no faults shown; back, the server's faults come back to the bar")
    func faultsComeBack() throws {
        let pair = try WorldPair(contacts: 1, speed: 60)
        let ada = try pair.join("ada")
        PairFaultTests.fault(pair, "push drop 100%", user: "ada")
        PairFaultTests.fault(pair, "indexer latency 2s", user: "ada")
        #expect(pair.run(upTo: 5_000) { ada.session.faults.words == ["push drop 100%", "indexer latency 2s"] })
        pair.cutNetwork()
        #expect(pair.run(upTo: 20_000) { ada.session.app.link == .unreachable && ada.session.faults.isEmpty })
        pair.healNetwork()
        #expect(pair.run(upTo: 60_000) { ada.session.app.link == .reached && ada.session.faults.words == ["push drop 100%", "indexer latency 2s"] },
                "\(ada.session.faults.words), \(ada.session.app.link)")
    }

    @Test("a server started again without its data no longer knows the user: the app says so and what to do; a send is refused for good with the reason, not retried every few seconds")
    func forgotten() throws {
        let pair = try WorldPair(contacts: 1, speed: 60)
        let ada = try pair.join("ada")
        pair.crash()
        try pair.restart(store: nil)
        #expect(pair.run(upTo: 30_000) { if case .forgotten = ada.session.app.link { true } else { false } })
        guard case .forgotten(let words) = ada.session.app.link else { return }
        #expect(words.contains("the server no longer knows ada") && words.contains("join again"))
        ada.session.apply(.send(handle: "alice", text: "are you there?"))
        pair.run(milliseconds: 5_000)
        let entry = try #require(ada.session.driver.engine.outbox.first)
        #expect(entry.state == .refused(reason: words), "\(entry.state)")
        #expect(ada.session.log.filter { $0.line.contains("send to alice refused") }.count == 1)
        pair.run(milliseconds: 120_000)
        #expect(ada.session.log.filter { $0.line.contains("send to alice") }.count == 1, "not tried again by itself")
        // R tries again, and is refused again, with the same words.
        ada.session.apply(.retry)
        pair.run(milliseconds: 5_000)
        #expect(ada.session.log.filter { $0.line.contains("send to alice refused") }.count == 2)
    }
}
