import ChatStore
import SimulatedWorldInProfile
import Foundation
import SimulatedWorld
import Simulation
import SyncCore
import SyncEngine
import Testing

@Suite("A full disk: the chat goes on, the trouble shows once, nothing is lost")
struct FullDiskTests {
    /// SQLite's own "database or disk is full" (SQLITE_FULL), made by capping the file at the
    /// pages it has: every write that needs a new page fails as on a full disk.
    @Test("SQLITE_FULL: messages are kept in memory and shown, the trouble is logged once each way, a retry writes everything, the file reopens with all of it")
    func sqliteFull() throws {
        let dir = try TemporaryDirectory("store")
        defer { dir.remove() }
        let path = dir.file("p.sqlite")
        let script = try ScenarioParser.parse("""
            seed 9
            duration 2h
            contacts 6
            traffic 600/h
            at 20m background
            at 30m foreground
            at 40m send alice "written while the disk is full"
            """, file: "full.scenario")
        var shownDuringTrouble: [String] = []
        let (ledger, trouble): ([NetworkMessage], [TimedEvent]) = try {
            let db = try SQLiteChatStorage.open(path: path)
            let run = ScenarioRun(scenario: script, storage: db, persistence: db)
            run.advance(to: t(10))
            let pages = try #require(Int(try db.pragma("page_count") ?? ""))
            try db.execute("PRAGMA max_page_count = \(pages)")
            run.advance(to: t(50))
            #expect(run.driver.storeTrouble == "disk full")
            #expect(run.driver.unsavedChanges > 20)
            shownDuringTrouble = run.log.filter { $0.at > t(10) }.compactMap {
                if case .messageStored(let m, _) = $0.event { return m.txId } else { return nil }
            }
            try db.execute("PRAGMA max_page_count = 1000000")  // space again
            run.run()
            #expect(run.driver.storeTrouble == nil)
            run.checkpoint()
            return (run.world.ledger, run.log.filter { if case .storeTrouble = $0.event { return true } else { return false } })
        }()
        #expect(trouble.count == 2)  // once when it starts, once when it ends: no flood
        #expect(trouble.first?.event.line.hasPrefix("store: cannot write (disk full); the chat goes on in memory") == true)
        #expect(trouble.last?.event.line.hasPrefix("store: writing again") == true)
        #expect(shownDuringTrouble.count > 20)  // the chat went on
        // Reopened: every message of the world is stored once, the world's clock was saved.
        let db = try SQLiteChatStorage.open(path: path)
        let stored = db.allMessages().map(\.txId)
        #expect(Set(stored).count == stored.count)
        #expect(Set(ledger.map(\.txId)).subtracting(stored).isEmpty)
        #expect(Set(shownDuringTrouble).isSubset(of: Set(stored)))
        #expect(db.allMessages().contains { $0.message.body == "written while the disk is full" })
        let world = try #require(try db.loadWorld())
        #expect(world.clock >= t(120))
        #expect(world.ledger.count == ledger.count)
    }
}
