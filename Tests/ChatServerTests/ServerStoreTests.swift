import ChatStore
import Foundation
import SyncCore
import GRDB
import Testing
import TestSupport
import ChatServer
import SimulatedWorldInProfile

/// What `synchat server --data DIR` keeps, and who may read it.
@Suite("The server's data folder: hashed secrets, private files, one server at a time")
struct ServerStoreTests {
    /// SHA-256 by coreutils' `sha256sum`: an oracle that shares nothing with the server's code.
    static func sha256sum(_ text: String) throws -> String {
        let dir = try TemporaryDirectory("sha256sum")
        defer { dir.remove() }
        let file = dir.file("text")
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        let exit = try ChildProcess.run(["sha256sum", file], captureOutput: true)
        #expect(exit.status == 0, "sha256sum: exit \(exit.status)")
        return String(exit.out.prefix(64))
    }

    func mode(_ path: String) -> Int { ((try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? NSNumber)?.intValue ?? -1 }

    @Test("a join's secret is kept only as its SHA-256 (as sha256sum computes it); a restart still opens the user with it, and nothing else")
    func hashedSecrets() throws {
        let dir = try TemporaryDirectory("server-store")
        defer { dir.remove() }
        let data = dir.file("data")
        var secret = ""
        do {
            let store = try ServerStore(directory: data)
            let host = try WorldHost(seed: 1, contacts: 2, trafficPerHour: 0, speed: 1, store: store)
            let joined = try host.join(name: "zed", secret: nil)
            secret = try #require(joined.secret)
            #expect(joined.user.secretHash == "sha256:" + (try Self.sha256sum(secret)))
            #expect(host.user(secret: secret) === joined.user)
            #expect(host.user(secret: secret + "x") == nil)
            store.close()  // as a stopped server: the host and its worlds outlive this scope here
        }
        // No file of the folder holds the secret, in any form a reader could use.
        for file in try FileManager.default.contentsOfDirectory(atPath: data) {
            let bytes = try #require(FileManager.default.contents(atPath: (data as NSString).appendingPathComponent(file)))
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(file) holds the secret")
        }
        let store = try ServerStore(directory: data)
        let host = try WorldHost(seed: 1, contacts: 2, trafficPerHour: 0, speed: 1, store: store)
        #expect(throws: WorldHost.JoinError.wrongSecret) { try host.join(name: "zed", secret: (secret.first == "0" ? "1" : "0") + secret.dropFirst()) }
        let again = try host.join(name: "zed", secret: secret)
        #expect(!again.isNew && again.secret == nil)
        #expect(host.user(secret: secret)?.name == "zed")
    }

    @Test("a mute is saved with the contact and outlives a restart: the restored push service sends nothing for that contact")
    func mutesOutliveRestart() throws {
        let dir = try TemporaryDirectory("server-store")
        defer { dir.remove() }
        let data = dir.file("data")
        do {
            let store = try ServerStore(directory: data)
            let host = try WorldHost(seed: 1, contacts: 2, trafficPerHour: 0, speed: 1, store: store)
            let zed = try host.join(name: "zed", secret: nil).user
            zed.world.push.setMuted(try #require(zed.world.contact(handle: "alice")).address, true)  // as the relay does
            store.close()
        }
        let store = try ServerStore(directory: data)
        let host = try WorldHost(seed: 1, contacts: 2, trafficPerHour: 0, speed: 1, store: store)
        let world = try #require(host.user(named: "zed")).world
        #expect(world.contact(handle: "alice")?.muted == true && world.contact(handle: "bob")?.muted == false)
        world.push.registerToken()
        world.scheduler.run(until: world.scheduler.now + .seconds(5))
        #expect(world.push.tokenStatus == .active)
        world.deliverIncoming(from: try #require(world.contact(handle: "alice")), kind: .contextual, body: "muted")
        world.deliverIncoming(from: try #require(world.contact(handle: "bob")), kind: .contextual, body: "not muted")
        world.scheduler.run(until: world.scheduler.now + .seconds(30))
        #expect(world.push.sent == 1)
        store.close()
    }

    @Test("every body a user publishes, to a contact or to another user, and every text an operator's receive gives, is kept byte for byte across a restart: NUL, C0 and C1 controls, lone combining marks, 16 KiB")
    func bodiesByteForByte() throws {
        let dir = try TemporaryDirectory("server-store")
        defer { dir.remove() }
        let data = dir.file("data")
        let bodies = StoredBodies.all
        var sent: [String: String] = [:]  // txId → body
        do {
            let store = try ServerStore(directory: data)
            let host = try WorldHost(seed: 1, contacts: 2, trafficPerHour: 0, speed: 1, store: store)
            let zed = try host.join(name: "zed", secret: nil).user, amy = try host.join(name: "amy", secret: nil).user
            let alice = try #require(zed.world.contact(handle: "alice"))
            for body in bodies {
                for to in [alice.address, amy.address] {
                    let p = try host.publish(for: zed, to: to, body: body).get()
                    sent[p.message.txId] = body
                }
                #expect(host.apply(.receive(handle: "bob", text: body), to: zed) == nil)
            }
            zed.world.scheduler.run(until: zed.world.scheduler.now + .seconds(10))
            for m in zed.world.ledger where m.conversation == zed.world.contact(handle: "bob")?.address { sent[m.txId] = m.body }
            #expect(sent.count == bodies.count * 3)
            store.close()
        }
        let store = try ServerStore(directory: data)
        let host = try WorldHost(seed: 1, contacts: 2, trafficPerHour: 0, speed: 1, store: store)
        let zed = try #require(host.user(named: "zed")), amy = try #require(host.user(named: "amy"))
        for (txId, body) in sent {
            let kept = zed.world.ledger.first { $0.txId == txId }?.body
            #expect(kept.map { Array($0.utf8) } == Array(body.utf8), "\(txId): \(kept.map { Array($0.utf8).prefix(20) } ?? [])")
        }
        let received = amy.world.ledger.filter { $0.conversation == zed.address }.map(\.body)
        #expect(StoredBodies.bytes(received) == StoredBodies.bytes(bodies))
        store.close()
        // A profile's world (the embedded world a profile resumes) keeps them so too.
        let path = dir.file("profile.sqlite")
        do {
            let profile = try SQLiteChatStorage.open(path: path)
            try profile.saveWorldClock(seed: 1, clock: .zero, tokenStatus: .active)
            for (i, body) in bodies.enumerated() {
                try profile.saveWorldMessage(NetworkMessage(txId: "p\(i)", conversation: Address("kaspa:qa"), direction: .incoming, kind: .contextual,
                                                            body: body, blockTime: Instant(milliseconds: Int64(i))))
            }
        }
        let ledger = try #require(try SQLiteChatStorage.open(path: path).loadWorld()).ledger.map(\.body)
        #expect(StoredBodies.bytes(ledger) == StoredBodies.bytes(bodies))
    }

    @Test("a store written before hashes has its secrets replaced by their hashes when opened, and they still open their users")
    func migratesClearSecrets() throws {
        let dir = try TemporaryDirectory("server-store")
        defer { dir.remove() }
        let data = dir.file("data")
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let path = (data as NSString).appendingPathComponent("world.sqlite")
        do {
            let old = try DatabaseQueue(path: path)
            try old.write { db in
                try db.execute(sql: """
                    CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                    INSERT INTO grdb_migrations VALUES ('v1-server');
                    CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                    CREATE TABLE user (name TEXT PRIMARY KEY NOT NULL, secret TEXT NOT NULL, address TEXT NOT NULL,
                                       seed INTEGER NOT NULL, joined INTEGER NOT NULL, token TEXT NOT NULL DEFAULT 'none');
                    CREATE TABLE contact (user TEXT NOT NULL, handle TEXT NOT NULL, address TEXT NOT NULL, displayName TEXT NOT NULL,
                                          muted INTEGER NOT NULL, PRIMARY KEY (user, handle));
                    CREATE TABLE message (user TEXT NOT NULL, txId TEXT NOT NULL, conversation TEXT NOT NULL, direction TEXT NOT NULL,
                                          kind TEXT NOT NULL, body TEXT NOT NULL, blockTime INTEGER NOT NULL, PRIMARY KEY (user, txId));
                    INSERT INTO user (name, secret, address, seed, joined) VALUES ('ada', '0123456789abcdef0123456789abcdef', 'kaspa:qada', 5, 0);
                    """)
            }
        }
        let store = try ServerStore(directory: data)
        let saved = try #require(try store.users().first)
        #expect(saved.secretHash == "sha256:" + (try Self.sha256sum("0123456789abcdef0123456789abcdef")))
        let host = try WorldHost(seed: 1, contacts: 2, trafficPerHour: 0, speed: 1, store: store)
        #expect(host.user(secret: "0123456789abcdef0123456789abcdef")?.name == "ada")
    }

    @Test("a join writes one user and its own contacts, never the other users': 300 joins leave 300 × 2 contact rows, not 300²; everyone sees everyone, after a restart too, and a muted person stays muted")
    func joinsAreOneRow() throws {
        let dir = try TemporaryDirectory("server-store")
        defer { dir.remove() }
        let data = dir.file("data")
        let path = (data as NSString).appendingPathComponent("world.sqlite")
        do {
            let store = try ServerStore(directory: data)
            let host = try WorldHost(seed: 1, contacts: 2, trafficPerHour: 0, speed: 1, store: store)
            for i in 0..<300 { _ = try host.join(name: "u\(i)", secret: nil) }
            let u0 = try #require(host.user(named: "u0")), u299 = try #require(host.user(named: "u299")), u7 = try #require(host.user(named: "u7"))
            #expect(u0.world.contact(handle: "u299")?.address == u299.address && u0.world.isPerson(u299.address))
            #expect(u0.world.contact(handle: "u0") == nil && !u0.world.isPerson(u0.address), "a user is not its own contact")
            #expect(u0.world.allContacts.count == 2 + 299)
            u0.world.push.setMuted(u7.address, true)
            // A message between two users is routed by address.
            _ = u299.world.publish(from: u299.address, to: u0.address, body: "hi")
            u0.world.scheduler.run(until: u0.world.scheduler.now + .seconds(5))
            #expect(u0.world.ledger.contains { $0.body == "hi" && $0.conversation == u299.address })
            store.close()
        }
        let rows = try DatabaseQueue(path: path).read { db in
            try (Int.fetchOne(db, sql: "SELECT count(*) FROM contact") ?? -1,
                 Int.fetchOne(db, sql: "SELECT count(*) FROM contact WHERE address IN (SELECT address FROM user)") ?? -1)
        }
        #expect(rows.0 == 300 * 2 + 1 && rows.1 == 1, "contact rows: \(rows.0), of them people: \(rows.1) (the one muted)")
        let store = try ServerStore(directory: data)
        let host = try WorldHost(seed: 1, contacts: 2, trafficPerHour: 0, speed: 1, store: store)
        let u0 = try #require(host.user(named: "u0"))
        #expect(host.people.count == 300 && u0.world.allContacts.count == 2 + 299)
        #expect(u0.world.contact(handle: "u7")?.muted == true && u0.world.contact(handle: "u8")?.muted == false)
        #expect(host.user(named: "u8")?.world.contact(handle: "u0") != nil)
        store.close()
    }

    @Test("a folder from before the v3-people-shared migration, where every user is a contact row of every other, keeps only the muted ones")
    func oldPeopleRowsMigrate() throws {
        let dir = try TemporaryDirectory("server-store")
        defer { dir.remove() }
        let data = dir.file("data")
        let path = (data as NSString).appendingPathComponent("world.sqlite")
        var addresses: [String: String] = [:]
        do {
            let store = try ServerStore(directory: data)
            let host = try WorldHost(seed: 1, contacts: 1, trafficPerHour: 0, speed: 1, store: store)
            for name in ["ann", "ben", "cat"] { addresses[name] = try host.join(name: name, secret: nil).user.address.value }
            store.close()
        }
        // As the old server wrote it: every user a contact row of every other; ann muted cat.
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v3-people-shared'")
            for a in ["ann", "ben", "cat"] {
                for b in ["ann", "ben", "cat"] where a != b {
                    try db.execute(sql: "INSERT INTO contact (user, handle, address, displayName, muted) VALUES (?, ?, ?, ?, ?)",
                                   arguments: [a, b, addresses[b]!, b, a == "ann" && b == "cat" ? 1 : 0])
                }
            }
        }
        let store = try ServerStore(directory: data)
        let host = try WorldHost(seed: 1, contacts: 1, trafficPerHour: 0, speed: 1, store: store)
        let people = try DatabaseQueue(path: path).read { db in
            try Row.fetchAll(db, sql: "SELECT user, handle FROM contact WHERE address IN (SELECT address FROM user)").map { "\($0["user"] as String)→\($0["handle"] as String)" }
        }
        #expect(people == ["ann→cat"])
        let ann = try #require(host.user(named: "ann"))
        #expect(ann.world.contact(handle: "cat")?.muted == true && ann.world.contact(handle: "ben")?.muted == false)
        #expect(ann.world.allContacts.count == 1 + 2)
        store.close()
    }

    @Test("the folder is made 0700 and the database 0600 (its WAL too); a folder others can read is refused with the fix")
    func privateFiles() throws {
        let dir = try TemporaryDirectory("server-store")
        defer { dir.remove() }
        let data = dir.file("fresh")
        let old = umask(0o022)
        defer { umask(old) }
        do {
            let store = try ServerStore(directory: data)
            let host = try WorldHost(seed: 1, contacts: 2, trafficPerHour: 0, speed: 1, store: store)
            _ = try host.join(name: "zed", secret: nil)
            #expect(mode(data) == 0o700)
            #expect(mode(store.path) == 0o600)
            #expect(mode(store.path + "-wal") == 0o600)
            store.close()
        }
        let open = dir.file("open")
        try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        do {
            _ = try ServerStore(directory: open)
            Issue.record("a 0755 folder was taken")
        } catch let refused as ServerStore.Refused {
            #expect(refused.description == "the data directory \(open) is open to other users (mode 755): it holds every user's messages; run chmod 700 \(open), or choose another --data")
        }
        #expect(!FileManager.default.fileExists(atPath: (open as NSString).appendingPathComponent("world.sqlite")))
    }

    @Test("one server per folder: a second store on it is refused, naming the holder's pid; free again once the first is gone")
    func oneServerPerFolder() throws {
        let dir = try TemporaryDirectory("server-store")
        defer { dir.remove() }
        let data = dir.file("data")
        let first = try ServerStore(directory: data)
        withExtendedLifetime(first) {
            do {
                _ = try ServerStore(directory: data)
                Issue.record("two stores on one folder")
            } catch let refused as ServerStore.Refused {
                #expect(refused.description == "the data directory \(data) is in use by another synchat server (pid \(getpid())); stop it first, or choose another --data")
            } catch {
                Issue.record("not refused as in use: \(error)")
            }
        }
        first.close()  // a stopped server: the folder is free again
        _ = try ServerStore(directory: data)
    }

    @Test("a released lock is free at once, even while a child forked meanwhile still shares its file (it execs only later)")
    func releasedWhileAChildHoldsTheFile() throws {
        let dir = try TemporaryDirectory("profile-lock")
        defer { dir.remove() }
        let path = dir.file("p.sqlite")
        let lock = try ProfileLock.acquire(profile: "p", storePath: path)
        // The child shares the lock's open file description, as a spawn's child does until its exec.
        let child = fork()
        if child == 0 { usleep(3_000_000); _exit(0) }
        defer { kill(child, SIGKILL); var status: Int32 = 0; waitpid(child, &status, 0) }
        lock.release()
        let again = try ProfileLock.acquire(profile: "p", storePath: path)
        again.release()
    }
}

/// A corrupt `world.sqlite` is one line naming the file and the row, never a trap.
@Suite("The server's data folder: corrupt rows")
struct ServerStoreCorruptionTests {
    /// A folder with one user, its contacts and a message, then `damage` applied to the file.
    func damaged(_ damage: String) throws -> (dir: TemporaryDirectory, data: String, path: String) {
        let dir = try TemporaryDirectory("server-corrupt")
        let data = dir.file("data")
        let store = try ServerStore(directory: data)
        let host = try WorldHost(seed: 1, contacts: 2, trafficPerHour: 0, speed: 1, store: store)
        let zed = try host.join(name: "zed", secret: nil).user
        _ = zed.world.publish(from: zed.address, to: zed.world.contacts[0].address, body: "hi")
        store.close()
        let db = try DatabaseQueue(path: store.path)
        try db.write { try $0.execute(sql: damage) }
        try db.close()
        return (dir, data, store.path)
    }

    @Test("text in an INTEGER column, an unknown direction or token, a clock of speed 1e308: Refused, naming the file, the table and the row")
    func corruptRows() throws {
        for (damage, expected) in [
            ("UPDATE user SET seed = 'many'", "user row 1: seed is text, expected an integer"),
            ("UPDATE user SET token = 'stolen'", "user row 1: token \"stolen\" is not a token status"),
            ("UPDATE message SET direction = 'sideways'", "(of zed): direction \"sideways\" is neither incoming nor outgoing"),
            ("UPDATE message SET blockTime = 'soon'", "(of zed): blockTime is text, expected an integer"),
            ("UPDATE contact SET muted = 'yes'", "(of zed): muted is text, expected an integer"),
            ("UPDATE meta SET value = '0 0 1e308' WHERE key = 'anchor'", "meta row 'anchor': \"0 0 1e308\" is not a clock"),
            ("UPDATE meta SET value = x'00ff' WHERE key = 'anchor'", "meta row 'anchor': value is a blob, expected text"),
        ] {
            let (dir, data, path) = try damaged(damage)
            defer { dir.remove() }
            do {
                let store = try ServerStore(directory: data)
                defer { store.close() }
                _ = try WorldHost(seed: 1, contacts: 2, trafficPerHour: 0, speed: 1, store: store)
                Issue.record("\(damage): the server started on it")
            } catch let refused as ServerStore.Refused {
                #expect(refused.description.hasPrefix("\(path) is corrupt: "), "\(refused)")
                #expect(refused.description.contains(expected), "\(damage): \(refused)")
                #expect(refused.description.hasSuffix("restore it from a backup, or choose another --data"))
                #expect(!refused.description.contains("\n"))
            }
        }
    }
}
