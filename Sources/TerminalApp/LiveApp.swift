import ClientRuntime
import ChatUI
import Config
import TerminalUI
import Dispatch
import Foundation
import SyncCore
import SyncEngine

/// The live chat: a session (the embedded world and the engine) paced by scaled wall time,
/// perhaps with a scenario playing into it; the view-model fed by the engine's events; the
/// terminal drawing each frame.
public final class LiveApp {
    public let session: LiveSession
    /// A scenario playing into the session (`--scenario`), if any.
    public let player: ScriptPlayer?
    /// The live chat's world: six contacts writing 24 messages an hour between them.
    public static let contacts = 6
    public static let trafficPerHour = 24.0
    var state = ViewState()
    /// What the screen shows now (for a test: the state the next frame draws).
    public var viewState: ViewState { state }
    private var speed: Double
    /// The world's clock is stopped (`space`): virtual time stays at `anchorVirtual`.
    private var paused = false
    private var anchorWall: UInt64
    private var anchorVirtual: Instant
    private var pending: [TimedEvent] = []
    /// The world's truth the session last told of, not yet shown.
    private var changedTruth: WorldTruth?
    /// Whether the world is reached, as the session last told, not yet shown.
    private var changedLink: ServerLink?
    /// The played scenario's phase it last told of, not yet shown.
    private var changedPhase: ScriptPhase?
    private let eventLog: ((String) -> Void)?
    private var lastCheckpoint: UInt64 = 0
    /// The state the terminal's last frame shows (the terminal keeps the frame; the next is
    /// changed from it in place when only the clock or the compose line moved).
    private var shownState: ViewState?
    /// How often (wall time) the world's clock and the view's memory are written to the
    /// profile: a kill loses at most this much of the clock. Not every second, which
    /// would be a write transaction a second while idle.
    static let checkpointEvery: UInt64 = 5_000_000_000
    /// Keys reduced at most between two frames.
    static let keysPerFrame = 2048

    /// Writes the session down as a scenario (`--record`), if asked.
    private let recorder: SessionRecording?
    /// Where the view's memory (`ViewMemory`) is kept between launches: a profile's
    /// setting; nil with --ephemeral.
    public struct MemoryStore {
        public var load: () -> String?
        public var save: (String) -> Void
        public init(load: @escaping () -> String?, save: @escaping (String) -> Void) {
            self.load = load
            self.save = save
        }
    }
    private let memory: MemoryStore?
    private var savedMemory: String?
    private var bellDue = false
    /// Desktop notifications asked for since the last frame, as the terminal takes them.
    private var notificationsDue: [[UInt8]] = []
    private var notificationId = 0
    /// `--bell`.
    public var bell = false {
        didSet { state.bellEnabled = bell }
    }
    /// `--links on|off`: URLs in messages as hyperlinks (OSC 8).
    public var links = true {
        didSet { state.linksEnabled = links }
    }

    /// The wall clock, in nanoseconds: the system's monotonic clock, or a test's.
    private let wallClock: () -> UInt64

    public init(session: LiveSession, player: ScriptPlayer? = nil, speed: Double, eventLog: ((String) -> Void)? = nil,
                recorder: SessionRecording? = nil, memory: MemoryStore? = nil, keys: KeyMap = .standard,
                wallClock: @escaping () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }) {
        self.wallClock = wallClock
        self.session = session
        self.player = player
        self.recorder = recorder
        self.memory = memory
        self.speed = speed
        self.eventLog = eventLog
        player?.continuesLive = true  // a played scenario hands over to the live world at its end
        anchorWall = wallClock()
        anchorVirtual = session.scheduler.now
        // What the engine did before the screen opened (the launch) goes to the log too.
        pending = session.log
        session.keepsLog = false  // from here on the log pane keeps its own last lines
        session.subscribe { [weak self] in self?.pending.append($0) }
        // Heard while the world runs, shown at the end of the step (no reducer inside the world).
        if let fixed = session.fixedSpeed { perform(ViewModel.reduce(&state, .serverClock(fixed))) }
        session.onTruthChanged = { [weak self] in self?.changedTruth = $0 }  // told at once, then at each change
        session.onLinkChanged = { [weak self] in self?.changedLink = $0 }
        changedPhase = player?.phase
        player?.onPhase = { [weak self] in self?.changedPhase = $0 }
        // A played `open NAME` shows that conversation (a demo shows the chat).
        session.onOpen = { [weak self] address in
            guard let self else { return }
            perform(ViewModel.reduce(&state, .openConversation(address)))
        }
        loadConversations()
        _ = ViewModel.reduce(&state, .keys(keys))
        // Where the last session left off.
        _ = ViewModel.reduce(&state, .keepsDrafts(memory != nil))
        if let text = memory?.load(), let remembered = ViewMemory.decode(text) {
            savedMemory = text
            perform(ViewModel.reduce(&state, .restore(remembered)))
        }
    }

    /// Keeps the view's memory in the profile when it changed.
    private func saveMemory() {
        guard let memory else { return }
        let text = ViewMemory(state).encoded
        guard text != savedMemory else { return }
        memory.save(text)
        savedMemory = text
    }

    /// The conversations with an unsent line when the app ended, by name (a profile keeps
    /// them; the command says so after the screen closes).
    public var unsentDrafts: [String] {
        state.drafts.filter { !$0.value.isEmpty }.keys.compactMap { a in state.conversations.first { $0.address == a }?.name }.sorted()
    }

    /// The virtual instant that corresponds to the wall clock now.
    private var virtualNow: Instant {
        guard !paused else { return anchorVirtual }
        let elapsed = Double(wallClock() - anchorWall) / 1_000_000
        return anchorVirtual + .milliseconds(Int64(elapsed * speed))
    }

    private func setSpeed(_ s: Double) {
        if let fixed = session.fixedSpeed { return fixedClock(fixed) }
        anchorVirtual = virtualNow
        anchorWall = wallClock()
        speed = s
    }

    /// On a server the clock is the server's: said once a key asks to change it.
    private func fixedClock(_ speed: Double) {
        perform(ViewModel.reduce(&state, .notice(Notices.serverClock(speed))))
    }

    private func togglePause() {
        if let fixed = session.fixedSpeed { return fixedClock(fixed) }
        anchorVirtual = virtualNow
        anchorWall = wallClock()
        paused.toggle()
        // The world runs to the instant it stops at before the bar says paused, so the paused
        // frame shows the clock where it stays (it showed the last frame's, then jumped once).
        if paused { advanceWorld(to: anchorVirtual) }
        perform(ViewModel.reduce(&state, .paused(paused)))
        absorb()
    }

    /// While paused: runs the world event by event until one is a line the log pane shows in
    /// its view now (the decisions view hides message arrivals), and stops the clock there.
    /// Bounded, so a world with nothing to say cannot hang the screen.
    private func stepToNextEvent() {
        guard paused else { return }
        let before = pending.count
        var budget = 100_000
        while budget > 0, !session.quitRequested, let next = session.scheduler.nextEventTime {
            advanceWorld(to: next)
            budget -= 1
            if pending.dropFirst(before).contains(where: shown) { break }
        }
        anchorVirtual = session.scheduler.now
        absorb()
    }

    /// Whether an event is a line the log pane shows in its view now.
    private func shown(_ e: TimedEvent) -> Bool {
        ViewInput.from(e).contains { if case .log(let entry) = $0 { state.logFilter.shows(entry) } else { false } }
    }

    func advanceWorld(to instant: Instant) {
        if let player { player.advance(to: instant) } else { session.advance(to: instant) }
    }

    /// Runs until `q` (or a `quit` line of the scenario). Returns normally; the caller
    /// closes the terminal.
    public func loop(terminal: Terminal, notices: [String] = []) {
        // What the terminal was found to draw: the layout's widths, and a line of the log.
        _ = ViewModel.reduce(&state, .emojiWidths(terminal.emoji.widths))
        _ = ViewModel.reduce(&state, .logLine(terminal.emoji.report))
        eventLog?("# " + terminal.emoji.report)
        let notify = terminal.notifyChoice
        _ = ViewModel.reduce(&state, .notifyBy(notify.method, passthrough: notify.passthrough))
        _ = ViewModel.reduce(&state, .logLine(notify.report))
        eventLog?("# " + notify.report)
        for n in notices {
            _ = ViewModel.reduce(&state, .logLine(n))
            eventLog?("# " + n)  // not an event: a comment line, so replays compare the events alone
        }
        if let all = Notices.atStart(notices) { _ = ViewModel.reduce(&state, .notice(all)) }
        step()
        present(terminal)
        while !state.quitting {
            // A paste arrives as thousands of keys at once: take every key already waiting
            // (up to a bound, so the world still advances) before drawing the next frame, so
            // that a key costs a reduce, not a frame.
            var input = terminal.read(timeoutMs: wakeTimeout(), alsoWakingOn: session.wakeDescriptor)
            var taken = 0
            while let next = input {
                switch next {
                case .resize: terminal.invalidate()
                case .mouse(let event):
                    let (w, h) = terminal.size
                    perform(ViewModel.reduce(&state, .mouse(event, Render.area(state, width: w, height: h, x: event.x, y: event.y))))
                case .key(let key):
                    take(key)
                case .paste(let text, let replaced):
                    perform(ViewModel.reduce(&state, .paste(text)))
                    if replaced > 0 { perform(ViewModel.reduce(&state, .notice(Notices.pasteNotUTF8(replaced)))) }
                    absorb()
                case .focus(let focused):
                    perform(ViewModel.reduce(&state, .focus(focused)))
                }
                taken += 1
                input = state.quitting || taken >= Self.keysPerFrame ? nil : terminal.read(timeoutMs: 0)
            }
            // What was typed is shown before the world is advanced: the echo does not wait for
            // the world's work; the frame after it draws what the world moved.
            if taken > 0, !state.quitting { present(terminal) }
            step()
            if wallClock() - lastCheckpoint > Self.checkpointEvery {
                session.checkpoint()  // a profile resumes about where it was, even after a kill
                saveMemory()
                lastCheckpoint = wallClock()
            }
            if session.quitRequested { break }  // a `quit` line of the scenario
            present(terminal)  // the adapter writes only what changed
        }
        recorder?.finish(at: session.scheduler.now)
        saveMemory()
        session.checkpoint()
    }

    /// One key: reduced, what it asks done, and what that changed (a speed, a mode, a fault) in
    /// the state before the next key of the same read acts on it.
    public func take(_ key: Key) {
        perform(ViewModel.reduce(&state, .key(key)))
        absorb()
    }

    /// How long the loop may sleep waiting for a key: until the world or the
    /// engine has something due, or the status bar's clock shows its next second — at most a
    /// second (the checkpoint, the ages on the status bar), at least a millisecond.
    private func wakeTimeout() -> Int32 {
        guard !paused else { return 1000 }
        let now = virtualNow
        var wall = Double(1000 - now.milliseconds % 1000) / speed  // the clock's next second
        if let next = session.scheduler.nextEventTime { wall = min(wall, Double(max(0, (next - now).milliseconds)) / speed) }
        return Int32(max(1, min(1000, wall.rounded(.up))))
    }

    /// Draws the state: the last frame changed in place when only the clock or the line being
    /// written moved (`Render.redraw`), else the whole screen, which the adapter compares
    /// with the last one.
    private func present(_ terminal: Terminal) {
        // Outside the grid: the title, and the bell at most once a frame.
        terminal.setTitle(state.terminalTitle)
        if bellDue { terminal.bell(); bellDue = false }
        for bytes in notificationsDue { terminal.notify(bytes) }
        notificationsDue.removeAll()
        let (w, h) = terminal.size
        if shownState == state, terminal.hasFrame(width: w, height: h) { return }  // nothing moved since the last frame
        if let shown = shownState, terminal.redraw({ g in g.width == w && g.height == h ? Render.redraw(&g, state, since: shown) : nil }) {
            shownState = state
            return
        }
        let frame = Render.screen(state, width: w, height: h)
        terminal.draw(frame)
        if let shown = frame.messageScroll, shown < state.scroll { perform(ViewModel.reduce(&state, .messagesShown(scroll: shown))) }
        shownState = state
    }

    /// Advances the world to now and feeds what happened to the view-model: the engine's
    /// events (one typed stream), the clock and the script's progress. Nothing is read back
    /// from the engine or the store.
    public func step() {
        advanceWorld(to: virtualNow)
        absorb()
    }

    /// Feeds the view what the world and the engine said since the last time (their events,
    /// the clock and speed, the script's phase, the faults), without moving the world: at the
    /// end of each step, and after each key.
    func absorb() {
        let events = pending
        pending.removeAll()
        for e in events {
            if e.event.isDecision { eventLog?(e.line) }  // `HH:MM:SS.mmm line`, as simulate --events prints it
            for input in ViewInput.from(e) { perform(ViewModel.reduce(&state, input)) }
        }
        perform(ViewModel.reduce(&state, .clock(session.scheduler.now, speed: speed)))
        if let phase = changedPhase {
            changedPhase = nil
            perform(ViewModel.reduce(&state, .script(phase)))
        }
        // The world's truth comes as the session hears it change (it tells; nothing polls).
        if let truth = changedTruth {
            changedTruth = nil
            perform(ViewModel.reduce(&state, .truth(truth)))
        }
        if let link = changedLink {
            changedLink = nil
            perform(ViewModel.reduce(&state, .serverLink(link)))
        }
    }

    /// The conversation list as the store has it, once at start; the events keep it since.
    private func loadConversations() {
        let unread = session.unreadCounts()  // one query, not one per conversation
        let activity = session.lastActivity()
        let rows = session.contacts.map { c in
            ConversationRow(address: c.address, handle: c.handle, name: c.displayName, unread: unread[c.address] ?? 0,
                            muted: c.muted, lastActivity: activity[c.address])
        }
        perform(ViewModel.reduce(&state, .conversations(rows)))
    }

    private func perform(_ commands: [Command]) {
        for c in commands {
            switch c {
            // Everything that changes the world or the client is a directive, applied by the
            // session, so that a key and its scenario verb are one path (and one line of a
            // recording).
            case .apply(let d):
                // A key acts at the clock's now: the world runs to it first (the last frame's
                // instant lags by up to a wake-up), so what it does, and a recording of it, is
                // at the instant the key was pressed.
                advanceWorld(to: virtualNow)
                session.apply(d)
            case .toggleFault(let toggle):
                // Resolved against the world's faults now, whoever gave them.
                advanceWorld(to: virtualNow)
                session.toggle(toggle)
            case .setSpeed(let s):
                setSpeed(s)
            case .togglePause:
                togglePause()
            case .step:
                stepToNextEvent()
            case .inspect(let on):
                session.inspect(on)
            case .bell:
                bellDue = true
            case .notify(let title, let body):
                let a = state.attention
                if a.method == .bell { bellDue = true; continue }
                notificationId += 1
                // At most a few a frame: a catch-up that brings many conversations at once
                // does not flood the desktop (each conversation has its one a second already).
                if notificationsDue.count < 4 {
                    notificationsDue.append(DesktopNotification.bytes(a.method, title: title, body: body, id: notificationId, passthrough: a.passthrough))
                }
            case .search(let query, let conversation):
                // The store's full-text index: all of the history, not only what is loaded.
                let found = session.search(query, in: conversation, limit: 1000)
                let hits = found.map { m -> SearchState.Hit in
                    let sender = m.message.direction == .outgoing ? "you"
                        : session.contact(m.message.conversation)?.displayName ?? m.message.conversation.value
                    return SearchState.Hit(txId: m.txId, conversation: m.message.conversation, sender: sender, text: m.message.body,
                                           blockTime: m.message.blockTime)
                }
                perform(ViewModel.reduce(&state, .searchResults(query, hits)))
            case .quit:
                state.quitting = true
            }
        }
        // The history the screen needs, a page at a time from the store: the newest page
        // when a conversation opens, older ones as the view scrolls back or a search hit
        // lies beyond (opening a conversation of 5 000 messages does not read all 5 000).
        ViewModel.loadHistory(&state) { page in
            let contact = session.contact(page.conversation)
                ?? Contact(address: page.conversation, handle: page.conversation.value, displayName: page.conversation.value)
            return session.messages(in: page.conversation, before: page.before, limit: page.limit).map { MessageRow($0, contact: contact) }
        }
    }
}
