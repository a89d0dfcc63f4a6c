import ChatStore
import SimulatedWorldInProfile
import Foundation
import SimulatedWorld
import Simulation
import SyncCore
import SyncEngine
import Testing
// Every file of this target sees TestSupport's helpers (`t`, `TemporaryDirectory`, …).
@_exported import TestSupport

func msg(_ id: String, _ t: Int64, via: Channel, from: String = "kaspa:a", direction: Direction = .incoming) -> StoredMessage {
    StoredMessage(message: NetworkMessage(txId: id, conversation: Address(from), direction: direction, kind: .contextual, body: "b\(id)",
                                          blockTime: Instant(milliseconds: t)), receivedAt: Instant(milliseconds: t + 1000), via: via)
}

@Suite("SQLite store")
struct StoreTests {
    @Test("a new file is migrated; reopening keeps everything; mode 0600, WAL")
    func migrateAndReopen() throws {
        let dir = try TemporaryDirectory("store")
        defer { dir.remove() }
        let path = dir.file("data/p.sqlite")
        do {
            let s = try SQLiteChatStorage.open(path: path)
            _ = try s.commit([msg("t1", 10, via: .push)], cursor: (.contextual(Address("kaspa:a"), .incoming), SyncCursor(lastFetchedBlockTime: Instant(milliseconds: 10))))
            try s.upsertContact(Contact(address: Address("kaspa:a"), handle: "alice", displayName: "Alice"))
            try s.setSetting("theme", "high-contrast")
            try s.saveState(PersistedEngineState(reliability: .init(state: .reliable, consecutiveMisses: 2, lastReregisterAt: Instant(milliseconds: 5)),
                                                 gate: .init(lastFinishedAt: Instant(milliseconds: 7)), mode: .backgroundFetch, preview: .contact, tokenStatus: .active))
        }
        let attrs = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attrs[.posixPermissions] as? Int) == 0o600)
        let dirAttrs = try FileManager.default.attributesOfItem(atPath: (path as NSString).deletingLastPathComponent)
        #expect((dirAttrs[.posixPermissions] as? Int) == 0o700)
        let s = try SQLiteChatStorage.open(path: path)
        #expect(s.messageCount() == 1)
        #expect(s.message(txId: "t1")?.via == .push)
        #expect(s.cursor(.contextual(Address("kaspa:a"), .incoming)).lastFetchedBlockTime == Instant(milliseconds: 10))
        #expect(s.contacts().map(\.handle) == ["alice"])
        #expect(s.setting("theme") == "high-contrast")
        let state = try #require(s.loadState())
        #expect(state.reliability == .init(state: .reliable, consecutiveMisses: 2, lastReregisterAt: Instant(milliseconds: 5)))
        #expect(state.gate.lastFinishedAt == Instant(milliseconds: 7))
        #expect(state.mode == .backgroundFetch && state.preview == .contact && state.tokenStatus == .active)
        #expect(s.unreadCounts() == [Address("kaspa:a"): 1])
        try s.markRead(Address("kaspa:a"))
        #expect(s.unreadCounts().isEmpty)
        #expect(try s.integrityCheck() == "ok")
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test("exactly once: a txId carried again by another channel is ignored and keeps its first channel")
    func exactlyOnce() throws {
        let s = try SQLiteChatStorage.inMemory()
        #expect(try s.commit([msg("t1", 10, via: .realtime)], cursor: nil).count == 1)
        #expect(try s.commit([msg("t1", 10, via: .push)], cursor: nil).isEmpty)
        #expect(try s.commit([msg("t1", 10, via: .fetch), msg("t2", 20, via: .fetch)], cursor: nil).map(\.txId) == ["t2"])
        #expect(s.messageCount() == 2)
        #expect(s.message(txId: "t1")?.via == .realtime)
    }

    @Test("exactly once on the engine: realtime, push and catch-ups carry the same messages; each is stored once")
    func exactlyOnceOnEngine() throws {
        let s = try SQLiteChatStorage.inMemory()
        let scenario = try ScenarioParser.parse("""
            seed 4
            duration 40m
            contacts 4
            traffic 60/h
            at 5m sync
            at 10m background
            at 15m push drop 100%
            at 20m foreground
            at 21m push drop 0%
            at 22m sync
            at 30m push delay 50s
            at 35m sync
            """, file: "once.scenario")
        let run = ScenarioRun(scenario: scenario, storage: s)
        run.run()
        let channels = Set(s.allMessages().map(\.via))
        #expect(channels.isSuperset(of: [.realtime, .push, .fetch]))
        #expect(try s.snapshot().duplicateTxIds == 0)
        #expect(s.messageCount() == run.world.ledger.count)
        #expect(run.driver.counters.overlappingSyncs == 0)
    }

    @Test("a cursor and the messages it covers commit together: a failure between them leaves neither")
    func atomicCursor() throws {
        let s = try SQLiteChatStorage.inMemory()
        let object = SyncObject.contextual(Address("kaspa:a"), .incoming)
        s.failBetweenMessagesAndCursor = true
        #expect(throws: StorageError.self) {
            try s.commit([msg("t1", 10, via: .fetch)], cursor: (object, SyncCursor(lastFetchedBlockTime: Instant(milliseconds: 10))))
        }
        #expect(!s.hasMessage(txId: "t1"))
        #expect(s.cursor(object).lastFetchedBlockTime == nil)
        s.failBetweenMessagesAndCursor = false
        _ = try s.commit([msg("t1", 10, via: .fetch)], cursor: (object, SyncCursor(lastFetchedBlockTime: Instant(milliseconds: 10))))
        #expect(s.hasMessage(txId: "t1") && s.cursor(object).lastFetchedBlockTime == Instant(milliseconds: 10))
    }

    @Test("the crash check's cursor oracle: a cursor past its object's newest stored message is ahead when the world's ledger has a message there the store lacks, not when a proof moved it past nothing (rule 9); without a ledger, past the newest is ahead")
    func cursorAheadOracle() throws {
        let alice = Address("kaspa:a")
        let object = SyncObject.contextual(alice, .incoming)
        func world(_ id: String, _ t: Int64) -> NetworkMessage {
            NetworkMessage(txId: id, conversation: alice, direction: .incoming, kind: .contextual, body: "hi", blockTime: Instant(milliseconds: t))
        }
        func cursor(_ s: SQLiteChatStorage, _ t: Int64) throws {
            _ = try s.commit([], cursor: (object, SyncCursor(lastFetchedBlockTime: Instant(milliseconds: t))))
        }
        let s = try SQLiteChatStorage.inMemory()
        try s.saveWorldMessage(world("t1", 10))
        try s.saveWorldMessage(world("t2", 20))
        _ = try s.commit([msg("t1", 10, via: .fetch)], cursor: (object, SyncCursor(lastFetchedBlockTime: Instant(milliseconds: 10))))
        #expect(try s.snapshot().cursorsAhead.isEmpty)
        try cursor(s, 20)  // past t2, which the store lacks: a cursor written without its message
        #expect(try s.snapshot().cursorsAhead == ["contextual/kaspa:a/in at 20 > 10"])
        _ = try s.commit([msg("t2", 20, via: .fetch)], cursor: nil)
        try cursor(s, 30)  // a proof: nothing landed between 20 and 30
        #expect(try s.snapshot().cursorsAhead.isEmpty)
        try s.saveWorldMessage(world("t3", 25))  // the world had one there after all
        #expect(try s.snapshot().cursorsAhead == ["contextual/kaspa:a/in at 30 > 20"])
        let bare = try SQLiteChatStorage.inMemory()  // no world's ledger in the file
        _ = try bare.commit([msg("t1", 10, via: .fetch)], cursor: (object, SyncCursor(lastFetchedBlockTime: Instant(milliseconds: 30))))
        #expect(try bare.snapshot().cursorsAhead == ["contextual/kaspa:a/in at 30 > 10"])
    }

    @Test("relaunching a profile resumes the same world and the learned push state, as a cold start")
    func resumeProfile() throws {
        let dir = try TemporaryDirectory("store")
        defer { dir.remove() }
        let path = dir.file("p.sqlite")
        let scenario = try ScenarioParser.parse("seed 9\nduration 100h\ncontacts 5\ntraffic 40/h\nsettle 0s\nat 10m send alice \"one\"\nat 20m push drop 100%\nat 30m send bob \"two\"\nat 31m send carol \"three\"\nat 40m push drop 0%", file: "live")
        var firstLedger: [String] = []
        var firstClock = Instant.zero
        var firstWallet: [String] = []
        var learned: PushReliability.Persisted?
        do {
            let s = try SQLiteChatStorage.open(path: path)
            let run = ScenarioRun(scenario: scenario, storage: s, persistence: s)
            #expect(!run.resumed)
            run.advance(to: .zero + .minutes(45))
            run.checkpoint()
            firstLedger = run.world.ledger.map(\.txId)
            firstClock = run.scheduler.now
            firstWallet = run.world.utxos
            learned = run.driver.reliability.persisted
            #expect(learned?.state != .unknown)
        }
        let s = try SQLiteChatStorage.open(path: path)
        let run = ScenarioRun(scenario: scenario, storage: s, persistence: s)
        #expect(run.resumed)
        #expect(run.scheduler.now == firstClock)
        #expect(run.world.ledger.map(\.txId) == firstLedger)
        // The wallet too: the same unspent outputs, the three sends' spent ones gone.
        #expect(run.world.utxos == firstWallet)
        #expect(run.world.utxos.count == run.world.ledger.filter { $0.direction == .incoming }.count - 3)
        #expect(run.world.contacts.map(\.handle) == ["alice", "bob", "carol", "dave", "erin"])
        #expect(run.driver.reliability.persisted == learned)
        // Rule 10: a cold start, not a forced reconnect, and not a first launch.
        expectDecisions(run, matching: about(.realtime, .lifecycle, .launched), [
            "00:45:00.000 launched: 32 stored messages, push reliable, mode remote-push",
            "00:45:00.000 lifecycle foreground: relaunch: a cold start of a saved profile",
            "00:45:00.000 realtime connecting: cold start",
        ])
        run.advance(to: firstClock + .minutes(30))
        // New traffic is new: no txId of the first run comes again.
        let fresh = run.world.ledger.dropFirst(firstLedger.count).map(\.txId)
        #expect(!fresh.isEmpty)
        #expect(Set(fresh).isDisjoint(with: firstLedger))
        #expect(try s.snapshot().duplicateTxIds == 0)
    }

    @Test("a resumed wallet spends as the live one did: a send spends when it is published, not when it lands a second later")
    func resumedWallet() throws {
        let dir = try TemporaryDirectory("store")
        defer { dir.remove() }
        let path = dir.file("w.sqlite")
        // The wallet is empty when alice's message is sent; bob's lands in the second before
        // the send's block, so the send spent nothing and bob's output stays unspent.
        let scenario = try ScenarioParser.parse("seed 4\nduration 10h\ncontacts 2\ntraffic 0/h\nsettle 0s\nat 1m send alice \"x\"\nat 1m500ms receive bob \"b\"", file: "wallet")
        var live: [String] = []
        do {
            let s = try SQLiteChatStorage.open(path: path)
            let run = ScenarioRun(scenario: scenario, storage: s, persistence: s)
            run.advance(to: .zero + .minutes(5))
            run.checkpoint()
            live = run.world.utxos
        }
        let bob = try #require(live.first)
        #expect(live.count == 2)  // bob's, and alice's reply
        let s = try SQLiteChatStorage.open(path: path)
        let run = ScenarioRun(scenario: scenario, storage: s, persistence: s)
        #expect(run.resumed)
        #expect(run.world.utxos == live)
        #expect(run.world.ledger.first { $0.txId == bob }?.body == "b")
    }

    /// Texts with NULs and other controls in the middle, at the ends, and alone.
    static let hostileTexts = [
        "before\u{0}after", "\u{0}", "\u{0}lead and trail\u{0}", "a\u{0}\u{0}b\u{1B}[2J\r\n\t\u{7F}\u{9B}c\u{0}",
        "e\u{301}\u{0}漢🎉\u{202E}", "",
    ]

    @Test("bodies and names with NULs and other controls survive commit → reopen → read byte for byte: messages in and out, pending pushes, the profile's world")
    func controlsRoundTrip() throws {
        let dir = try TemporaryDirectory("store")
        defer { dir.remove() }
        let path = dir.file("nul.sqlite")
        let texts = Self.hostileTexts
        func message(_ i: Int, _ direction: Direction) -> NetworkMessage {
            NetworkMessage(txId: "\(direction)-\(i)", conversation: Address("kaspa:a"), direction: direction, kind: .contextual,
                           body: texts[i], blockTime: Instant(milliseconds: Int64(i) * 1000))
        }
        let sent = texts.indices.flatMap { [message($0, .incoming), message($0, .outgoing)] }
        do {
            let s = try SQLiteChatStorage.open(path: path)
            _ = try s.commit(sent.map { StoredMessage(message: $0, receivedAt: $0.blockTime, via: .fetch) }, cursor: nil)
            for m in sent where m.direction == .incoming { try s.appendPendingPush(PendingPush(message: m, arrivedAt: m.blockTime)) }
            try s.saveWorldClock(seed: 1, clock: .zero, tokenStatus: .active)
            for m in sent { try s.saveWorldMessage(m) }
            for (i, name) in texts.enumerated() {
                try s.upsertContact(Contact(address: Address("kaspa:c\(i)"), handle: "c\(i)", displayName: "Mal" + name))
                try s.saveWorldContact(Contact(address: Address("kaspa:c\(i)"), handle: "c\(i)", displayName: "Mal" + name))
            }
        }
        let s = try SQLiteChatStorage.open(path: path)
        func bytes(_ ms: [NetworkMessage]) -> [[UInt8]] { ms.map { Array($0.body.utf8) } }
        #expect(bytes(s.allMessages().map(\.message)) == bytes(sent))
        #expect(bytes(s.messages(in: Address("kaspa:a")).map(\.message)) == bytes(sent))
        #expect(bytes(s.latestMessages(in: Address("kaspa:a"), limit: 100).map(\.message)) == bytes(sent))
        for m in sent { #expect(s.message(txId: m.txId).map { Array($0.message.body.utf8) } == Array(m.body.utf8)) }
        #expect(bytes(s.pendingPushes().map(\.message)) == bytes(sent.filter { $0.direction == .incoming }))
        let world = try #require(try s.loadWorld())
        #expect(bytes(world.ledger) == bytes(sent))
        let names = texts.map { Array(("Mal" + $0).utf8) }
        #expect(s.contacts().map { Array($0.displayName.utf8) } == names)
        #expect(world.contacts.map { Array($0.displayName.utf8) } == names)
    }

    @Test("a scenario's receive and send with a NUL are stored whole, through the engine")
    func scenarioTextThroughTheEngine() throws {
        let s = try SQLiteChatStorage.inMemory()
        let scenario = try ScenarioParser.parse(#"""
            duration 1h
            contacts 2
            traffic 0/h
            at 1m receive alice "before\x00after"
            at 2m send bob "mine\x00tail\x00"
            """#, file: "nul.scenario")
        let run = ScenarioRun(scenario: scenario, storage: s)
        run.run()
        let bodies = Set(s.allMessages().map(\.message.body))
        #expect(bodies.contains("before\u{0}after"))
        #expect(bodies.contains("mine\u{0}tail\u{0}"))
    }

    @Test("a profile written by an older synchat, with its texts stored as TEXT, reads as before")
    func olderTextRows() throws {
        let dir = try TemporaryDirectory("store")
        defer { dir.remove() }
        let path = dir.file("old.sqlite")
        try runSQL(path, oldWorldTables + """
            INSERT INTO message (txId, conversation, direction, kind, body, blockTime, receivedAt, via, unread)
                VALUES ('old', 'kaspa:a', 'incoming', 'contextual', 'written as TEXT: 漢🎉', 1000, 2000, 'push', 1);
            INSERT INTO pendingPush (txId, conversation, kind, body, blockTime, arrivedAt)
                VALUES ('old', 'kaspa:a', 'contextual', 'pending TEXT', 1000, 1500);
            INSERT INTO worldState (id, seed, clock, tokenStatus) VALUES (1, 5, 3000, 'active');
            INSERT INTO worldMessage (txId, conversation, direction, kind, body, blockTime)
                VALUES ('old', 'kaspa:a', 'incoming', 'contextual', 'world TEXT', 1000);
            INSERT INTO contact (address, handle, displayName, muted) VALUES ('kaspa:a', 'alice', 'Alice (TEXT)', 0);
            INSERT INTO worldContact (address, handle, displayName, muted) VALUES ('kaspa:a', 'alice', 'Alice (world)', 0);
            """)
        let s = try SQLiteChatStorage.open(path: path)
        #expect(s.message(txId: "old")?.message.body == "written as TEXT: 漢🎉")
        #expect(s.pendingPushes().map(\.message.body) == ["pending TEXT"])
        #expect(try s.loadWorld()?.ledger.map(\.body) == ["world TEXT"])
        #expect(s.contacts().map(\.displayName) == ["Alice (TEXT)"])
        #expect(try s.loadWorld()?.contacts.map(\.displayName) == ["Alice (world)"])
    }

    @Test("the world's tables are the world's schema part: a store that does not keep a world has none; an old file, whose first migration made them, keeps its world; a newer world part is refused when used, not at open")
    func worldIsItsOwnPart() throws {
        let dir = try TemporaryDirectory("store")
        defer { dir.remove() }
        func tables(_ path: String) throws -> Set<String> {
            let s = try SQLiteChatStorage.open(path: path)
            return Set(try s.strings("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'world%'"))
        }
        // A chat store alone: no world tables.
        let plain = dir.file("plain.sqlite")
        _ = try SQLiteChatStorage.open(path: plain)
        #expect(try tables(plain).isEmpty)
        // A profile keeping its world: the part makes them, once; it reads back what it wrote.
        let profile = dir.file("profile.sqlite")
        do {
            let s = try SQLiteChatStorage.open(path: profile)
            try s.saveWorldClock(seed: 7, clock: Instant(milliseconds: 9000), tokenStatus: .active)
            try s.saveWorldContact(Contact(address: Address("kaspa:b"), handle: "bob", displayName: "Bob"))
        }
        #expect(try tables(profile) == ["worldState", "worldContact", "worldMessage"])
        let back = try #require(try SQLiteChatStorage.open(path: profile).loadWorld())
        #expect(back.seed == 7 && back.clock == Instant(milliseconds: 9000) && back.contacts.map(\.handle) == ["bob"])
        #expect(try SQLiteChatStorage.open(path: profile).strings("SELECT identifier FROM grdb_migrations WHERE identifier LIKE 'world/%'") == ["world/v1"])
        // An old file: v1 made the world's tables, with rows in them; the part takes them as they are.
        let old = dir.file("old.sqlite")
        try runSQL(old, oldWorldTables + """
            INSERT INTO worldState (id, seed, clock, tokenStatus) VALUES (1, 5, 3000, 'active');
            INSERT INTO worldContact (address, handle, displayName, muted) VALUES ('kaspa:a', 'alice', 'Alice', 1);
            """)
        let oldWorld = try #require(try SQLiteChatStorage.open(path: old).loadWorld())
        #expect(oldWorld.seed == 5 && oldWorld.contacts.map(\.muted) == [true])
        // A later synchat's world part: the chat opens (the part is not its to judge); keeping
        // the world is refused, naming the file.
        try runSQL(profile, "INSERT INTO grdb_migrations (identifier) VALUES ('world/v2-from-the-future')")
        let s = try SQLiteChatStorage.open(path: profile)
        #expect(s.contacts().isEmpty)
        #expect {
            try s.loadWorld()
        } throws: { error in
            (error as? StoreError).map { $0.path == profile && $0.description.contains("written by a newer synchat (schema world/v2-from-the-future)") } ?? false
        }
    }

    @Test("a corrupt or non-SQLite file is refused with its path and what to do")
    func corruptFile() throws {
        let dir = try TemporaryDirectory("store")
        defer { dir.remove() }
        let path = dir.file("bad.sqlite")
        try Data(repeating: 0x42, count: 8192).write(to: URL(fileURLWithPath: path))
        #expect {
            try SQLiteChatStorage.open(path: path)
        } throws: { error in
            (error as? StoreError).map { $0.path == path && $0.description.contains("not a synchat store") && $0.description.contains("move it away") } ?? false
        }
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(original == Data(repeating: 0x42, count: 8192))  // never reset: nothing is lost
    }

    @Test("a store written by a newer schema is refused, untouched")
    func newerSchema() throws {
        let dir = try TemporaryDirectory("store")
        defer { dir.remove() }
        let path = dir.file("new.sqlite")
        do {
            let s = try SQLiteChatStorage.open(path: path)
            _ = try s.commit([msg("keep", 1, via: .fetch)], cursor: nil)
        }
        // A later synchat added a migration.
        try runSQL(path, "INSERT INTO grdb_migrations (identifier) VALUES ('v2-from-the-future')")
        #expect {
            try SQLiteChatStorage.open(path: path)
        } throws: { error in
            (error as? StoreError)?.description.contains("written by a newer synchat") ?? false
        }
    }

    @Test("a profile has one holder at a time: a second is refused, naming the profile, its file and the holder's pid, until the store is released")
    func profileLock() throws {
        let dir = try TemporaryDirectory("store")
        defer { dir.remove() }
        let path = dir.file("data/p.sqlite")
        var first: SQLiteChatStorage? = try SQLiteChatStorage.openProfile("p", path: path)
        _ = try first?.commit([msg("t1", 10, via: .push)], cursor: nil)
        let lockFile = path + ".lock"
        #expect((try FileManager.default.attributesOfItem(atPath: lockFile)[.posixPermissions] as? Int) == 0o600)
        #expect(try String(contentsOfFile: lockFile, encoding: .utf8) == "\(getpid())\n")
        // flock belongs to an open file description: this very process is refused too.
        #expect {
            try SQLiteChatStorage.openProfile("p", path: path)
        } throws: { error in
            let held = error as? ProfileLock.Held
            return held?.profile == "p" && held?.storePath == path && held?.holder == getpid()
                && held?.description == "profile \"p\" (\(path)) is in use by another synchat (pid \(getpid())); quit it first, or use another --profile"
        }
        // Stores opened without the lock (tests, the crash harness) are not refused.
        #expect(try SQLiteChatStorage.open(path: path).messageCount() == 1)
        first = nil
        let again = try SQLiteChatStorage.openProfile("p", path: path)
        #expect(again.messageCount() == 1)
    }

    @Test("a data directory that cannot be created or written is an error naming it")
    func unwritableDirectory() throws {
        let dir = try TemporaryDirectory("store")
        defer { dir.remove() }
        let blocker = dir.url.appendingPathComponent("synchat")
        try Data("a file where the directory should be".utf8).write(to: blocker)
        #expect {
            try SQLiteChatStorage.open(path: blocker.appendingPathComponent("default.sqlite").path)
        } throws: { error in
            (error as? StoreError).map { $0.path == blocker.path && $0.message.contains("--ephemeral") } ?? false
        }
    }
}

/// Runs SQL on a store file through a second handle (as another program would).
/// The world's tables as the store's own first migration made them, before they were the
/// world's schema part: what an old profile file has.
let oldWorldTables = """
    CREATE TABLE worldState (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        seed INTEGER NOT NULL, clock INTEGER NOT NULL, tokenStatus TEXT NOT NULL);
    CREATE TABLE worldContact (
        address TEXT PRIMARY KEY NOT NULL, handle TEXT NOT NULL,
        displayName TEXT NOT NULL, muted INTEGER NOT NULL DEFAULT 0);
    CREATE TABLE worldMessage (
        txId TEXT PRIMARY KEY NOT NULL, conversation TEXT NOT NULL, direction TEXT NOT NULL,
        kind TEXT NOT NULL, body TEXT NOT NULL, blockTime INTEGER NOT NULL);

    """

func runSQL(_ path: String, _ sql: String) throws {
    let s = try SQLiteChatStorage.open(path: path)
    try s.execute(sql)
}
