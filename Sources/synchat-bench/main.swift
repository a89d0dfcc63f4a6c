import ChatStore
import ClientRuntime
import ChatUI
import CrashHarness
import Dispatch
import Foundation
import RunReports
import Simulation
import Spawn
import SyncCore
import SyncEngine
import WidthCorpus

// synchat-bench: prints figures; it never fails a build. Run it in release:
//   swift run -c release synchat-bench [policies|speed|worlds|matrix [--seeds A-B]|scaling [--lines N]|peers [--idle SECONDS]|net [--clients N] [--seconds S] [--rate R] [--warmup S]|team [--bots N] [--seconds S] [--speed X]|soak [--minutes M] [--bots N] [--tuis N] [--seed S] [--out DIR] [--check]|hostile [ATTACK...]|proxy --target PORT NAME...|render|compose|memory|store|search [--messages N]|firstframe [--messages N]|startup|idle|fuzz [--count N] [--from SEED]|regressions [--write]|storm|crash [KILLS]|widths [--sample N] [--size WxH] [--speed N] [--measure]|all]

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// Unbuffered, so that figures appear as they are measured, even through a pipe.
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

func percentile(_ xs: [Double], _ p: Double) -> Double {
    let s = xs.sorted()
    return s[min(s.count - 1, Int(Double(s.count - 1) * p))]
}

func fmt(_ ms: Double) -> String { String(format: "%.3f ms", ms) }

func row(_ name: String, _ value: String, _ goal: String = "") {
    say(name.padding(toLength: 56, withPad: " ", startingAt: 0) + value.padding(toLength: 16, withPad: " ", startingAt: 0) + goal)
}

/// A view state like the TUI's with `messages` in history over 200 conversations, the busiest open.
func bigState(messages: Int) throws -> (ViewState, ScenarioRun) {
    var scenario = Scenario(source: "bench")
    scenario.trafficPerHour = 0
    let run = ScenarioRun(scenario: scenario)
    try HistoryFill.fill(run.session, messages: messages, conversations: 200)
    var s = ViewState()
    let contacts = run.driver.contacts
    let unread = run.storage.unreadCounts()
    let rows = contacts.map { c in
        ConversationRow(address: c.address, name: c.displayName, unread: unread[c.address] ?? 0, muted: c.muted,
                        lastActivity: run.storage.messages(in: c.address).last?.message.blockTime)
    }
    _ = ViewModel.reduce(&s, .conversations(rows))
    let open = s.conversations[0].address
    let history = run.storage.messages(in: open).map {
        MessageRow(txId: $0.txId, outgoing: $0.message.direction == .outgoing, sender: "Contact", text: $0.message.body,
                   kind: $0.message.kind, blockTime: $0.message.blockTime, channel: $0.via)
    }
    _ = ViewModel.reduce(&s, .history(open, history))
    _ = ViewModel.reduce(&s, .key(.enter))
    var st = EngineStatus()
    st.lifecycle = .foreground
    st.realtime = .live
    st.push = .reliable
    _ = ViewModel.reduce(&s, .engineStatus(st))
    for i in 0..<ViewState.logCapacity { _ = ViewModel.reduce(&s, .logLine("00:00:\(i % 60) catch-up skipped (app-active): push reliable, next allowed in 7m")) }
    return (s, run)
}

/// Milliseconds to render `state` at 200×60, 2 000 times.
func frameTimes(_ state: ViewState) -> [Double] {
    (0..<2000).map { _ in
        let t0 = now()
        _ = Render.screen(state, width: 200, height: 60)
        return Double(now() - t0) / 1e6
    }
}

func renderBench() throws {
    say("== render (ChatUI, pure): 200x60 frame, 100 000 messages in history over 200 conversations")
    let (state, run) = try bigState(messages: 100_000)
    row("messages in the store", "\(run.storage.messageCount())")
    for _ in 0..<50 { _ = Render.screen(state, width: 200, height: 60) }
    var times: [Double] = []
    for _ in 0..<2000 {
        let t0 = now()
        let g = Render.screen(state, width: 200, height: 60)
        times.append(Double(now() - t0) / 1e6)
        precondition(g.width == 200)
    }
    row("render 200x60, median", fmt(percentile(times, 0.5)), "goal ≤ 1 ms")
    row("render 200x60, p95", fmt(percentile(times, 0.95)))

    // The log at capacity, focused and scrolled 500 rows back, everything shown: hits that
    // fold, arrivals between them, long lines that wrap.
    var logged = state
    logged.log = []
    for i in 0..<ViewState.logCapacity {
        let entry: LogEntry
        switch i % 4 {
        case 0: entry = LogEntry(time: "08:00:00", text: "observation hit \(i) (realtime): push 2s after realtime", kind: .hit(txId: "tx\(i)", pushOffset: .seconds(2), via: .realtime))
        case 1: entry = LogEntry(time: "08:00:00", text: "message tx\(i) from alice (contextual) via realtime", kind: .arrival)
        case 2: entry = LogEntry(time: "08:00:01", text: "observation hit \(i) (realtime): push 1s after realtime", kind: .hit(txId: "tx\(i)", pushOffset: .seconds(1), via: .realtime))
        default: entry = LogEntry(time: "08:00:02", text: String(repeating: "catch-up skipped (app-active): push reliable, next allowed in 7m12s ", count: 4), kind: .decision)
        }
        _ = ViewModel.reduce(&logged, .log(entry))
    }
    logged.focus = .log
    _ = ViewModel.reduce(&logged, .key(.char("L")))
    for _ in 0..<50 { _ = ViewModel.reduce(&logged, .key(.pageUp)) }
    let logTimes = frameTimes(logged)
    row("render, log of \(ViewState.logCapacity), 500 rows back, median", fmt(percentile(logTimes, 0.5)), "goal ≤ 1 ms")

    // The timeline strip (`T`) over a busy hour: a mark, requests and a fault change a minute.
    var stripped = state
    for minute in 0..<60 {
        let t = Instant.zero + .minutes(Int64(minute))
        _ = ViewModel.reduce(&stripped, .clock(t, speed: 30))
        _ = ViewModel.reduce(&stripped, .syncMark(minute % 3 == 0 ? .full : .skipped, at: t))
        _ = ViewModel.reduce(&stripped, .syncRequests(minute % 7 + 1, at: t))
        _ = ViewModel.reduce(&stripped, .truth(WorldTruth(faults: minute % 10 < 3 ? WorldFaults(push: .init(dropPercent: 100)) : .none)))
    }
    _ = ViewModel.reduce(&stripped, .key(.char("T")))
    let stripTimes = frameTimes(stripped)
    row("render 200x60 with the timeline strip, median", fmt(percentile(stripTimes, 0.5)), "goal ≤ 1 ms")
    longMessageFrames(state)

    // The inspector (`i`) in place of the messages, with this world's 402 cursors.
    var inspected = state
    _ = ViewModel.reduce(&inspected, .key(.escape))
    _ = ViewModel.reduce(&inspected, .key(.char("i")))
    _ = ViewModel.reduce(&inspected, .inspection(run.driver.engine.inspection))
    _ = ViewModel.reduce(&inspected, .truth(WorldTruth(faults: WorldFaults(push: .init(dropPercent: 100), indexer: .init(latency: .seconds(2))))))
    precondition(Render.screen(inspected, width: 200, height: 60).text.contains { $0.contains("── cursors ──") })
    let inspectorTimes = frameTimes(inspected)
    row("render 200x60 with the inspector, median", fmt(percentile(inspectorTimes, 0.5)), "goal ≤ 1 ms")
    row("render 200x60 with the inspector, p95", fmt(percentile(inspectorTimes, 0.95)))

    // Key press to updated screen: reduce the key, render, and diff against the previous
    // frame as the ncurses adapter does (what it then writes is a few changed runs).
    var s = state
    s.focus = .list
    var previous = Render.screen(s, width: 200, height: 60)
    var keyTimes: [Double] = []
    var changedCells: [Double] = []
    let keys: [Key] = [.char("j"), .char("j"), .char("k"), .pageUp, .pageDown, .char("l"), .char("l"), .tab, .tab]
    for i in 0..<3000 {
        let t0 = now()
        _ = ViewModel.reduce(&s, .key(keys[i % keys.count]))
        let g = Render.screen(s, width: 200, height: 60)
        var changed = 0
        for j in 0..<g.cells.count where g.cells[j] != previous.cells[j] { changed += 1 }
        previous = g
        keyTimes.append(Double(now() - t0) / 1e6)
        changedCells.append(Double(changed))
    }
    row("key press to new frame (reduce+render+diff), median", fmt(percentile(keyTimes, 0.5)), "goal ≤ 16 ms")
    row("key press to new frame, p95", fmt(percentile(keyTimes, 0.95)))
    row("key press to new frame, max", fmt(keyTimes.max()!))
    row("cells changed per key press, median", String(format: "%.0f of 12000", percentile(changedCells, 0.5)))

    // A letter typed in the compose line (and taken back), drawn as the app draws it
    // (`LiveApp.present`, `Terminal.redraw`): the last frame changed in place, and the rows
    // `Render.redraw` names compared with what they held.
    var typing = state
    typing.focus = .compose
    var shown = typing
    var grid = Render.screen(typing, width: 200, height: 60)
    var typeTimes: [Double] = []
    for i in 0..<3000 {
        let t0 = now()
        _ = ViewModel.reduce(&typing, .key(i % 2 == 0 ? .char("a") : .backspace))
        guard let rows = Render.redraw(&grid, typing, since: shown) else { fatalError("a letter typed redraws the screen whole") }
        var changed = 0
        for (y, before) in rows { for (a, b) in zip(grid.row(y), before) where a != b { changed += 1 } }
        precondition(changed > 0)
        shown = typing
        typeTimes.append(Double(now() - t0) / 1e6)
    }
    row("a letter typed to new frame (from the last one), median", fmt(percentile(typeTimes, 0.5)), "goal ≤ 16 ms")
    row("a letter typed to new frame, p95", fmt(percentile(typeTimes, 0.95)))
}

/// /bin/sh -c, errors discarded; what it printed, trimmed unless `raw` (a captured screen
/// keeps its leading spaces).
func sh(_ cmd: String, raw: Bool = false) -> String {
    let printed = (try? ChildProcess.run(["/bin/sh", "-c", cmd], captureOutput: true))?.out ?? ""
    return raw ? printed : printed.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// The release `synchat` beside this bench, or nil (with a line saying so).
func releaseBinary() -> String? {
    let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]  // argv[0] may be a bare name
    let binary = URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("synchat").path
    guard FileManager.default.isExecutableFile(atPath: binary) else {
        say("skipped: \(binary) not built (swift build -c release)")
        return nil
    }
    return binary
}

/// The real TUI in tmux with 100 000 messages in history: its resident memory.
func memoryBench() {
    say("== memory: the running TUI (release binary in tmux, a SQLite profile) with 100 000 messages in history")
    guard let binary = releaseBinary() else { return }
    let socket = "synchat-bench-\(getpid())"
    guard !sh("command -v tmux").isEmpty else { say("skipped: tmux is not installed"); return }
    let data = NSTemporaryDirectory() + "synchat-bench-data-\(getpid())"
    defer { try? FileManager.default.removeItem(atPath: data) }
    _ = sh("tmux -L \(socket) new-session -d -s bench -x 200 -y 60 'env XDG_DATA_HOME=\(data) \(binary) --history 100000 --speed 60' ")
    // Name the session: tmux 3.3a's bare kill-session / kill-server can leave the server running.
    defer { _ = sh("tmux -L \(socket) kill-session -t bench; tmux -L \(socket) kill-server") }
    var pid = ""
    let deadline = Date().addingTimeInterval(30)
    while Date() < deadline {
        if sh("tmux -L \(socket) capture-pane -p ").contains("Contact") {
            let pane = sh("tmux -L \(socket) display-message -p '#{pane_pid}' ")
            pid = pane
            break
        }
        usleep(100_000)
    }
    guard !pid.isEmpty else { say("skipped: the TUI did not start"); return }
    // Open the busiest conversation (its history loads) and let it run a few seconds.
    _ = sh("tmux -L \(socket) send-keys Enter ")
    sleep(3)
    let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    func kb(_ key: String) -> Double {
        let line = status.split(separator: "\n").first { $0.hasPrefix(key) } ?? ""
        return Double(line.split(separator: " ").dropFirst().first { Double($0) != nil }.flatMap { Double($0) } ?? 0)
    }
    row("resident memory now (VmRSS)", String(format: "%.1f MB", kb("VmRSS:") / 1024), "goal ≤ 50 MB")
    row("peak resident memory (VmHWM)", String(format: "%.1f MB", kb("VmHWM:") / 1024))
}

/// The SQLite store with a big history: batched inserts, cold open and first screen, size.
func storeBench() throws {
    say("== store (SQLite, GRDB): 100 000 messages over 200 conversations")
    let dir = NSTemporaryDirectory() + "synchat-bench-store-\(getpid())"
    try? FileManager.default.removeItem(atPath: dir)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let path = dir + "/bench.sqlite"
    let contacts = (0..<200).map { Address("kaspa:qcontact\($0)") }
    do {
        let store = try SQLiteChatStorage.open(path: path)
        for (i, a) in contacts.enumerated() {
            try store.upsertContact(Contact(address: a, handle: "c\(i)", displayName: "Contact \(i)"))
        }
        var batches: [[StoredMessage]] = []
        let words = ["lorem", "ipsum", "dolor", "sit", "amet", "漢字", "🎉", "consectetur"]
        for b in 0..<100 {
            batches.append((0..<1000).map { k in
                let i = b * 1000 + k
                let m = NetworkMessage(txId: String(format: "%064x", i), conversation: contacts[i % 200],
                                       direction: i % 3 == 0 ? .outgoing : .incoming, kind: .contextual,
                                       body: (0..<(3 + i % 12)).map { words[($0 + i) % words.count] }.joined(separator: " "),
                                       blockTime: Instant(milliseconds: Int64(i) * 10_000))
                return StoredMessage(message: m, receivedAt: m.blockTime, via: .fetch)
            })
        }
        let t0 = now()
        for batch in batches { _ = try store.commit(batch, cursor: nil) }
        let seconds = Double(now() - t0) / 1e9
        row("insert, 1000 per transaction", String(format: "%.0f msg/s", 100_000 / seconds), "goal ≥ 20 000 msg/s")
        try store.checkpoint()
    }
    var opens: [Double] = []
    var shown = 0
    for _ in 0..<7 {
        let t0 = now()
        let store = try SQLiteChatStorage.open(path: path)
        let activity = store.lastActivity()
        let unread = store.unreadCounts()
        let list = store.contacts().map { ($0.displayName, unread[$0.address] ?? 0, activity[$0.address] ?? .zero) }
            .sorted { $0.2 > $1.2 }
        let top = activity.max { $0.value < $1.value }!.key
        let latest = store.latestMessages(in: top, limit: 100)
        opens.append(Double(now() - t0) / 1e6)
        shown = list.count + latest.count
    }
    precondition(shown == 300)
    row("open + conversation list + latest 100, median", fmt(percentile(opens, 0.5)), "goal ≤ 150 ms")
    row("  first (coldest) of 7", fmt(opens[0]))
    let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64) ?? 0
    row("database file", String(format: "%.1f MB", Double(size) / 1_048_576))
}

/// SIGKILL the crash child again and again; check the store each time.
func crashBench(kills: Int) {
    say("== crash safety: \(kills) SIGKILLs of a writer under heavy traffic")
    let binary = Bundle.main.executablePath ?? CommandLine.arguments[0]  // this program is the child too
    let dir = NSTemporaryDirectory() + "synchat-bench-crash-\(getpid())"
    try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let report = CrashHarness(binary: binary, store: dir + "/crash.sqlite").run(kills: kills)
    row("kills", "\(report.kills)")
    row("messages in the store at the end", "\(report.messages)")
    row("failed checks (integrity, lost, twice, cursor)", "\(report.failures.count)", "goal 0")
    for f in report.failures.prefix(10) { say("  " + f) }
    row("wall time", String(format: "%.1f s", report.seconds))
}

let scenariosDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Scenarios")

func runPolicy(_ scenario: Scenario, _ policy: SyncPolicy) -> RunSummary {
    let run = ScenarioRun(scenario: scenario, policy: policy, keepsLog: false)
    run.run()
    return RunSummary(run)
}

/// Every shipped scenario under the three policies, with the ratios.
func policiesBench() throws {
    let files = try FileManager.default.contentsOfDirectory(atPath: scenariosDirectory.path).filter { $0.hasSuffix(".scenario") }.sorted()
    for file in files {
        let scenario = try ScenarioParser.load(path: scenariosDirectory.appendingPathComponent(file).path)
        say("== policies: Scenarios/\(file)")
        let runs = SyncPolicy.all.map { runPolicy(scenario, $0) }
        for line in RunSummary.comparison(runs) { say(line) }
        if let verdict = PolicyGoals.verdict(runs) { say(verdict) }
        say("")
    }
}

/// adaptive with each improvement off in turn.
func ablationBench() throws {
    for file in ["healthy-day.scenario", "offline-mode.scenario", "push-outage.scenario", "blind-spot.scenario"] {
        let scenario = try ScenarioParser.load(path: scenariosDirectory.appendingPathComponent(file).path)
        say("== ablation of adaptive: Scenarios/\(file)")
        let policies: [SyncPolicy] = [.adaptive] + ["a", "b", "c", "d", "e", "f", "g", "h"].map { SyncPolicy.adaptive.without($0) } + [.seed]
        let runs = policies.map { runPolicy(scenario, $0) }
        let header = "policy".padding(toLength: 14, withPad: " ", startingAt: 0)
            + ["requests", "full", "targeted", "lost", "p95 s", "max s", "unreliable after s"].map { $0.leftPad(10) }.joined()
        say(header)
        for r in runs {
            let cells = ["\(r.backendRequests)", "\(r.catchUpFull)", "\(r.catchUpTargeted)", "\(r.messagesLost)",
                         r.latencyP95.map { String(format: "%.1f", $0) } ?? "—", r.latencyMax.map { String(format: "%.1f", $0) } ?? "—",
                         r.timeToUnreliable.map { String(format: "%.0f", $0) } ?? "—"]
            say(r.policy.padding(toLength: 14, withPad: " ", startingAt: 0) + cells.map { $0.leftPad(10) }.joined())
        }
        say("")
    }
}

/// Simulation speed: 24 h, about 10 000 messages, all three policies.
func speedBench() throws {
    let text = """
        seed 3
        duration 24h
        contacts 20
        traffic 420/h
        at 1h background
        at 2h foreground
        at 5h push drop 100%
        at 6h push drop 0%
        at 8h background
        at 16h foreground
        """
    let scenario = try ScenarioParser.parse(text, file: "bench-24h")
    say("== simulation speed: 24 h, 20 contacts, traffic 420/h, all three policies")
    let t0 = now()
    var messages = 0
    // As `simulate --compare` runs them: side by side on the machine's cores.
    for run in try ScenarioRun.side(by: SyncPolicy.all, of: scenario, keepsLog: false) { messages = RunSummary(run).messagesSent }
    let seconds = Double(now() - t0) / 1e9
    row("messages per run", "\(messages)")
    row("three policies, wall", String(format: "%.2f s", seconds), "goal ≤ 0.5 s")
    row("virtual hours per wall second", String(format: "%.0f", 3 * 24 / seconds))
}

extension String {
    func leftPad(_ n: Int) -> String { count >= n ? " " + self : String(repeating: " ", count: n - count) + self }
}

let what = CommandLine.arguments.dropFirst().first ?? "all"
let rest = Array(CommandLine.arguments.dropFirst(2))
let sections = ["policies", "speed", "worlds", "matrix", "scaling", "peers", "net", "team", "soak", "hostile", "render", "compose", "memory", "store", "search", "firstframe", "startup", "idle", "fuzz", "regressions", "storm", "crash", "widths", "all"]
// The terminal side of the width probe: runs inside a tmux pane (see WidthBench.swift).
// The crash harness's child (see CrashHarness.childMain): a writer to be killed.
if what == "crash-child" { CrashHarness.childMain(rest) }
if what == "probe-widths" {
    guard rest.count == 2 else { usage("probe-widths takes IN and OUT files") }
    do { try TerminalProbe.runProbe(input: rest[0], output: rest[1]) } catch { usage("probe-widths: \(error)") }
    exit(0)
}
// `--help` anywhere (`synchat-bench fuzz --help`) is the usage, never an unknown argument.
if ["-h", "--help", "help"].contains(what) || rest.contains(where: { ["-h", "--help"].contains($0) }) {
    say("usage: synchat-bench [policies|speed|worlds|matrix [--seeds A-B]|scaling [--lines N]|peers [--idle SECONDS]|net [--clients N] [--seconds S] [--rate R] [--warmup S]|team [--bots N] [--seconds S] [--speed X]|soak [--minutes M] [--bots N] [--tuis N] [--seed S] [--out DIR] [--check]|hostile [ATTACK...]|proxy --target PORT NAME...|render|compose|memory|store|search [--messages N]|firstframe [--messages N]|startup|idle|fuzz [--count N] [--from SEED]|regressions [--write]|storm|crash [KILLS]|widths [--sample N] [--size WxH] [--speed N] [--measure]|all]")
    say("Prints figures (run it in release: swift run -c release synchat-bench); never fails a build.")
    exit(0)
}
if what == "proxy" { proxyTool(rest) }
guard sections.contains(what) else { usage("unknown section \(what) (expected \(sections.joined(separator: ", ")))") }
let fuzzCount = what == "fuzz" ? fuzzArguments(rest) : (count: 1_000, from: UInt64(1))
var kills = 120
var searchMessages = 1_000_000
var scalingLines = 1_000_000
var peersIdle = 60
var net = (clients: 100, seconds: 30, rate: 120.0, warmup: 5)
var team = TeamSettings()
var soak = SoakSettings()
var matrixSeeds: ClosedRange<UInt64> = 1...1000
if what == "crash", let arg = rest.first {
    guard rest.count == 1, let n = Int(arg), n > 0 else { usage("crash takes one positive number of kills, not \(rest.joined(separator: " "))") }
    kills = n
} else if what == "peers" {
    if rest.count == 2, rest[0] == "--idle", let n = Int(rest[1]), n > 0 { peersIdle = n }
    else if !rest.isEmpty { usage("peers takes --idle SECONDS, not \(rest.joined(separator: " "))") }
} else if what == "net" {
    let n = positiveFlags(rest, ["--clients", "--seconds", "--rate", "--warmup"], of: "net")
    net = (n["--clients"].map(Int.init) ?? net.clients, n["--seconds"].map(Int.init) ?? net.seconds, n["--rate"] ?? net.rate,
           n["--warmup"].map(Int.init) ?? net.warmup)
} else if what == "team" {
    team = teamArguments(rest)
} else if what == "soak" { soak = soakArguments(rest)
} else if what == "matrix" { matrixSeeds = matrixSweepArguments(rest)
} else if what == "scaling" {
    if rest.count == 2, rest[0] == "--lines", let n = Int(rest[1]), n > 0 { scalingLines = n }
    else if !rest.isEmpty { usage("scaling takes --lines N, not \(rest.joined(separator: " "))") }
} else if what == "search" || what == "firstframe" {
    if rest.count == 2, rest[0] == "--messages", let n = Int(rest[1]), n > 0 { searchMessages = n }
    else if !rest.isEmpty { usage("\(what) takes --messages N, not \(rest.joined(separator: " "))") }
} else if what == "regressions" {
    if !(rest.isEmpty || rest == ["--write"]) { usage("regressions takes --write, not \(rest.joined(separator: " "))") }
} else if what == "hostile" {
    let unknown = rest.filter { name in !hostileAttacks.contains { $0.name == name } }
    if !unknown.isEmpty { usage("hostile takes attacks among \(hostileAttacks.map(\.name).joined(separator: ", ")), not \(unknown.joined(separator: " "))") }
} else if what != "fuzz", what != "widths", !rest.isEmpty {
    usage("\(what) takes no arguments")
}
say("synchat-bench — \(ProcessInfo.processInfo.processorCount) cores")
if what == "policies" || what == "all" { try policiesBench(); try ablationBench() }
if what == "speed" || what == "all" { try speedBench() }
if what == "worlds" { try worldsBench() }  // not in all: a simulated week, and the matrix
if what == "matrix" { try matrixSweepBench(seeds: matrixSeeds) }  // not in all: 1000 grids
if what == "scaling" { try scalingBench(lines: scalingLines) }  // not in all: a minute or more
if what == "peers" { peersBench(idleSeconds: peersIdle) }  // not in all: minutes of waiting
if what == "net" { netBench(clients: net.clients, seconds: net.seconds, rate: net.rate, warmup: net.warmup) }  // not in all: a server and its clients
if what == "team" { teamBench(bots: team.bots, seconds: team.seconds, speed: team.speed) }  // not in all: a server and its team
if what == "soak" { exit(soakBench(soak)) }  // not in all: an hour of chaos
if what == "hostile" { hostileBench(only: rest) }  // not in all: a server under floods, 1 000 joins, a full disk
if what == "render" || what == "all" { try renderBench() }
if what == "search" || what == "all" { try searchBench(messages: searchMessages) }
if what == "firstframe" { firstFrameBench(messages: searchMessages) }  // not in all: it builds a large profile
if what == "startup" { for n in [10_000, 100_000, 1_000_000] { firstFrameBench(messages: n) } }  // the first frame at three sizes
if what == "idle" { idleBench() }  // not in all: two minutes of waiting
if what == "compose" || what == "all" { composeBench() }
if what == "memory" || what == "all" { memoryBench() }
if what == "store" || what == "all" { try storeBench() }
if what == "fuzz" || what == "all" { fuzzBench(count: fuzzCount.count, from: fuzzCount.from) }
if what == "regressions" { try regressionsBench(write: rest == ["--write"]) }  // not in all: it may rewrite the regression files
if what == "storm" || what == "all" { stormBench() }
if what == "crash" || what == "all" { crashBench(kills: kills) }
if what == "widths" || what == "all" { widthsBench(arguments: what == "widths" ? rest : []) }
