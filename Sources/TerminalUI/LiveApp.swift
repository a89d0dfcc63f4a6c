import ChatUI
import Dispatch
import Foundation
import Simulation
import SyncCore
import SyncEngine

/// The live chat: a scenario run (the embedded world and the engine) paced by scaled wall
/// time, the view-model fed by the engine's events, and the terminal drawing each frame.
public final class LiveApp {
    public let run: ScenarioRun
    private var state = ViewState()
    private var speed: Double
    private var anchorWall: UInt64
    private var anchorVirtual: Instant
    private var pending: [TimedEvent] = []
    private let eventLog: ((String) -> Void)?
    private var lastCheckpoint: UInt64 = 0
    /// Keys reduced at most between two frames.
    static let keysPerFrame = 2048

    public init(run: ScenarioRun, speed: Double, eventLog: ((String) -> Void)? = nil) {
        self.run = run
        self.speed = speed
        self.eventLog = eventLog
        run.continuesLive = true  // a played scenario hands over to the live world at its end
        anchorWall = DispatchTime.now().uptimeNanoseconds
        anchorVirtual = run.scheduler.now
        // What the engine did before the screen opened (the launch) goes to the log too.
        pending = run.log
        run.driver.subscribe { [weak self] in self?.pending.append($0) }
        loadConversations()
    }

    /// The virtual instant that corresponds to the wall clock now.
    private var virtualNow: Instant {
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - anchorWall) / 1_000_000
        return anchorVirtual + .milliseconds(Int64(elapsed * speed))
    }

    private func setSpeed(_ s: Double) {
        anchorVirtual = virtualNow
        anchorWall = DispatchTime.now().uptimeNanoseconds
        speed = s
    }

    /// Runs until `q` (or a `quit` line of the scenario). Returns normally; the caller
    /// closes the terminal.
    public func loop(terminal: Terminal, notices: [String] = []) {
        for n in notices {
            _ = ViewModel.reduce(&state, .notice(n))
            _ = ViewModel.reduce(&state, .logLine(n))
            eventLog?(n)
        }
        step()
        terminal.draw(frame(terminal))
        while !state.quitting {
            // A paste arrives as thousands of keys at once: take every key already waiting
            // (up to a bound, so the world still advances) before drawing the next frame, so
            // that a key costs a reduce, not a frame (issue 11 #9).
            var input = terminal.read(timeoutMs: 40)
            var taken = 0
            while let next = input {
                switch next {
                case .resize: terminal.invalidate()
                case .key(let key): perform(ViewModel.reduce(&state, .key(key)))
                }
                taken += 1
                input = state.quitting || taken >= Self.keysPerFrame ? nil : terminal.read(timeoutMs: 0)
            }
            step()
            if DispatchTime.now().uptimeNanoseconds - lastCheckpoint > 1_000_000_000 {
                run.checkpoint()  // a profile resumes about where it was, even after a kill
                lastCheckpoint = DispatchTime.now().uptimeNanoseconds
            }
            if run.quitRequested { break }  // a `quit` line of the scenario
            terminal.draw(frame(terminal))  // the adapter writes only what changed
        }
        run.checkpoint()
    }

    private func frame(_ terminal: Terminal) -> Grid {
        let (w, h) = terminal.size
        return Render.screen(state, width: w, height: h)
    }

    /// Advances the world to now and feeds what happened to the view-model: the engine's
    /// events (one typed stream), the clock and the script's progress. Nothing is read back
    /// from the engine or the store.
    func step() {
        run.advance(to: virtualNow)
        let events = pending
        pending.removeAll()
        for e in events {
            if e.event.isDecision { eventLog?(Clock.time(e.at) + " " + e.event.line) }
            for input in ViewInput.from(e) { perform(ViewModel.reduce(&state, input)) }
        }
        perform(ViewModel.reduce(&state, .clock(run.scheduler.now, speed: speed)))
        let script = run.scriptStatus
        if script != state.status.script { perform(ViewModel.reduce(&state, .script(script))) }
    }

    /// The conversation list as the store has it, once at start; the events keep it since.
    private func loadConversations() {
        let unread = run.storage.unreadCounts()  // one query, not one per conversation
        let activity = run.storage.lastActivity()
        let rows = run.driver.contacts.map { c in
            ConversationRow(address: c.address, name: c.displayName, unread: unread[c.address] ?? 0,
                            muted: c.muted, lastActivity: activity[c.address])
        }
        perform(ViewModel.reduce(&state, .conversations(rows)))
    }

    private func perform(_ commands: [Command]) {
        for c in commands {
            switch c {
            case .send(let to, let text):
                run.driver.send(to: to, text: text)
            case .markRead(let a):
                run.driver.markRead(a)
            case .apply(let d):
                run.apply(d)
            case .setMode(let m):
                run.driver.setMode(m)
            case .setPreview(let p):
                run.driver.setPreview(p)
            case .setSpeed(let s):
                setSpeed(s)
            case .quit:
                state.quitting = true
            }
        }
        // Opening a conversation: load its history from the store once.
        if let open = state.open, state.messages[open] == nil {
            let contact = run.driver.contact(open) ?? Contact(address: open, handle: open.value, displayName: open.value)
            let rows = run.storage.messages(in: open).map { MessageRow($0, contact: contact) }.sorted { $0.blockTime < $1.blockTime }
            _ = ViewModel.reduce(&state, .history(open, rows))
        }
    }
}
