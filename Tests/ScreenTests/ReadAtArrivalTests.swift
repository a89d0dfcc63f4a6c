import Directives
import ChatUI
import Simulation
import SyncCore
import SyncEngine
import Testing

/// A message of the conversation on screen, in the foreground, is read at its own instant
/// by the engine (it knows what is on screen), not by the view when a frame shows it. So a
/// scenario's `open NAME` and the screen agree on every badge, a recording need not write
/// every read down, and the frame rate of a live run changes nothing. The driver below
/// stands for the live loop: a frame's keys (each on a minute, where frames of both sizes
/// start, so the world is at the key's instant), then the world advanced to the frame's end,
/// then its events through the view-model, whose commands go back to the session.
@Suite("Reads at the message's instant")
struct ReadAtArrivalTests {
    static func live(frameMs: Int64, seconds: Int64, keys: [Int64: [Directive]],
                     eachFrame: (ViewState, AppSession) -> Void = { _, _ in }) -> [String] {
        let session = AppSession(seed: 12, contacts: 3, trafficPerHour: 240, mode: .remotePush, policy: .adaptive,
                                 storage: InMemoryChatStorage())
        var state = ViewState()
        var seen = 0
        func feed() {
            let new = session.log.dropFirst(seen)
            seen = session.log.count
            for e in new {
                for input in ViewInput.from(e) { perform(ViewModel.reduce(&state, input)) }
            }
        }
        func perform(_ commands: [Command]) {
            for c in commands {
                if case .apply(let d) = c, case .open = d { session.apply(d) }
            }
        }
        session.driver.subscribe { e in if !e.event.isDecision { for input in ViewInput.from(e) { _ = ViewModel.reduce(&state, input) } } }
        session.onOpen = { a in perform(ViewModel.reduce(&state, .openConversation(a))) }
        session.start()
        _ = ViewModel.reduce(&state, .conversations(session.driver.contacts.map {
            ConversationRow(address: $0.address, handle: $0.handle, name: $0.displayName, unread: 0, muted: false, lastActivity: nil)
        }))
        let start = session.scheduler.now
        var t = start
        while t < start + .seconds(seconds) {
            // Keys apply at the start of the frame they fall in (the live loop reads keys
            // first); every key here is on a minute, where frames of both sizes start.
            let elapsed = (t - start).milliseconds
            for (at, ds) in keys.sorted(by: { $0.key < $1.key }) where (elapsed..<elapsed + frameMs).contains(at * 1000) {
                for d in ds { session.apply(d) }
            }
            t = t + .milliseconds(frameMs)
            session.advance(to: t)
            feed()
            eachFrame(state, session)
        }
        return session.log.filter(\.event.isDecision).map(\.line)
    }

    @Test("the same keys give the same log, banners' badges included, with 250 ms and 60 s frames, and as a scenario with no screen")
    func frameRateDoesNotMatter() throws {
        // Alice open from the first minute; the app goes to the background and comes back.
        let keys: [Int64: [Directive]] = [0: [.foreground], 60: [.open(handle: "alice")], 1200: [.background], 1800: [.foreground],
                                          2400: [.background], 3000: [.foreground]]
        let coarse = Self.live(frameMs: 60_000, seconds: 3600, keys: keys)
        let fine = Self.live(frameMs: 250, seconds: 3600, keys: keys)
        #expect(coarse.filter { $0.contains(" banner [") }.count > 3)
        #expect(coarse == fine)
        // The same as a scenario: `open alice` keeps Alice on screen, so her messages in the
        // foreground are read as they come, as the screen reads them.
        var text = "seed 12\nduration 1h\ncontacts 3\ntraffic 240/h\nsettle 0s\n"
        for (at, ds) in keys.sorted(by: { $0.key < $1.key }) { for d in ds { text += "at \(at)s \(d.scenarioText)\n" } }
        let run = ScenarioRun(scenario: try ScenarioParser.parse(text, file: "read.scenario"), policy: .adaptive)
        run.run()
        let scripted = run.session.log.filter(\.event.isDecision).map(\.line).filter { !$0.contains("script") }
        #expect(scripted.filter { $0.contains(" banner [") } == coarse.filter { $0.contains(" banner [") })
    }

    @Test("the list's unread counts and the badge are the engine's at every frame, and the store, written through, agrees: the view counts nothing")
    func unreadIsTheEngines() {
        let keys: [Int64: [Directive]] = [0: [.foreground], 60: [.open(handle: "alice")], 1200: [.background], 1800: [.foreground],
                                          2100: [.open(handle: "bob")], 2400: [.background], 3000: [.foreground]]
        var frames = 0, differing = 0, counted = 0, storeDiffers = 0, badgeDiffers = 0
        _ = Self.live(frameMs: 1000, seconds: 3600, keys: keys) { state, session in
            let engine = session.unreadCounts()
            let shown = Dictionary(uniqueKeysWithValues: state.conversations.map { ($0.address, $0.unread) }).filter { $0.value > 0 }
            frames += 1
            counted += engine.values.reduce(0, +)
            if shown != engine { differing += 1 }
            if session.storage.unreadCounts() != engine { storeDiffers += 1 }
            if state.status.badge != session.app.driver.badge { badgeDiffers += 1 }
        }
        #expect(storeDiffers == 0 && badgeDiffers == 0)
        #expect(frames == 3600)
        #expect(counted > 100)  // there was something unread to show, for much of the hour
        #expect(differing == 0)
    }
}
