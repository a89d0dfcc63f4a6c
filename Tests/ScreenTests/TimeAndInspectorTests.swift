import ClientRuntime
import ChatUI
import SyncCore
import SyncEngine
import Testing

/// Pause and step, the speeds, the inspector (`i`),
/// faults in words, and a status bar whose height never changes.
@Suite("Time, inspector and status bar")
struct TimeAndInspectorTests {
    func listFocused() -> ViewState {
        var s = sampleState()
        _ = ViewModel.reduce(&s, .key(.escape))
        return s
    }

    // MARK: - Time

    @Test("space asks to pause; the status bar says paused once the app says so; . steps only while paused")
    func pauseAndStep() {
        let store = TestStore(listFocused())
        store.send(.key(.char(".")), commands: []) { $0.notice = "the clock runs: space pauses it, then . steps to the next event" }
        store.send(.key(.char(" ")), commands: [.togglePause]) { $0.notice = nil }
        store.send(.paused(true)) { $0.status.paused = true }
        store.send(.key(.char(".")), commands: [.step])
        store.send(.key(.char(".")), commands: [.step])
        store.send(.key(.char(" ")), commands: [.togglePause])
        store.send(.paused(false)) { $0.status.paused = false }
        let row = Render.screen(store.state, width: 120, height: 36).text.last!
        #expect(!row.contains("paused"))
    }

    @Test("space in the compose line types a space; it pauses nothing")
    func spaceInCompose() {
        let store = TestStore(sampleState())  // the compose line has focus
        store.send(.key(.char(" ")), commands: []) { $0.drafts[alice] = LineEditor(" ") }
    }

    @Test("- goes down to x0.25 and + up to x300, one step at a time")
    func speedRange() {
        let store = TestStore(listFocused())
        store.send(.clock(store.state.status.clock, speed: 1)) { $0.status.speed = 1 }
        store.send(.key(.char("-")), commands: [.setSpeed(0.5)])
        store.send(.clock(store.state.status.clock, speed: 0.5)) { $0.status.speed = 0.5 }
        store.send(.key(.char("-")), commands: [.setSpeed(0.25)])
        store.send(.clock(store.state.status.clock, speed: 0.25)) { $0.status.speed = 0.25 }
        store.send(.key(.char("-")), commands: [.setSpeed(0.25)])  // the slowest already
        store.send(.key(.char("+")), commands: [.setSpeed(0.5)])
        store.send(.clock(store.state.status.clock, speed: 120)) { $0.status.speed = 120 }
        store.send(.key(.char("+")), commands: [.setSpeed(300)])
        store.send(.clock(store.state.status.clock, speed: 300)) { $0.status.speed = 300 }
        store.send(.key(.char("+")), commands: [.setSpeed(300)])  // the fastest already
        // The status bar says a quarter speed as it is.
        var s = store.state
        _ = ViewModel.reduce(&s, .clock(s.status.clock, speed: 0.25))
        #expect(Render.screen(s, width: 120, height: 36).text.last!.contains(" x0.25"))
    }

    @Test("the end of a played scenario is announced once on the compose line; the next key clears it")
    func scriptOverAnnounced() {
        let store = TestStore(listFocused())
        let start = store.state.status.clock - .seconds(14 * 60)
        store.send(.script(.playing(from: start, duration: .seconds(15 * 60)))) {
            $0.status.scriptPhase = .playing(from: start, duration: .seconds(15 * 60))
        }
        #expect(store.state.status.script == "script 14m/15m")  // the bar's words, from the phase and the clock
        store.send(.script(.settling)) { $0.status.scriptPhase = .settling }
        store.send(.script(.live)) {
            $0.status.scriptPhase = .live
            $0.notice = Notices.scriptOver
            $0.noticeUnbidden = true
        }
        store.send(.key(.char("j"))) {  // a letter only takes away a notice nobody asked for
            $0.notice = nil
            $0.noticeUnbidden = false
        }
        store.send(.key(.char("j"))) { $0.selected = 1 }
        store.send(.script(.live))  // said once
    }

    @Test(". on a server's clock says the clock is the server's, not to press space (space does nothing there)")
    func stepOnServerClock() {
        let store = TestStore(listFocused())
        store.send(.key(.char("."))) { $0.notice = "the clock runs: space pauses it, then . steps to the next event" }
        store.send(.serverClock(60)) { $0.status.serverClock = 60 }
        store.send(.key(.char("."))) { $0.notice = "the clock is the server's: x60, not paused, stepped or changed from here" }
    }

    // MARK: - Status bar

    @Test("the status bar has two rows at every width and content: a fault, a script, paused do not move the screen")
    func stableStatusBar() {
        for width in [60, 80, 120, 200] {
            var quiet = sampleState()
            var busy = sampleState()
            _ = ViewModel.reduce(&busy, .truth(WorldTruth(faults: WorldFaults(push: .init(dropPercent: 100), realtime: .init(down: true), indexer: .init(latency: .seconds(2))))))
            _ = ViewModel.reduce(&busy, .script(.playing(from: busy.status.clock - .seconds(180), duration: .seconds(900))))
            _ = ViewModel.reduce(&busy, .paused(true))
            quiet.showLog = true
            let a = Render.screen(quiet, width: width, height: 30).text
            let b = Render.screen(busy, width: width, height: 30).text
            // Everything above the status bar is the same screen.
            #expect(Array(a.prefix(28)) == Array(b.prefix(28)), "width \(width)")
            #expect(a[28].contains("foreground") && b[28].contains("foreground"), "width \(width): row 1 is the state")
            #expect(b[29].contains("paused"), "width \(width)")
        }
    }

    @Test("active faults are on the state row in words, in the warning role")
    func faultsInWords() {
        var s = sampleState()
        _ = ViewModel.reduce(&s, .truth(WorldTruth(faults: WorldFaults(push: .init(dropPercent: 100), indexer: .init(down: true)))))
        let g = Render.screen(s, width: 120, height: 36)
        let row = g.text[34]
        #expect(row.contains("fault: push drop 100%, indexer down"))
        let x = row.distance(from: row.startIndex, to: row.range(of: "fault:")!.lowerBound)
        #expect(g.roles(row: 34)[x] == .warning)
        #expect(g.roles(row: 34)[1] != .warning)  // the lifecycle word is not
    }

    // MARK: - Inspector

    @Test("i opens the inspector and asks the engine for its inspection; i again closes it and forgets it")
    func inspectorKey() {
        let store = TestStore(listFocused())
        store.send(.key(.char("i")), commands: [.inspect(true)]) { $0.showInspector = true }
        store.send(.inspection(sampleInspection())) { $0.inspection = sampleInspection() }
        store.send(.key(.char("i")), commands: [.inspect(false)]) {
            $0.showInspector = false
            $0.inspection = nil
        }
    }

    @Test("the inspector shows the five sections with the engine's values and the time left against the clock")
    func inspectorGrid() {
        var s = listFocused()
        _ = ViewModel.reduce(&s, .key(.char("i")))
        _ = ViewModel.reduce(&s, .inspection(sampleInspection()))
        _ = ViewModel.reduce(&s, .truth(WorldTruth(faults: WorldFaults(push: .init(dropPercent: 100)))))
        let text = Render.screen(s, width: 120, height: 36).text.joined(separator: "\n")
        for title in ["── push ──", "── gate ──", "── cursors ──", "── timers ──", "── faults ──"] {
            #expect(text.contains(title), "\(title)")
        }
        #expect(text.contains("inspector — i closes"))
        #expect(text.contains("state unreliable, misses 2/3"))
        #expect(text.contains("7c12d26f realtime 40s left"))  // seen at 291 s, grace 60 s, clock 311 s
        #expect(text.contains("a9f00e11 fetch 58s left"))
        #expect(text.contains("running full (app-active) forced, 6s"))
        #expect(text.contains("joined: subscription-restart"))
        #expect(text.contains("retry full forced in 30s (1 failed)"))
        #expect(text.contains("debounce none"))
        #expect(text.contains("Alice       in 08:04:10  out 08:02:00"))
        #expect(text.contains("reconnect   in 4s (2 failed)"))
        #expect(text.contains("keepalive   off"))
        #expect(text.contains("poll        in 42s"))
        #expect(text.contains("push drop 100%"))
        // The chat itself is not drawn under it.
        #expect(!text.contains("see you at 7"))
    }

    @Test("at the smallest size the inspector says how much it leaves out, and never draws past its pane")
    func inspectorSmall() {
        var s = listFocused()
        _ = ViewModel.reduce(&s, .key(.char("i")))
        _ = ViewModel.reduce(&s, .inspection(sampleInspection()))
        let g = Render.screen(s, width: 60, height: 16)
        let text = g.text.joined(separator: "\n")
        #expect(text.contains("── push ──"))
        #expect(text.contains("more lines: enlarge the terminal"))
        // The list column is untouched: every row of it still ends at its border.
        for line in g.text[1..<8] { #expect(line.contains("│")) }
    }

    @Test("the inspector's sections keep their columns while the content changes (2 pending observations or 12, a sync running or none) and whatever the height", arguments: [120, 200])
    func inspectorStable(width: Int) {
        func columns(_ i: EngineInspection, height: Int) -> [String: Int] {
            var s = listFocused()
            _ = ViewModel.reduce(&s, .key(.char("i")))
            _ = ViewModel.reduce(&s, .inspection(i))
            var at: [String: Int] = [:]
            for row in Render.screen(s, width: width, height: height).text {
                for title in ["push", "gate", "cursors", "timers", "faults", "truth"] {
                    if let r = row.range(of: "── \(title) ──") { at[title] = row.distance(from: row.startIndex, to: r.lowerBound) }
                }
            }
            return at
        }
        let quiet = sampleInspection()
        var busy = sampleInspection()
        busy.push.pending = (0..<12).map { .init(txId: "ab\($0)cd00ee", seenAt: at(300), graceEndsAt: at(360), via: .realtime) }
        busy.gate.running += [.init(kind: .targeted, trigger: .poll, forced: false, startedAt: at(306), outstanding: 1, stored: 0, joined: [])]
        // Where each section stands when everything fits; at every height and with either
        // content, a section shown is shown there (one that does not fit is cut, never moved).
        let fixed = columns(quiet, height: 80)
        #expect(fixed.count == 6)
        for height in stride(from: 24, through: 60, by: 4) {
            for (name, content) in [("quiet", quiet), ("busy", busy)] {
                let shown = columns(content, height: height)
                #expect(shown["push"] != nil && shown["truth"] != nil, "\(name) at \(height): \(shown)")
                for (title, x) in shown { #expect(x == fixed[title], "\(name) at height \(height): \(title) at column \(x), not \(fixed[title] ?? -1)") }
            }
        }
    }

    func sampleInspection() -> EngineInspection {
        var i = EngineInspection()
        i.push.state = .unreliable
        i.push.misses = 2
        i.push.suspended = false
        i.push.pending = [
            .init(txId: "7c12d26f00aa", seenAt: at(291), graceEndsAt: at(351), via: .realtime),
            .init(txId: "a9f00e1100bb", seenAt: at(309), graceEndsAt: at(369), via: .fetch),
        ]
        i.gate.lastCatchUpAt = at(100)
        i.gate.running = [.init(kind: .full, trigger: .appActive, forced: true, startedAt: at(305), outstanding: 3, stored: 1,
                                joined: [.subscriptionRestart])]
        i.gate.owed = .init(kind: .full, forced: true)
        i.gate.retryAt = at(341)
        i.gate.retriesInARow = 1
        i.cursors = [
            .init(object: .handshakes(.incoming), at: nil),
            .init(object: .handshakes(.outgoing), at: nil),
            .init(object: .contextual(alice, .incoming), at: at(250)),
            .init(object: .contextual(alice, .outgoing), at: at(120)),
            .init(object: .payments, at: nil),
        ]
        i.timers.polling = true
        i.timers.nextPollAt = at(353)
        i.timers.connection.reconnectAt = at(315)
        i.timers.connection.reconnectFailures = 2
        return i
    }
}

/// Truth beside belief on the grid.
@Suite("Truth beside belief")
struct TruthTests {
    static func reliable() -> ViewState {
        var s = sampleState()
        var st = s.status.engine
        st.push = .reliable
        st.realtime = .live
        st.token = .active
        _ = ViewModel.reduce(&s, .engineStatus(st))
        return s
    }

    static let pushDropped = WorldFaults(push: .init(dropPercent: 100))

    /// The session tells the screen the world's truth: its faults, and what the engine has not
    /// noticed of them since when (the session's `BeliefLag` decides that; `TruthBesideBeliefTests`).
    static func told(_ s: inout ViewState, _ faults: WorldFaults, unnoticed: [BeliefLag.Kind: Instant] = [:], known: Bool = true) {
        var broken: [BeliefLag.Kind: String] = [:]
        if faults.pushBroken { broken[.push] = "push drop 100%" }
        if faults.realtimeBroken { broken[.realtime] = faults.realtime.stale ? "realtime stale" : "realtime down" }
        if let t = faults.token { broken[.token] = "token \(t.rawValue)" }
        if faults.networkOff { broken[.network] = "network off" }
        _ = ViewModel.reduce(&s, .truth(WorldTruth(faults: faults, known: known, broken: known ? broken : [:], unnoticed: known ? unnoticed : [:])))
    }

    @Test("what the engine has not noticed is a truth: segment in its own role, counting from when it broke; it goes when the session says they agree")
    func pushTruth() throws {
        var s = Self.reliable()
        let t0 = s.status.clock
        Self.told(&s, Self.pushDropped, unnoticed: [.push: t0])
        var bar = Render.screen(s, width: 160, height: 24)
        var row = bar.text[22]
        let x = try #require(row.range(of: "truth: push drop 100% for 0s")).lowerBound
        #expect(bar.roles(row: 22)[row.distance(from: row.startIndex, to: x)] == .statusTruth)
        _ = ViewModel.reduce(&s, .clock(t0 + .seconds(72), speed: 30))
        row = Render.screen(s, width: 160, height: 24).text[22]
        #expect(row.contains("truth: push drop 100% for 1m12s"))
        // The engine finds out: the session says so, and the segment goes at once.
        Self.told(&s, Self.pushDropped)
        bar = Render.screen(s, width: 160, height: 24)
        #expect(!bar.text[22].contains("truth:"))
        #expect(bar.text[22].contains("fault: push drop 100%"))
    }

    @Test("several channels the engine has not noticed: each says so, in the kinds' order")
    func otherTruths() {
        var s = Self.reliable()
        let t0 = s.status.clock
        Self.told(&s, WorldFaults(realtime: .init(stale: true), token: .expired, networkOff: true), unnoticed: [.network: t0, .realtime: t0, .token: t0])
        let row = Render.screen(s, width: 220, height: 24).text[22]
        let words = ["truth: realtime stale for 0s", "truth: token expired for 0s", "truth: network off for 0s"]
        for w in words { #expect(row.contains(w), "\(w): \(row)") }
        let at = words.compactMap { row.range(of: $0)?.lowerBound }
        #expect(at == at.sorted(), "in the kinds' order: \(row)")
    }

    @Test("a screen that does not know the world's truth (a server's client) says nothing, even with faults it was told of")
    func unknownTruth() {
        var s = Self.reliable()
        Self.told(&s, Self.pushDropped, unnoticed: [.push: s.status.clock], known: false)
        #expect(!Render.screen(s, width: 160, height: 24).text[22].contains("truth:"))
        #expect(Render.screen(s, width: 160, height: 24).text[22].contains("fault: push drop 100%"))
        _ = ViewModel.reduce(&s, .key(.escape))
        _ = ViewModel.reduce(&s, .key(.char("i")))
        #expect(Render.screen(s, width: 120, height: 36).text.joined().contains("the server's truth is not known here"))
    }

    @Test("the inspector's truth section: each channel as the world has it, as the engine believes it, and since when they differ")
    func inspectorTruth() {
        var s = Self.reliable()
        _ = ViewModel.reduce(&s, .key(.escape))
        _ = ViewModel.reduce(&s, .key(.char("i")))
        let t0 = s.status.clock
        Self.told(&s, Self.pushDropped, unnoticed: [.push: t0])
        _ = ViewModel.reduce(&s, .clock(t0 + .seconds(30), speed: 30))
        let text = Render.screen(s, width: 120, height: 36).text.joined(separator: "\n")
        #expect(text.contains("── truth ──"))
        #expect(text.contains("push     push drop 100%\n") || text.contains("push     push drop 100% "))
        #expect(text.contains("engine: reliable, 30s behind"))
        #expect(text.contains("realtime ok, engine: live"))
        #expect(text.contains("token    ok, engine: active"))
    }
}
