import ChatUI
import SyncCore
import SyncEngine
import Testing

/// At rest and typing: a frame in which only the clock or the line being written
/// moved is the previous frame with its compose and status rows drawn anew. The oracle is the
/// whole screen drawn from scratch.
@Suite("A frame when only the clock or the compose line moved")
struct ClockFrameTests {
    static func states() -> [(String, ViewState)] {
        var inspector = sampleState()
        inspector.showInspector = true
        var timeline = sampleState()
        timeline.showTimeline = true
        var failed = sampleState()
        _ = ViewModel.reduce(&failed, .outgoing(OutgoingMessage(localId: "l1", to: alice, body: "are you there?", createdAt: at(305),
                                                                 failures: 1, state: .failed(reason: "node unreachable", retryAt: at(340)))))
        var help = sampleState()
        help.showHelp = true
        var log = sampleState()
        log.showLog.toggle()
        return [("sample", sampleState()), ("background", backgroundedSampleState()), ("inspector", inspector),
                ("timeline", timeline), ("failed message", failed), ("help", help), ("log toggled", log)]
    }

    @Test("after each second, minute and hour of clock, and after any other change, the frame is the one drawn from scratch")
    func sameAsFromScratch() {
        for (name, s) in Self.states() {
            for (w, h) in [(120, 36), (80, 24), (200, 60)] {
                let first = Render.screen(s, width: w, height: h)
                for seconds in [1, 2, 59, 60, 61, 3600, 86_400] {
                    var next = s
                    _ = ViewModel.reduce(&next, .clock(s.status.clock + .seconds(Int64(seconds)), speed: s.status.speed))
                    let reused = Render.screen(next, width: w, height: h, after: Render.Frame(state: s, grid: first))
                    let same = reused == Render.screen(next, width: w, height: h)
                    #expect(same, "\(name) \(w)x\(h) +\(seconds)s")
                }
                // Anything else changed: a message, a key, the size.
                var other = s
                _ = ViewModel.reduce(&other, .log(LogEntry(time: "08:05:12", text: "catch-up full (forced)", kind: .decision)))
                #expect(Render.screen(other, width: w, height: h, after: Render.Frame(state: s, grid: first)) == Render.screen(other, width: w, height: h))
                #expect(Render.screen(s, width: w + 1, height: h, after: Render.Frame(state: s, grid: first)) == Render.screen(s, width: w + 1, height: h))
            }
        }
    }

    @Test("the previous frame is taken when only the clock moved and nothing above the bar shows it, and only then")
    func takenOnlyWhenSafe() {
        for (name, s) in Self.states() {
            var marked = Render.screen(s, width: 120, height: 36)
            marked[60, 10] = Cell("Ж")  // a mark the previous frame has and a new one would not
            var next = s
            _ = ViewModel.reduce(&next, .clock(s.status.clock + .seconds(1), speed: s.status.speed))
            let grid = Render.screen(next, width: 120, height: 36, after: Render.Frame(state: s, grid: marked))
            let reused = grid[60, 10] == Cell("Ж")
            let clockAbove = ["inspector", "timeline", "failed message", "help"].contains(name)
            #expect(reused == !clockAbove, "\(name)")
            // The status rows say the new second either way.
            let bottom = (34..<36).map { y in (0..<120).map { String(grid[$0, y].character) }.joined() }.joined()
            #expect(bottom.contains(Clock.full(next.status.clock)), "\(name)")
        }
    }

    @Test("typing, deleting and moving in the compose line (wide, combining and control characters too) gives the frame drawn from scratch, and keeps the rows above")
    func typing() {
        let keys: [Key] = [.char("h"), .char("é"), .char("👍🏽"), .char("\u{1B}"), .left, .left, .backspace, .char("e\u{0301}"), .home, .end]
            + Array(repeating: .char("w"), count: 120) + [.backspace, .right]
        for (name, s) in Self.states() {
            var state = s
            var frame = Render.Frame(state: state, grid: Render.screen(state, width: 100, height: 30))
            var marked = frame.grid
            marked[50, 5] = Cell("Ж")
            frame = Render.Frame(state: state, grid: marked)
            for key in keys {
                _ = ViewModel.reduce(&state, .key(key))
                let grid = Render.screen(state, width: 100, height: 30, after: frame)
                var expected = Render.screen(state, width: 100, height: 30)
                if grid[50, 5] == Cell("Ж") { expected[50, 5] = Cell("Ж") }  // the mark kept: the rows above were taken
                let same = grid == expected  // a Bool: a failure names the case, not two grids
                #expect(same, "\(name) after \(key)")
                frame = Render.Frame(state: state, grid: grid)
            }
            // In the sample, the compose line has the keys: the rows above were taken all along.
            if name == "sample" { #expect(frame.grid[50, 5] == Cell("Ж")) }
        }
    }

    @Test("a redraw in place names every row it changed with what the row held: the terminal compares those rows alone, so a row changed and not named would stay wrong on screen")
    func redrawNamesWhatChanged() {
        let keys: [Key] = [.char("h"), .char("👍🏽"), .backspace, .left, .char("e\u{0301}"), .end] + Array(repeating: .char("w"), count: 110)
        var redrawn = 0
        for (name, s) in Self.states() {
            var state = s
            var grid = Render.screen(state, width: 100, height: 30)
            for step in 0..<(keys.count + 3) {
                let before = grid, previous = state
                if step < keys.count { _ = ViewModel.reduce(&state, .key(keys[step])) } else { state.status.clock = state.status.clock + .seconds(61) }
                guard let rows = Render.redraw(&grid, state, since: previous) else {
                    #expect(grid == before, "\(name): a redraw that gives up leaves the grid as it was")
                    grid = Render.screen(state, width: 100, height: 30)
                    continue
                }
                redrawn += 1
                let named = Set(rows.map(\.y))
                for y in 0..<30 where !named.contains(y) {
                    let kept = grid.row(y) == before.row(y)  // Bools: a failure names the row, not two rows of cells
                    #expect(kept, "\(name) step \(step): row \(y) changed and was not named")
                }
                for (y, old) in rows {
                    let held = old == Array(before.row(y))
                    #expect(held, "\(name) step \(step): row \(y)'s old cells")
                }
                let same = grid == Render.screen(state, width: 100, height: 30)
                #expect(same, "\(name) step \(step)")
            }
        }
        #expect(redrawn > 100)  // the fast path was taken, not only the whole screen
    }
}
