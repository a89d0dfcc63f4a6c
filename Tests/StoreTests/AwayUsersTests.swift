import Foundation
import GRDB
import SyncCore
import Testing
import ChatServer

/// Users who never come back must not make the server grow. A user away (no
/// request, no socket) for `--away-after` has contacts that write nothing until it is back;
/// the server holds at most `--max-users`; its checkpoint writes only what changed. The wall
/// clock is the test's: nothing sleeps.
@Suite("Users away from a server")
struct AwayUsersTests {
    final class Wall: @unchecked Sendable { var ms: Int64 = 1_800_000_000_000 }

    static func incoming(_ user: WorldHost.User) -> Int { user.world.ledger.filter { $0.direction == .incoming }.count }

    @Test("a user with no request and no socket for --away-after has contacts that write nothing until it is back, then write again from then; a user holding a socket is never away")
    func contactsPauseWhileAway() throws {
        let wall = Wall()
        let host = try WorldHost(seed: 1, contacts: 3, trafficPerHour: 300, speed: 60, wallClock: { wall.ms })
        host.awayAfterMs = 60_000
        let zed = try host.join(name: "zed", secret: nil).user
        let amy = try host.join(name: "amy", secret: nil).user
        wall.ms += 30_000  // half an hour of the world at 300 messages an hour
        host.advance()
        #expect(Self.incoming(zed) > 50 && Self.incoming(amy) > 50)
        #expect(host.pauseAway { _ in false } == 0, "nobody is away 30 s after joining")
        wall.ms += 31_000
        #expect(host.pauseAway { $0 === amy } == 1, "zed is away; amy holds a socket")
        let zedBefore = Self.incoming(zed), amyBefore = Self.incoming(amy)
        wall.ms += 120_000  // two hours of the world
        host.advance()
        #expect(Self.incoming(zed) == zedBefore, "nothing written to a user who is away")
        #expect(Self.incoming(amy) > amyBefore + 300)
        host.seen(zed)
        wall.ms += 30_000
        host.advance()
        #expect(Self.incoming(zed) > zedBefore + 50, "back: its contacts write again")
        #expect(host.pauseAway { _ in false } == 1 && !zed.world.traffic.paused && amy.world.traffic.paused,
                "zed, seen 30 s ago, is not away; amy, no longer holding its socket, is")
    }

    @Test("the server holds at most --max-users: a first join past it is refused, a rejoin is not")
    func maxUsers() throws {
        let host = try WorldHost(seed: 1, contacts: 1, trafficPerHour: 0, speed: 1)
        host.maxUsers = 2
        let first = try host.join(name: "zed", secret: nil)
        _ = try host.join(name: "amy", secret: nil)
        #expect(throws: WorldHost.JoinError.full) { try host.join(name: "bob2", secret: nil) }
        #expect(try host.join(name: "zed", secret: first.secret).isNew == false)
    }

    @Test("the checkpoint writes the tokens that changed since the last one, not every user's every five seconds")
    func checkpointWritesChanges() throws {
        let dir = NSTemporaryDirectory() + "synchat-away-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let host = try WorldHost(seed: 1, contacts: 1, trafficPerHour: 0, speed: 1, store: try ServerStore(directory: dir))
        for i in 0..<50 { _ = try host.join(name: "user\(i)", secret: nil) }
        let db = try DatabaseQueue(path: dir + "/world.sqlite")
        // A trigger in the file itself (SQLite runs it whichever connection updates) counts the
        // server's UPDATEs of a token, changed or not.
        try db.write { try $0.execute(sql: "CREATE TABLE tokenWrites(n INTEGER); CREATE TRIGGER counted AFTER UPDATE OF token ON user BEGIN INSERT INTO tokenWrites VALUES (1); END") }
        func writes() throws -> Int { try db.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM tokenWrites") ?? 0 } }
        try host.checkpoint()
        let first = try writes()
        #expect(first == 50, "the first checkpoint writes every token once (\(first))")
        try host.checkpoint()
        try host.checkpoint()
        #expect(try writes() == first, "nothing changed: nothing written")
    }
}

@Suite("A world caught up in bounded steps")
struct BoundedStepsTests {
    @Test("run(until:atMost:) runs at most that many entries a call, says whether it caught up, and ends where run(until:) would: the same entries, the same order")
    func boundedSteps() throws {
        func world(_ speed: Double) throws -> (WorldHost, AwayUsersTests.Wall) {
            let wall = AwayUsersTests.Wall()
            let host = try WorldHost(seed: 3, contacts: 4, trafficPerHour: 300, speed: speed, wallClock: { wall.ms })
            for i in 0..<6 { _ = try host.join(name: "u\(i)", secret: nil) }
            return (host, wall)
        }
        let (whole, wallA) = try world(60)
        let (stepped, wallB) = try world(60)
        wallA.ms += 60_000
        wallB.ms += 60_000
        whole.advance()
        var calls = 0
        while !stepped.advance(atMost: 200) { calls += 1 }
        #expect(calls >= 2, "an hour of 6 users at 300 an hour each is more than 200 entries: \(calls) calls")
        #expect(stepped.users.map { AwayUsersTests.incoming($0) } == whole.users.map { AwayUsersTests.incoming($0) })
        #expect(stepped.users.map { $0.world.ledger.map(\.txId) } == whole.users.map { $0.world.ledger.map(\.txId) })
        #expect(stepped.scheduler.now == whole.scheduler.now)
    }
}
