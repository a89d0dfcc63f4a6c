import Directives
import Foundation
import SyncCore
import SyncEngine
import Testing
import ServerClient
import ServerPair
import ChatServer

/// The networked half in one process and in virtual time: the real
/// `WorldServer` and the real `NetworkWorld`/`NetworkSession` of each client, joined by
/// `WorldPair`'s in-process transport. Nothing sleeps; the clock moves to what is due next.
@Suite("WorldPair: the server and its clients in one process, in virtual time")
struct PairTests {
    static func bodies(_ c: WorldPair.Client) -> [String] { c.session.storage.allMessages().map(\.message.body) }
    static func live(_ c: WorldPair.Client) -> Bool { c.session.driver.engine.status.realtime == .live }

    @Test("two users see each other, go live on the node socket, and each line reaches the other once")
    func twoUsersChat() throws {
        let pair = try WorldPair(contacts: 1, speed: 60)
        let ada = try pair.join("ada"), bo = try pair.join("bo")
        #expect(pair.run(upTo: 30_000) { Self.live(ada) && Self.live(bo) }, "both live on the node socket")
        #expect(ada.session.driver.contacts.contains { $0.handle == "bo" } && bo.session.driver.contacts.contains { $0.handle == "ada" })
        ada.session.apply(.send(handle: "bo", text: "hello bo"))
        bo.session.apply(.send(handle: "ada", text: "hello ada"))
        #expect(pair.run(upTo: 30_000) { Self.bodies(bo).contains("hello bo") && Self.bodies(ada).contains("hello ada") })
        pair.run(milliseconds: 60_000)
        #expect(bo.session.storage.duplicateCount() == 0 && ada.session.storage.duplicateCount() == 0)
        #expect(Self.bodies(bo).filter { $0 == "hello bo" }.count == 1)
        let truth = try #require(pair.host.user(named: "bo")).world.ledger
        #expect(truth.filter { $0.body == "hello bo" }.count == 1 && truth.filter { $0.body == "hello ada" }.count == 1)
    }

    @Test("the same run twice gives the same event log: virtual time, no race")
    func deterministic() throws {
        func log() throws -> [String] {
            let pair = try WorldPair(seed: 3, contacts: 2, trafficPerHour: 120, speed: 60)
            let ada = try pair.join("ada"), bo = try pair.join("bo")
            pair.run(milliseconds: 20_000)
            ada.session.apply(.send(handle: "bo", text: "one"))
            bo.session.apply(.background)
            pair.run(milliseconds: 20_000)
            bo.session.apply(.foreground)
            pair.run(milliseconds: 20_000)
            return ada.session.log.map(\.line) + ["--"] + bo.session.log.map(\.line)
        }
        let first = try log(), second = try log()
        #expect(first.count > 20)
        #expect(first == second)
    }
}
