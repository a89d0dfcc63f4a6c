import Directives
import Simulation
import SyncCore
import SyncEngine
import Testing

/// A fault key is a toggle resolved against the world's truth, through the session that
/// applies it, as the TUI does (`FaultToggle`, `LiveApp`'s `.toggleFault`).
@Suite("Fault keys resolve against the world's truth")
struct FaultToggleTests {
    /// Presses a fault key as the TUI does: resolved against the session's faults now.
    static func press(_ toggle: FaultToggle, _ session: AppSession) {
        for d in toggle.directives(from: session.faults) { session.apply(d) }
    }

    static func session() -> AppSession {
        AppSession(seed: 1, contacts: 2, trafficPerHour: 0, mode: .remotePush, policy: .adaptive, storage: InMemoryChatStorage())
    }

    @Test("p cycles ok → drop all → delay 90 s → ok; r, x and A toggle; two presses in one burst each act on what the one before left")
    func cycles() {
        let s = Self.session()
        let steps: [[String]] = [["push drop 100%"], ["push delay 1m30s"], []]
        for expected in steps {
            Self.press(.push, s)
            #expect(s.faults.words == expected)
        }
        Self.press(.realtime, s)
        Self.press(.indexer, s)
        Self.press(.network, s)
        #expect(Set(s.faults.words) == ["realtime down", "indexer down", "network off"])
        Self.press(.realtime, s)
        Self.press(.indexer, s)
        Self.press(.network, s)
        #expect(s.faults.words.isEmpty)
    }

    @Test("r after a scenario's realtime down brings realtime up; x after an operator's indexer down brings it up; p after push down heals push")
    func resolvesAgainstTruthFromElsewhere() {
        let s = Self.session()
        s.apply(.fault(.realtimeDown))  // a scenario line, not the key
        Self.press(.realtime, s)
        #expect(!s.faults.words.contains("realtime down"), "r sent realtime down again: \(s.faults.words)")
        s.apply(.fault(.indexerDown))
        Self.press(.indexer, s)
        #expect(s.faults.words.isEmpty)
        s.apply(.fault(.pushDown))
        Self.press(.push, s)
        #expect(s.faults.words.isEmpty)
        s.apply(.fault(.realtimeFlaky(percent: 50)))
        Self.press(.realtime, s)
        #expect(s.faults.words.isEmpty, "r clears a flaky realtime: \(s.faults.words)")
    }

    @Test("the session tells of every change of the world's faults, whoever made it: a key, a line, the world ending one itself (a token registered again)")
    func toldNotPolled() {
        let s = Self.session()
        var told: [[String]] = []
        s.onTruthChanged = { told.append($0.faults.words) }
        Self.press(.realtime, s)
        s.apply(.fault(.tokenExpire))
        #expect(told.suffix(2) == [["realtime down"], ["token expired", "realtime down"]])
        s.driver.launch()
        s.world.os.moveToForeground()
        s.scheduler.run(until: s.scheduler.now + .minutes(2))  // the engine registers the token again
        #expect(told.last == ["realtime down"], "told: \(told)")
    }
}
