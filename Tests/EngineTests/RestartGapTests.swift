import Foundation
import SyncCore
import SyncEngine
import Testing

/// A reconnect after a gap in which the push path was closed too (a server killed and
/// restarted: its pushes in flight are gone), when rule 6 skips the reconnect's catch-up and
/// the UTXO set cannot prove the gap (the app was relaunched from its profile: no full sync of
/// this launch to prove from). The closing look asks the tips at once: it cannot wait for
/// pushes that are not coming (the soak's seed 12 showed a TUI's message two minutes late).
@Suite("A gap the push path was closed in: looked at once")
struct RestartGapTests {
    typealias Harness = SansIOEngineTests.Harness

    @Test("relaunched from its profile (the debounce kept, no full sync of this launch), a reconnect whose gap had the push path closed asks the counted tips at once, not in two minutes; with the path open the look waits for push as before")
    func looksAtOnce() throws {
        for pathClosed in [true, false] {
            let first = Harness(policy: .adaptive)
            first.launchedAndLive()
            first.hit("w1", landedAt: first.now + .seconds(10))
            #expect(first.engine.status.push == .reliable)
            // The app is relaunched on the same profile a minute later.
            let t = first.now + .seconds(60)
            let h = Harness(policy: .adaptive, storage: first.storage, now: t)
            h.send(.launched)
            h.send(.tokenStatus(.active))
            h.send(.becameActive)
            h.send(.connectionOpened(1))
            h.send(.connected(1), at: t + .milliseconds(400))
            h.advance(to: t + .seconds(20))
            #expect(h.engine.status.push == .reliable)
            // The server goes away: the push path, then realtime; both come back 3 s later.
            let down = t + .seconds(30)
            if pathClosed { h.send(.pushPath(open: false), at: down) }
            h.send(.disconnected(1, error: "connection lost"), at: down)
            h.send(.connectionOpened(2), at: down + .seconds(3))
            h.send(.connected(2), at: down + .seconds(3) + .milliseconds(200))
            if pathClosed { h.send(.pushPath(open: true)) }
            let lines = h.events().map(\.line)
            #expect(lines.contains { $0.hasPrefix("catch-up skipped (rpc-restored)") }, "\(lines.suffix(6))")
            h.requests.removeAll()
            let reconnect = h.now
            h.advance(to: reconnect + .seconds(5))
            let asked = h.events().map(\.line).contains { $0.hasPrefix("closing look: push is overdue for the gap") }
            let look = lines.first { $0.hasPrefix("closing look:") } ?? "none"
            if pathClosed {
                #expect(look.contains("push path was closed too; the indexer's tips counted over it now"), "\(look)")
                #expect(asked, "the tips not asked within 5 s of the reconnect")
            } else {
                #expect(look.contains("in 2m, once push is overdue"), "\(look)")
                #expect(!asked, "looked before push was overdue")
            }
        }
    }
}
