import TerminalApp
import Directives
import ChatUI
import Simulation
import SyncCore
import SyncEngine
import Testing

/// A key acts at the clock's now, not at the instant the last frame left the world: the app
/// runs the world to the instant the key was pressed, then applies its directive.
@Suite("Keys act at the clock's now")
struct KeyTimingTests {
    @Test("S pressed 5.29 s of wall time after the last frame, at x1: its directive applies at 5.29 s, where the world was run first, and a recording says that instant")
    func keyAtNow() {
        var wall: UInt64 = 1_000_000_000
        let session = AppSession(seed: 1, contacts: 2, trafficPerHour: 0, mode: .remotePush)
        session.start()
        var applied: [(Directive, Instant)] = []
        session.onApply = { applied.append(($0, $1)) }
        let app = LiveApp(session: session, speed: 1, wallClock: { wall })
        app.step()
        let frame = session.scheduler.now
        wall += 5_290_000_000
        app.take(.char("S"))
        #expect(applied.count == 1 && applied.first?.0 == .sync)
        #expect(applied.first?.1 == frame + .milliseconds(5290), "applied at \(applied.first?.1 as Any), the frame was at \(frame)")
        // A key that is no directive (a letter typed) leaves the world where it is: the echo does not wait for it.
        wall += 1_000_000_000
        app.take(.tab)
        #expect(session.scheduler.now == frame + .milliseconds(5290))
    }
}

@Suite("Stepping the paused clock")
struct StepTests {
    @Test("in the decisions view, . steps to the next line that view shows: never to a message arrival it hides, and in the everything view arrivals count")
    func stepToShownLine() throws {
        let session = AppSession(seed: 4, contacts: 3, trafficPerHour: 600, mode: .remotePush)
        session.start()
        let app = LiveApp(session: session, speed: 1, wallClock: { 1_000_000_000 })
        app.step()
        app.take(.char(" "))  // paused
        #expect(app.viewState.status.paused)
        for _ in 0..<30 {
            let before = app.viewState.logCount
            app.take(.char("."))
            let new = app.viewState.log.suffix(app.viewState.logCount - before)
            #expect(!new.isEmpty, "a step shows a line")
            #expect(new.contains { app.viewState.logFilter.shows($0) }, "a step shows a line the decisions view shows: \(new.map(\.text))")
        }
        app.take(.char("L"))  // everything: arrivals count now
        var arrivals = 0
        for _ in 0..<30 {
            let before = app.viewState.logCount
            app.take(.char("."))
            arrivals += app.viewState.log.suffix(app.viewState.logCount - before).filter { $0.kind == .arrival }.count
        }
        #expect(arrivals > 0)
    }
}
