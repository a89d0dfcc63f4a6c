import Directives
import Foundation
import NIOHTTP1
import ServerProtocol
import SyncCore
import SyncEngine
import Testing
import TestSupport
import ServerClient
import ServerPair
import ChatServer

/// Users, faults and a restart on one server, in one process and in virtual time: the real
/// server code and client code, checked against the server's truth. Faults go through the operator's
/// own endpoint (`POST /admin/fault` with the admin token), as `synchat fault` sends them.
@Suite("WorldPair: users, faults and a restart, in virtual time")
struct PairFaultTests {
    /// What a client lost and duplicated against its user's truth: incoming messages whose
    /// block time is more than `settle` ms before now and are not in its store.
    static func lostAndDuplicated(_ pair: WorldPair, _ c: WorldPair.Client, settle: Int64) throws -> (lost: [String], duplicates: Int, incoming: Int) {
        let world = try #require(pair.host.user(named: c.name)).world
        let now = pair.host.virtualNow
        let incoming = world.ledger.filter { $0.direction == .incoming }
        let due = incoming.filter { $0.blockTime < now - .milliseconds(settle) }
        return (due.map(\.txId).filter { !c.session.storage.hasMessage(txId: $0) }, c.session.storage.duplicateCount(), incoming.count)
    }

    /// The operator's fault for one user (or every user), through the server's admin endpoint.
    static func fault(_ pair: WorldPair, _ line: String, user: String? = nil) {
        var headers = HTTPHeaders()
        headers.add(name: ProtocolVersion.header, value: ProtocolVersion.headerValue)
        headers.add(name: "Authorization", value: "Bearer \(pair.server.adminToken)")
        var status = 0
        pair.server.serve(.POST, "/admin/fault" + (user.map { "?user=\($0)" } ?? ""), headers: headers, body: Data(line.utf8), peer: "127.0.0.1") { s, _ in status = s }
        #expect(status == 200, "\(line): \(status)")
    }

    static func lines(_ c: WorldPair.Client) -> [String] { c.session.log.map(\.line) }

    /// ada alone on a server (x60, three simulated contacts writing 400/h), with operator faults
    /// on a timeline of wall seconds.
    static func adaUnderFaults(seconds: Int, _ timeline: [(wait: Double, faults: [String])]) throws -> (WorldPair, WorldPair.Client) {
        let pair = try WorldPair(contacts: 3, trafficPerHour: 400, speed: 60)
        let ada = try pair.join("ada")
        var spent = 0.0
        for step in timeline {
            pair.run(milliseconds: Int64(step.wait * 1000))
            spent += step.wait
            for line in step.faults { fault(pair, line, user: "ada") }
        }
        pair.run(milliseconds: Int64((Double(seconds) - spent) * 1000))
        return (pair, ada)
    }

    @Test("two users exchange messages both ways, beside simulated contacts: 0 lost, 0 duplicates, each user's messages in the other's world, none the world wrote in a person's name")
    func twoUsersChat() throws {
        let pair = try WorldPair(contacts: 2, trafficPerHour: 60, speed: 60)
        let ada = try pair.join("ada"), bo = try pair.join("bo")
        // Each writes to the other every 15 s of wall time (240/h of world time).
        for i in 0..<6 {
            pair.run(milliseconds: 2_000)
            ada.session.apply(.send(handle: "bo", text: "ada \(i)"))
            bo.session.apply(.send(handle: "ada", text: "bo \(i)"))
        }
        pair.run(milliseconds: 4_000)
        let adaWorld = try #require(pair.host.user(named: "ada")).world, boWorld = try #require(pair.host.user(named: "bo")).world
        for (c, other) in [(ada, boWorld.me), (bo, adaWorld.me)] {
            let (lost, duplicates, incoming) = try Self.lostAndDuplicated(pair, c, settle: 90_000)
            #expect(lost.isEmpty, "\(c.name) lost \(lost.count) of \(incoming)")
            #expect(duplicates == 0)
            let world = try #require(pair.host.user(named: c.name)).world
            let fromOther = world.ledger.filter { $0.direction == .incoming && $0.conversation == other }
            #expect(fromOther.count == 6, "\(c.name) got \(fromOther.count) messages from the other user")
            #expect(fromOther.allSatisfy { c.session.storage.hasMessage(txId: $0.txId) })
        }
        // What one received from the other is exactly what the other sent, as the same transactions.
        for (senderWorld, receiverWorld) in [(adaWorld, boWorld), (boWorld, adaWorld)] {
            let sent = Set(senderWorld.ledger.filter { $0.direction == .outgoing && $0.conversation == receiverWorld.me }.map(\.txId))
            let received = Set(receiverWorld.ledger.filter { $0.direction == .incoming && $0.conversation == senderWorld.me }.map(\.txId))
            #expect(received.count == 6 && received == sent)
        }
    }

    @Test("push drop 100% for one user: its engine turns push unreliable and its forced catch-up fetches what push missed; then a stale socket is found by the keepalive and reconnected while the indexer is down: that catch-up fails and moves no cursor, a later one fetches what the silent socket missed: 0 lost")
    func faultsOnOneUser() throws {
        let (pair, ada) = try Self.adaUnderFaults(seconds: 24, [
            (2, ["push drop 100%"]), (6, ["realtime stale", "indexer down"]), (6, ["indexer up", "push up"]),
        ])
        let lines = Self.lines(ada), all = lines.joined(separator: "\n")
        // Loose on the whole story (400 messages an hour of random traffic for 24 minutes, the
        // faults at wall seconds); exact at its two turns: the fall to unreliable, and the
        // stale socket found and reconnected.
        let decided: (SyncEvent) -> Bool = { ![.message, .observation, .banner].contains($0.topic) }
        let fall = try #require(ada.session.log.first { if case .pushState(_, .unreliable, _) = $0.event { true } else { false } })
        expectDecisions(ada.session.log, from: fall.at, through: fall.at, matching: decided, [
            "00:03:33.180 push reliable → unreliable: 3 consecutive push-eligible txs without push within 1m (3 seen on realtime)",
            "00:03:33.180 catch-up started (push-unreliable): full sync of 9 objects, forced",
            "00:03:33.180 push token registration: re-register: push unreliable",
        ])
        let found = try #require(ada.session.log.first { $0.line.contains("realtime stale: no keepalive answer") })
        expectDecisions(ada.session.log, from: found.at, through: found.at + .seconds(1), matching: decided, [
            "00:08:12.820 realtime stale: no keepalive answer within 10s: the socket died silently",
            "00:08:12.820 realtime connecting: forced reconnect, keepalive failed",
            "00:08:13.260 realtime live: subscribed",
            // (g): the reconnect's gap is proven from the UTXO set with push unreliable too.
            "00:08:13.260 catch-up started (rpc-restored): targeted sync of 1 object",
        ])
        let unreliable = try #require(lines.firstIndex { $0.contains("→ unreliable") }, "push never turned unreliable:\n\(all.suffix(2000))")
        #expect(lines[unreliable...].contains { $0.contains("catch-up started") })
        let stale = try #require(lines.firstIndex { $0.contains("realtime stale: no keepalive answer") },
                                 "the stale socket was not found by the keepalive:\n\(all.suffix(2000))")
        #expect(lines[stale...].contains { $0.contains("realtime live") }, "no live subscription after the stale one")
        let failed = try #require(lines[stale...].firstIndex { $0.contains("catch-up finished") && $0.contains("failed") },
                                  "no sync failed while the indexer was down:\n\(all.suffix(3000))")
        #expect(lines[failed...].contains { $0.contains("via fetch") }, "nothing came by a catch-up after the indexer was up")
        let (lost, duplicates, incoming) = try Self.lostAndDuplicated(pair, ada, settle: 120_000)
        #expect(incoming >= 20)
        #expect(lost.isEmpty, "lost \(lost.count) of \(incoming): \(lost.prefix(5))\n\(all.suffix(2000))")
        #expect(duplicates == 0)
    }

    @Test("directives of the app passed by the server to the client (background, foreground), then realtime down (retried with backoff, each attempt once), realtime flaky, push delay, an expired token (registered again): 0 lost, 0 duplicates")
    func moreFaultsOnOneUser() throws {
        let (pair, ada) = try Self.adaUnderFaults(seconds: 27, [
            (2, ["background"]), (2, ["foreground"]),
            (1, ["realtime down"]), (5, ["realtime up", "realtime flaky 50%"]), (5, ["realtime up", "push delay 90s", "token expire"]),
            (4, ["push up"]),
        ])
        let lines = Self.lines(ada), all = lines.joined(separator: "\n")
        // Loose on the whole story (random traffic, the faults at wall seconds); exact where
        // realtime goes down: each reconnect attempt once, the wait doubling to 30 s.
        let wentDown = try #require(ada.session.log.first { $0.line.contains("realtime offline: disconnected: node went down") })
        expectDecisions(ada.session.log, from: wentDown.at, through: wentDown.at + .seconds(32), matching: about(.realtime), [
            "00:05:00.000 realtime offline: disconnected: node went down; retry in 2s",
            "00:05:02.000 realtime connecting: reconnect attempt 1",
            "00:05:02.280 realtime offline: connect failed: node unreachable; retry in 4s",
            "00:05:06.280 realtime connecting: reconnect attempt 2",
            "00:05:06.540 realtime offline: connect failed: node unreachable; retry in 8s",
            "00:05:14.540 realtime connecting: reconnect attempt 3",
            "00:05:14.760 realtime offline: connect failed: node unreachable; retry in 16s",
            "00:05:30.760 realtime connecting: reconnect attempt 4",
            "00:05:31.200 realtime offline: connect failed: node unreachable; retry in 30s",
        ])
        let background = try #require(lines.firstIndex { $0.contains("lifecycle background") }, "\(all.prefix(3000))")
        #expect(lines[background...].contains { $0.contains("lifecycle foreground") })
        let down = try #require(lines.firstIndex { $0.contains("realtime offline: disconnected: node went down") }, "\(all)")
        let attempts = lines[down...].compactMap { $0.firstMatch(of: /reconnect attempt (\d+)/).flatMap { Int($0.1) } }
        var runs: [[Int]] = []
        for a in attempts { if a == 1 || runs.isEmpty { runs.append([a]) } else { runs[runs.count - 1].append(a) } }
        #expect(attempts.count >= 2 && runs.allSatisfy { $0 == Array(1...$0.count) }, "each failed connect counted once: attempts \(attempts)")
        let failures = lines[down...].filter { $0.contains("connect failed") }
        #expect(Set(failures.map { $0.prefix(12) }).count == failures.count, "a failed connect reported twice at one instant: \(failures.prefix(4))")
        #expect(lines[down...].filter { $0.contains("realtime live") }.count >= 2)
        let expired = try #require(lines.firstIndex { $0.contains("push token expired") }, "the expired token never reached the engine:\n\(all.suffix(2000))")
        #expect(lines[expired...].contains { $0.contains("push token registration") })
        let (lost, duplicates, incoming) = try Self.lostAndDuplicated(pair, ada, settle: 150_000)
        #expect(incoming >= 20)
        #expect(lost.isEmpty, "lost \(lost.count) of \(incoming): \(lost.prefix(5))\n\(all.suffix(2000))")
        #expect(duplicates == 0)
    }

    @Test("two users who join at about the same moment see each other: one joins while the other's relay is not yet open")
    func joinRace() throws {
        let pair = try WorldPair(contacts: 1, speed: 60)
        // ev joins; fi joins before ev's app runs a step (its relay socket is not open yet).
        let ev = try pair.join("ev", settle: false)
        let fi = try pair.join("fi", settle: false)

        #expect(pair.run(upTo: 10_000) { ev.session.driver.contacts.contains { $0.handle == "fi" } && fi.session.driver.contacts.contains { $0.handle == "ev" } })
        // A later join is announced to connected clients with the one new contact.
        let gil = try pair.join("gil")
        #expect(pair.run(upTo: 10_000) { [ev, fi].allSatisfy { c in c.session.driver.contacts.contains { $0.handle == "gil" } } })
        #expect(gil.session.driver.contacts.filter { ["ev", "fi"].contains($0.handle) }.count == 2)
    }

    @Test("a client whose ask for the world at its relay's opening is cut asks again within 5 s: it never waits for contacts forever")
    func contactsAskedAgain() throws {
        let pair = try WorldPair(contacts: 0, speed: 60)
        let ev = try pair.join("ev", settle: false)
        // ev's relay is not open when fi joins, so fi's contactsChanged never reaches it; both
        // asks for the world that follow — the client's at the relay's opening, and the one the
        // server's nudge on that opening makes — are cut on their way.
        ev.transport.cutNext[Route.world] = 2
        _ = try pair.join("fi", settle: false)
        let start = pair.clock.nanoseconds
        #expect(pair.run(upTo: 10_000) { ev.session.driver.contacts.contains { $0.handle == "fi" } })
        let waited = Double(pair.clock.nanoseconds - start) / 1e9
        #expect(waited <= 6.5, "ev saw fi after \(waited) s of the wall clock")
        #expect(ev.transport.cutNext[Route.world] == 0, "both asks were cut")
    }

    @Test("the server killed and started again on its data directory loses nothing: users, secrets and messages resume, the clients reconnect by themselves, 0 lost and 0 duplicates")
    func restartLosesNothing() throws {
        let dir = try TemporaryDirectory("pair-restart")
        defer { dir.remove() }
        let pair = try WorldPair(contacts: 2, trafficPerHour: 120, speed: 60, store: try ServerStore(directory: dir.file("server")))
        let ada = try pair.join("ada"), bo = try pair.join("bo")
        func chat(_ seconds: Int) {
            for _ in 0..<(seconds / 2) {
                ada.session.apply(.send(handle: "bo", text: "to bo"))
                bo.session.apply(.send(handle: "ada", text: "to ada"))
                pair.run(milliseconds: 2_000)
            }
        }
        chat(7)
        let before = try #require(pair.host.user(named: "ada")).world.ledger.map(\.txId)
        pair.crash()
        chat(2)  // down for two minutes of world time: sends fail, sockets drop
        try pair.restart(store: try ServerStore(directory: dir.file("server")))
        let restartedAt = pair.host.virtualNow
        chat(14)
        pair.run(milliseconds: 4_000)
        let after = Set(try #require(pair.host.user(named: "ada")).world.ledger.map(\.txId))
        #expect(before.count >= 5 && before.allSatisfy { after.contains($0) }, "everything the world had before the kill is still there")
        for c in [ada, bo] {
            let (lost, duplicates, incoming) = try Self.lostAndDuplicated(pair, c, settle: 120_000)
            #expect(lost.isEmpty, "\(c.name) lost \(lost.count) of \(incoming)\n\(Self.lines(c).suffix(30).joined(separator: "\n"))")
            #expect(duplicates == 0)
            // What it sent is in the world, some of it after the restart; nothing is left in the outbox.
            let world = try #require(pair.host.user(named: c.name)).world
            let outgoing = world.ledger.filter { $0.direction == .outgoing }
            #expect(outgoing.contains { $0.blockTime > restartedAt }, "\(c.name) sent nothing after the restart")
            let stored = c.session.storage.allMessages().filter { $0.message.direction == .outgoing }
            #expect(stored.allSatisfy { m in outgoing.contains { $0.txId == m.message.txId } })
        }
        pair.host.store?.close()
    }

    @Test("every fault of the network, given by the operator, is what the client's bar shows, whoever gave it; each one lifted, the bar is clear")
    func everyFaultOnTheBar() throws {
        let pair = try WorldPair(contacts: 2, trafficPerHour: 60, speed: 60)
        let ada = try pair.join("ada")
        pair.run(milliseconds: 5_000)
        let world = try #require(pair.host.user(named: "ada")).world
        let faults: [(give: String, lift: String)] = [
            ("push drop 100%", "push up"), ("push delay 90s", "push up"), ("push down", "push up"),
            ("realtime down", "realtime up"), ("realtime flaky 50%", "realtime up"), ("indexer down", "indexer up"),
            ("indexer latency 5s", "indexer latency 0s"), ("network off", "network on"),
        ]
        for (give, lift) in faults {
            Self.fault(pair, give, user: "ada")
            pair.run(milliseconds: 500)
            #expect(!world.faults.words.isEmpty, "\(give): the world has no fault")
            #expect(ada.session.faults.words == world.faults.words, "\(give): the bar says \(ada.session.faults.words), the world \(world.faults.words)")
            Self.fault(pair, lift, user: "ada")
            pair.run(milliseconds: 500)
            #expect(world.faults.words.isEmpty && ada.session.faults.words.isEmpty, "\(lift): \(ada.session.faults.words)")
        }
        // A fault of every user (no ?user=) reaches this one's bar too.
        Self.fault(pair, "indexer down")
        pair.run(milliseconds: 500)
        #expect(ada.session.faults.words == ["indexer down"])
    }

    @Test("an operator's receive line reaches that user's simulated contact's conversation (it was parsed in a scenario with no contacts); an unknown contact is refused saying why")
    func operatorReceive() throws {
        let pair = try WorldPair(contacts: 2, speed: 60)
        let ada = try pair.join("ada")
        pair.run(milliseconds: 3_000)
        Self.fault(pair, "receive alice \"from the operator\"", user: "ada")
        #expect(pair.run(upTo: 20_000) { Self.lines(ada).contains { $0.contains("from alice") } && ada.session.storage.allMessages().contains { $0.message.body == "from the operator" } })
        var headers = HTTPHeaders()
        headers.add(name: ProtocolVersion.header, value: ProtocolVersion.headerValue)
        headers.add(name: "Authorization", value: "Bearer \(pair.server.adminToken)")
        var answer = (0, Data())
        pair.server.serve(.POST, "/admin/fault?user=ada", headers: headers, body: Data("receive zoe \"hi\"".utf8), peer: "127.0.0.1") { answer = ($0, $1) }
        #expect(answer.0 == 400 && String(decoding: answer.1, as: UTF8.self).contains("no simulated contact of ada"))
    }

    @Test("truth beside belief on a server: given the operator's token the client reads its world's faults from /admin/truth, whoever gave them, and may show them; without it, it knows only what it was told and claims no truth")
    func truthWithTheOperatorsToken() throws {
        let pair = try WorldPair(contacts: 2, trafficPerHour: 60, speed: 60)
        let seer = try pair.join("seer", adminToken: pair.server.adminToken)
        let plain = try pair.join("plain")
        #expect(seer.session.app.knowsTruth && !plain.session.app.knowsTruth)  // the first read answered at the join
        // The operator breaks push for both; the server's truth says so to the one that asks.
        Self.fault(pair, "push drop 100%")
        pair.run(milliseconds: 2_000)
        #expect(seer.session.faults.words == ["push drop 100%"])
        // The world ends a fault by itself (here the operator, for the truth's sake): within a wall second the reader knows.
        Self.fault(pair, "push up")
        pair.run(milliseconds: 2_000)
        #expect(seer.session.faults.words.isEmpty)
        Self.fault(pair, "indexer latency 2s", user: "seer")
        // A wrong token reads nothing: the session claims no truth, and says why once.
        let wrong = try pair.join("wrong", adminToken: "not-the-token")
        #expect(!wrong.session.app.knowsTruth)
        #expect(wrong.session.log.contains { $0.line.contains("the server's truth cannot be read") })
        Self.fault(pair, "indexer down", user: "seer")
        pair.run(milliseconds: 2_000)
        // Two faults of one service stay two, as the server says them (keyed by service, one was lost).
        #expect(seer.session.faults.words == ["indexer down", "indexer latency 2s"])
        #expect(seer.session.faults.words == (try #require(pair.host.user(named: "seer"))).world.faults.words)
        #expect(wrong.session.faults.words.isEmpty)
    }
}
