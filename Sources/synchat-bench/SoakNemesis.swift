import FaultProxy
import Foundation
import SimulatedWorld
import SyncCore

/// The soak's nemesis (Jepsen's word): one fault every 5–20 s, drawn from the seed, each on its
/// own clock of wall seconds, staggered so that several may be under way at once. Every fault
/// keeps a window — from its start to its end plus the time a client needs to find out
/// (`settle`) — in which a client's failed requests are expected; outside every window, a
/// failed request is a finding.
struct SoakNemesis {
    /// A fault as the report shows it: what, on whom, and its window (wall seconds).
    struct Fault {
        var what: String
        /// The processes or users it touches; empty: everyone (the server).
        var on: [String]
        var start: Double
        var end: Double
        /// The window in which failures are expected: from `start` to `end + settle`.
        var settle: Double
        var windowEnd: Double { end + settle }
    }

    private var random: RandomStream
    private let run: SoakRun
    private(set) var faults: [Fault] = []
    private var next: Double
    /// Things to undo at a wall instant: a SIGCONT, a restart, a healing directive.
    private var pending: [(at: Double, undo: () -> Void)] = []
    /// Which fault each pending undo ends, so that its window runs to when the undo really ran.
    private var pendingEnds: [(at: Double, fault: Int)] = []
    private var nextWrite: [Double]
    private var written = 0

    /// A client finds a healed fault within this: a reconnect's backoff (up to 30 s), a catch-up.
    static let settle = 45.0

    init(seed: UInt64, run: SoakRun) {
        random = RandomStream(seed: seed, concern: "soak nemesis")
        self.run = run
        next = 10  // a first fault after the clients joined
        nextWrite = run.tuis.map { _ in 5 }
    }

    /// Holds fault `index`'s window open until what undoes it has run: a server restarted later
    /// than planned (the nemesis waited on a `synchat fault` that hung) is down until it is.
    private mutating func undo(_ index: Int, at plannedEnd: Double, _ action: @escaping () -> Void) {
        pending.append((plannedEnd, action))
        pendingEnds.append((plannedEnd, index))
    }

    private mutating func uniform(_ a: Double, _ b: Double) -> Double { a + (b - a) * random.unit() }
    private mutating func pick<T>(_ xs: [T]) -> T { xs[Int(random.next() % UInt64(xs.count))] }

    /// Runs what is due by now: undos, the TUIs' writing, the next fault.
    mutating func step() {
        let now = run.wall
        let due = pending.filter { $0.at <= now }
        pending.removeAll { $0.at <= now }
        for d in due { d.undo() }
        let done = run.wall
        for e in pendingEnds where e.at <= now { faults[e.fault].end = max(faults[e.fault].end, done) }
        pendingEnds.removeAll { $0.at <= now }
        writeAsTUIs(quiet: false)
        guard now >= next else { return }
        next = now + uniform(5, 20)
        fault(at: now)
    }

    /// Each TUI writes a line every 20–40 s, as a person types it on its compose line; not
    /// while it is stopped or restarting. The screen is read first: letters go only to a
    /// compose line that has the keys (its row then says no `keys: …`), never to a pane where
    /// they would act as keys (`s`, `p`, `q`…).
    mutating func writeAsTUIs(quiet: Bool) {
        guard !quiet else { return }
        for (i, tui) in run.tuis.enumerated() where run.wall >= nextWrite[i] {
            nextWrite[i] = run.wall + uniform(20, 40)
            guard tui.pid > 0, tui.stoppedUntil == nil else { continue }
            func composeRow() -> String {
                let rows = run.screen(tui).split(separator: "\n", omittingEmptySubsequences: false)
                return rows.count > 27 ? String(rows[27]) : ""
            }
            _ = sh("\(run.tmux) send-keys -t \(tui.name) Escape")  // a prompt closes; the compose line gives the keys to the list
            usleep(150_000)
            let before = composeRow()
            if before.contains("keys: conversations") || before.hasPrefix("  select a conversation") {
                _ = sh("\(run.tmux) send-keys -t \(tui.name) Enter")  // opens the selected conversation, to write in it
                usleep(150_000)
            }
            let row = composeRow()
            guard row.hasPrefix("to "), !row.contains("keys: ") else { continue }
            written += 1
            _ = sh("\(run.tmux) send-keys -t \(tui.name) -l 'soak line \(written) from \(tui.name)'")
            _ = sh("\(run.tmux) send-keys -t \(tui.name) Enter")
        }
    }

    private mutating func fault(at now: Double) {
        let clients = run.bots + run.tuis
        let kinds = ["server", "client", "sleep", "world", "world", "wire"]
        switch pick(kinds) {
        case "server":
            // kill -9 the server and start it again on its data, 1–5 s later.
            let down = uniform(1, 5)
            run.server.killHard()
            faults.append(Fault(what: "server kill -9, down \(Int(down)) s", on: [], start: now, end: now + down, settle: Self.settle))
            undo(faults.count - 1, at: now + down) { [run] in run.server.launch() }
        case "client" where !clients.isEmpty:
            let victim = pick(clients)
            guard victim.stoppedUntil == nil else { return }
            let down = uniform(1, 5)
            victim.killHard()
            faults.append(Fault(what: "\(victim.kind.rawValue) kill -9, down \(Int(down)) s", on: [victim.name], start: now, end: now + down, settle: Self.settle))
            undo(faults.count - 1, at: now + down) { victim.launch() }
        case "sleep" where !clients.isEmpty:
            // A laptop asleep: SIGSTOP for 10–90 s, then SIGCONT.
            let victim = pick(clients)
            guard victim.stoppedUntil == nil, victim.pid > 0 else { return }
            let asleep = uniform(10, 90)
            victim.signal(SIGSTOP)
            victim.stoppedUntil = now + asleep
            faults.append(Fault(what: "\(victim.kind.rawValue) asleep (SIGSTOP) \(Int(asleep)) s", on: [victim.name], start: now, end: now + asleep, settle: Self.settle))
            undo(faults.count - 1, at: now + asleep) {
                victim.signal(SIGCONT)
                victim.stoppedUntil = nil
            }
        case "world" where !clients.isEmpty:
            // A fault of one user's world through `synchat fault`, lifted 10–60 s later.
            let victim = pick(clients)
            let pairs: [(WorldFaults.Change, WorldFaults.Change)] = [(.pushDrop(percent: 100), .pushUp), (.pushDelay(.seconds(90)), .pushUp),
                                                                   (.realtimeDown, .realtimeUp), (.indexerDown, .indexerUp),
                                                                   (.realtimeStale, .realtimeUp), (.pushDrop(percent: 30), .pushUp)]
            let (give, lift) = pick(pairs)
            let lasts = uniform(10, 60)
            run.fault(victim.name, give.words)  // `synchat fault USER LINE`: the command line is the edge
            faults.append(Fault(what: give.words, on: [victim.name], start: now, end: now + lasts, settle: Self.settle + 90))
            undo(faults.count - 1, at: now + lasts) { [run] in run.fault(victim.name, lift.words) }
        case "wire" where !clients.isEmpty:
            wire(pick(clients), at: now)
        default:
            break
        }
    }

    /// A fault of the network between one client and the server, in the proxy: its connections
    /// stalled for 10–60 s, reset at once, or cut in the middle of what the server sends for 5–30 s.
    private mutating func wire(_ victim: SoakProcess, at now: Double) {
        let proxy = run.proxy!
        switch pick(["stall", "reset", "cut"]) {
        case "stall":
            let lasts = uniform(10, 60)
            proxy.stall(victim.name)
            faults.append(Fault(what: "connections stalled \(Int(lasts)) s", on: [victim.name], start: now, end: now + lasts, settle: Self.settle))
            undo(faults.count - 1, at: now + lasts) { proxy.resume(victim.name) }
        case "reset":
            let reset = proxy.reset(victim.name)
            faults.append(Fault(what: "\(reset) connections reset", on: [victim.name], start: now, end: now, settle: Self.settle))
        default:
            let lasts = uniform(5, 30)
            proxy.cut(victim.name, armed: true)
            faults.append(Fault(what: "answers cut mid-way \(Int(lasts)) s", on: [victim.name], start: now, end: now + lasts, settle: Self.settle))
            undo(faults.count - 1, at: now + lasts) { proxy.cut(victim.name, armed: false) }
        }
    }

    /// Everything undone at once: the server up, every client running and awake, every world healed.
    mutating func healAll() {
        let due = pending
        pending.removeAll()
        for d in due { d.undo() }
        run.proxy.healAll()
        if run.server.pid == 0 { run.server.launch() }
        for p in run.bots + run.tuis where p.pid == 0 { p.launch() }
        let now = run.wall
        for i in faults.indices where faults[i].end > now { faults[i].end = now }
        for e in pendingEnds { faults[e.fault].end = now }  // undone only now
        pendingEnds.removeAll()
        run.takeAnchor()
    }
}
