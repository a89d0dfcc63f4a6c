import ArgumentParser
import ChatStore
import Config
import Foundation
import Fuzzing
import Logging
import NIOSSL
import ProfileWorld
import SimWorld
import Simulation
import SyncCore
import SyncEngine
import App
import TerminalUI
import WorldOnDisk
import WorldServer

// The executable is thin: argument parsing and wiring (docs/design.md).

/// `synchat` runs the chat, so the root command carries the chat's flags: `synchat --help`
/// lists them, next to the subcommands.
struct Synchat: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "synchat",
        abstract: "A terminal chat client whose heart is a sync engine, on an embedded simulated network.",
        usage: """
            synchat [<options>]
            synchat <subcommand>
            """,
        discussion: """
            Without a subcommand: the chat, full screen, on the embedded simulated network. \
            Press ? in the app for the keys. Time runs --speed times faster than the wall clock.
            """,
        version: "synchat 0.1.0",
        subcommands: [Simulate.self, Server.self, Bot.self, Fault.self]
    )

    @OptionGroup var chat: Chat

    func run() throws { try chat.run() }
}

/// A subcommand's arguments are its own. ArgumentParser lets a parent command take its
/// options from anywhere on the line, so the root, which has the chat's `--seed`,
/// `--policy` and `--scenario`, would take them from after `simulate` too. It stops at a
/// subcommand that captures its remaining input: what the subcommand does not know lands
/// here, and is refused.
struct SubcommandArguments: ParsableArguments {
    @Argument(parsing: .captureForPassthrough, help: .hidden)
    var unknown: [String] = []

    func validate() throws {
        guard let first = unknown.first else { return }
        // Worded as ArgumentParser words its own.
        throw ValidationError(first.hasPrefix("-") ? "Unknown option '\(first)'" : "Unexpected argument '\(first)'")
    }
}

/// Numbers on the command line are read as text and unconditionally (`parsing:
/// .unconditional`): ArgumentParser takes `-5` for a flag and says "Missing value", where
/// the error should say what is wrong with the number.
enum CommandLineNumber {
    static func seed(_ text: String) throws -> UInt64 {
        guard let n = UInt64(text) else { throw ValidationError("--seed \(text): expected a whole number from 0 to \(UInt64.max)") }
        return n
    }

    static func speed(_ text: String) throws -> Double {
        guard let v = Double(text), v.isFinite, v > 0, v <= 10_000 else {
            throw ValidationError("--speed \(text): must be more than 0 and at most 10000")
        }
        return v
    }
}

/// The chat's flags (the root command's).
struct Chat: ParsableArguments {
    @Option(name: .customLong("seed"), parsing: .unconditional,
            help: ArgumentHelp("Seed of a new world (default 1, or the scenario's); a resumed profile keeps its own.", valueName: "N"))
    var seedText: String?

    @Option(name: .customLong("speed"), parsing: .unconditional,
            help: ArgumentHelp("Simulated seconds per wall second, more than 0 and at most 10000 (default 10); + and - change it live.", valueName: "N"))
    var speedText: String?

    @Option(name: .long, help: "Sync policy: naive, seed or adaptive.")
    var policy: String = "adaptive"

    @Option(name: .long, help: "Notification mode: remote-push, background-fetch or off.")
    var mode: String?

    @Option(name: .long, help: "Play this scenario file live (keys still work).")
    var scenario: String?

    @Option(name: .long, help: "Theme: a shipped one (default, light, high-contrast), one of yours in $XDG_CONFIG_HOME/synchat/themes/NAME.toml, or a path.")
    var theme: String?

    @Option(name: .long, help: "Append every engine event to this file (swift-log).")
    var log: String?

    @Flag(name: .long, help: "Ring the terminal's bell when a message comes in a conversation you are not reading (not with preview hidden).")
    var bell = false

    @Flag(name: .customLong("no-mouse"), help: "Leave the mouse to the terminal (its own selection); by default a click opens or focuses, the wheel scrolls.")
    var noMouse = false

    @Option(name: .long, help: "Write this session as a scenario file: replayed by simulate --events, it prints the lines --log wrote. Needs a new world.")
    var record: String?

    @Option(name: .long, help: .hidden)
    var history: Int = 0

    @Flag(name: .long, help: "Keep everything in memory; nothing is written to disk.")
    var ephemeral = false

    @Option(name: .long, help: ArgumentHelp("Chat on a synchat server instead of the embedded world (with --user).", valueName: "URL"))
    var server: String?

    @Option(name: .long, help: ArgumentHelp("Your name on the server; the secret of your first join is kept in the profile.", valueName: "NAME"))
    var user: String?

    @Option(name: .long, help: ArgumentHelp("For an https:// server whose certificate a private CA signed: that CA's certificate (PEM).", valueName: "FILE"))
    var ca: String?

    @Option(name: .long, help: ArgumentHelp("The server's invite, for your first join there (its operator has it; synchat server prints it).", valueName: "CODE"))
    var invite: String?

    @Option(name: .customLong("admin-token"), help: ArgumentHelp("The server's admin token, or env to take it from SYNCHAT_ADMIN_TOKEN (not in ps): read the server's truth of your world, so the status bar's truth: segment can say what the engine has not noticed yet; without it the segment says nothing. Sent only over https, or to a loopback server.", valueName: "TOKEN"))
    var adminToken: String?

    /// The operator's token as given: `env` reads SYNCHAT_ADMIN_TOKEN, never taken unasked
    /// (an exported token for one server's `synchat fault` is not sent to another).
    var resolvedAdminToken: String? {
        guard let adminToken else { return nil }
        guard adminToken == "env" else { return adminToken }
        return ProcessInfo.processInfo.environment["SYNCHAT_ADMIN_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
    }

    @Option(name: .long, help: "Profile kept in $XDG_DATA_HOME/synchat/NAME.sqlite: history, learned push state, world (default profile: default).")
    var profile: String?

    func validate() throws {
        _ = try seedText.map(CommandLineNumber.seed)
        _ = try CommandLineNumber.speed(speedText ?? "10")
        if let server {
            let url = try ServerURL.parse(server)
            if ca != nil, !url.tls { throw ValidationError("--ca is for https:// servers; \(server) is plain http") }
            if adminToken != nil {
                // The operator's token opens every user's world: never in clear across a network.
                if !url.tls, !WorldServer.isLoopback(url.host) {
                    throw ValidationError("--admin-token over plain http to \(url.host) would carry the operator's token in clear: use https://, or a loopback server")
                }
                if resolvedAdminToken == nil { throw ValidationError("--admin-token env: SYNCHAT_ADMIN_TOKEN is not set") }
            }
            guard let user, WorldHost.isValidName(user) else {
                throw ValidationError("--server needs --user NAME: 1 to 32 of a-z, 0-9, _ and -, starting with a letter or a digit")
            }
            for (given, flag) in [(seedText != nil, "--seed"), (speedText != nil, "--speed"), (scenario != nil, "--scenario"),
                                  (record != nil, "--record"), (history > 0, "--history")] where given {
                throw ValidationError("\(flag) is the embedded world's: with --server the world, its clock and its speed are the server's")
            }
        } else if user != nil {
            throw ValidationError("--user names you on a server: give --server URL too")
        } else if invite != nil || ca != nil || adminToken != nil {
            let flag = invite != nil ? "--invite" : ca != nil ? "--ca" : "--admin-token"
            throw ValidationError("\(flag) is a server's: give --server URL and --user NAME too")
        }
        guard SyncPolicy.named(policy) != nil else {
            throw ValidationError("--policy \(policy): expected naive, seed or adaptive")
        }
        if let mode, NotificationMode(rawValue: mode) == nil {
            throw ValidationError("--mode \(mode): expected remote-push, background-fetch or off")
        }
        if record != nil, scenario != nil {
            throw ValidationError("--record writes a live session as a scenario; with --scenario, replay that scenario instead")
        }
        if let profile {
            guard !ephemeral else { throw ValidationError("--profile and --ephemeral exclude each other") }
            guard !profile.isEmpty, profile.count <= 64, profile.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
                throw ValidationError("--profile \(profile): use letters, digits, - and _")
            }
        }
    }

    func run() throws {
        let seed = try seedText.map(CommandLineNumber.seed)
        if let server, let user { return try runOnServer(server, user: user) }
        let speed = try CommandLineNumber.speed(speedText ?? "10")
        var script: Scenario?
        if let path = scenario { script = try ScenarioParser.load(path: path) }
        if let mode { script?.mode = NotificationMode(rawValue: mode)! }
        var profileStore: SQLiteChatStorage?
        if !ephemeral {
            let name = profile ?? "default"
            do { profileStore = try SQLiteChatStorage.openProfile(name, path: try Profiles.path(for: name)) } catch let e as any ProfileError {
                refuse(e.description)
            }
            // The profile keeps its world: a world part a newer synchat wrote is refused here.
            do { try profileStore?.keepWorld() } catch { refuse("\(error)") }
        }
        let (chosenTheme, themeWarnings) = try theme(for: profileStore)
        let eventLog = try eventLogger()
        // The live chat is a session; a scenario plays into one.
        // --ephemeral: the same SQLite store in memory, so that search and every read behave as with a profile.
        let storage: ChatStorage = try profileStore ?? SQLiteChatStorage.inMemory()
        let player = script.map { ScenarioRun(scenario: $0, seed: seed, policy: SyncPolicy.named(policy)!, storage: storage, persistence: profileStore) }
        let session = player?.session ?? AppSession(
            seed: seed ?? 1, contacts: LiveApp.contacts, trafficPerHour: LiveApp.trafficPerHour,
            mode: mode.flatMap(NotificationMode.init) ?? .remotePush, policy: SyncPolicy.named(policy)!, storage: storage,
            persistence: profileStore)
        if player == nil { session.start() }
        if session.resumed, let mode { session.driver.setMode(NotificationMode(rawValue: mode)!) }
        if history > 0 { try HistoryFill.fill(session, messages: history, conversations: 200) }  // synchat-bench
        var recorder: SessionRecorder?
        if let record {
            do { recorder = try SessionRecorder(path: record, session: session, policy: SyncPolicy.named(policy)!) } catch {
                fail("\(error)")
            }
        }
        let memory = profileStore.map { store in
            LiveApp.MemoryStore(load: { store.setting("view") }, save: { try? store.setSetting("view", $0) })
        }
        let (keys, keyWarnings) = KeyFile.load()
        let app = LiveApp(session: session, player: player, speed: speed, eventLog: eventLog, recorder: recorder, memory: memory, keys: keys)
        app.bell = bell
        let terminal = Terminal(theme: chosenTheme)
        terminal.mouse = !noMouse
        do {
            try terminal.open()
        } catch let e as Terminal.OpenError {
            refuse(e.description)
        }
        app.loop(terminal: terminal, notices: themeWarnings.map { "theme: " + $0 } + keyWarnings.map { "keys: " + $0 })
        terminal.close()
        profileStore?.close()  // a clean end: the next start need not read the file through
        if profileStore != nil, !app.unsentDrafts.isEmpty {
            let names = app.unsentDrafts.map(UntrustedText.visible).joined(separator: ", ")
            FileHandle.standardOutput.write(Data("synchat: your unsent line to \(names) is kept in the profile; it will be there next time\n".utf8))
        }
    }
}

extension Chat {
    /// The theme: --theme sets it (and the profile remembers it), no --theme uses the
    /// profile's. A theme named on the command line must exist (exit 2 if not); one the
    /// profile remembers may have gone since: then a warning and the default theme.
    func theme(for profileStore: SQLiteChatStorage?) throws -> (Theme, [String]) {
        let themeName = theme ?? profileStore?.setting("theme")
        let chosen: (Theme, [String])
        do {
            chosen = try ThemeLoader.load(themeName)
        } catch let error as ThemeError where theme == nil {
            // Said once: the profile forgets the theme, so the next launch is quiet.
            let (fallback, more) = try ThemeLoader.load(nil)
            chosen = (fallback, [error.description + "; using the default theme from now on"] + more)
            try? profileStore?.setSetting("theme", "default")
        }
        if let theme { try? profileStore?.setSetting("theme", theme) }
        return chosen
    }

    /// --log FILE: every engine event appended through swift-log.
    func eventLogger() throws -> ((String) -> Void)? {
        guard let path = log else { return nil }
        let handle = try FileLogHandler.open(path)
        LoggingSystem.bootstrap { _ in FileLogHandler(handle: handle) }
        let logger = Logger(label: "synchat")
        return { logger.info("\($0)") }
    }
}

struct Simulate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a scenario in virtual time, as fast as the machine allows.",
        discussion: """
            Prints the measures of the run (docs/simulate.md), the three policies side by side with --compare, \
            or with --events the event log, one line per engine decision. With --matrix instead of a scenario, \
            every policy over a grid of worlds (app, realtime, push, indexer, mode, device network), a few \
            simulated hours each on its own seed: docs/matrix.md.
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable { case table, json }

    @Option(name: .long, help: "The scenario file (see Scenarios/).")
    var scenario: String?

    @Flag(name: .long, help: "Run the policies over the fault matrix's grid of worlds instead of a scenario (docs/matrix.md).")
    var matrix = false

    @Option(name: .customLong("duration"), help: ArgumentHelp("With --matrix: how long each cell runs (default 3h).", valueName: "D"))
    var durationText: String?

    @Option(name: .customLong("matrix-cell"), help: ArgumentHelp("Print the scenario of the matrix's cell N (as the table numbers it), to run or shrink on its own.", valueName: "N"))
    var matrixCell: Int?

    @Option(name: .customLong("matrix-seed"), help: ArgumentHelp("With --matrix or --matrix-cell: the same grid drawn on other seeds (docs/matrix.md).", valueName: "N"))
    var matrixSeedText: String?

    @Option(name: .customLong("push-model"), help: ArgumentHelp("What the push service keeps while the device is offline: ideal, apns or fcm (overrides the scenario's push model line).", valueName: "MODEL"))
    var pushModel: String?

    @Option(name: .customLong("seed"), parsing: .unconditional, help: ArgumentHelp("Override the scenario's seed.", valueName: "N"))
    var seedText: String?

    @Option(name: .long, help: "naive, seed or adaptive (default adaptive; with --matrix, all three unless given).")
    var policy: String?

    @Flag(name: .long, help: "Run naive, seed and adaptive on the same world and print them side by side.")
    var compare = false

    @Option(name: .long, help: "table or json.")
    var format: Format = .table

    @Flag(name: .long, help: "Print the event log instead of the measures.")
    var events = false

    @Option(name: .long, help: ArgumentHelp("Also draw the run over time as an SVG timeline, one panel per policy.", valueName: "FILE.svg"))
    var chart: String?

    @Option(name: .customLong("chart-lane"), help: ArgumentHelp("What the chart's bars count: requests (default) or bytes (what the backend served).", valueName: "requests|bytes"))
    var chartLane: String = "requests"

    @Option(name: .customLong("store"), help: ArgumentHelp("""
        Where a run keeps its messages: memory, disk (temporary SQLite files: memory flat in the run's length), \
        or auto (disk past \(HistoryChoice.diskThreshold) messages).
        """, valueName: "auto|memory|disk"))
    var store: String = "auto"

    @Flag(name: .long, help: "Print the smallest scenario whose run still shows --until or --until-invariant (progress on stderr; docs/simulate.md).")
    var shrink = false

    @Option(name: .long, help: ArgumentHelp("With --shrink: a line of the --events output that must still contain this text.", valueName: "TEXT"))
    var until: String?

    @Option(name: .customLong("until-invariant"), help: ArgumentHelp("With --shrink: the invariant the run must still break: lost, duplicate or false-unreliable.", valueName: "NAME"))
    var untilInvariant: String?

    @Option(name: .long, help: ArgumentHelp("Write a tester's report into this new or empty folder: the scenario, its event log, the comparison, the chart and a README on replaying it.", valueName: "DIR"))
    var report: String?

    /// The invariants `--until-invariant` names, as the fuzzer checks them.
    static let shrinkInvariants: [(String, Violation.Kind)] = [("lost", .lost), ("duplicate", .duplicates), ("false-unreliable", .falseUnreliable)]

    @OptionGroup var subcommandArguments: SubcommandArguments

    func validate() throws {
        _ = try seedText.map(CommandLineNumber.seed)
        if let untilInvariant, !Self.shrinkInvariants.contains(where: { $0.0 == untilInvariant }) {
            throw ValidationError("--until-invariant \(untilInvariant): expected lost, duplicate or false-unreliable")
        }
        if shrink {
            if until == nil && untilInvariant == nil { throw ValidationError("--shrink needs --until TEXT or --until-invariant lost|duplicate|false-unreliable") }
            if until != nil && untilInvariant != nil { throw ValidationError("--until and --until-invariant: give one or the other") }
            if until?.isEmpty == true { throw ValidationError("--until: give the text a line must contain") }
            if compare || events || chart != nil || report != nil || matrix || matrixCell != nil {
                throw ValidationError("--shrink prints a scenario: give it --scenario, --until or --until-invariant, and --policy (not --compare, --events, --chart, --report or --matrix)")
            }
        } else if until != nil || untilInvariant != nil {
            throw ValidationError("\(until != nil ? "--until" : "--until-invariant") goes with --shrink")
        }
        if report != nil, compare || events || chart != nil || matrix || matrixCell != nil || format != .table {
            throw ValidationError("--report writes the event log, the comparison and the chart itself: give it --scenario and --policy (not --compare, --events, --chart, --format or --matrix)")
        }
        if let policy, SyncPolicy.named(policy) == nil { throw ValidationError("--policy \(policy): expected naive, seed or adaptive") }
        if compare && events { throw ValidationError("--events prints one run's log: use it with --policy, not --compare") }
        guard HistoryChoice(rawValue: store) != nil else { throw ValidationError("--store \(store): expected auto, memory or disk") }
        guard TimelineChart.Lane(rawValue: chartLane) != nil else { throw ValidationError("--chart-lane \(chartLane): expected requests or bytes") }
        if let pushModel, PushModel(rawValue: pushModel) == nil { throw ValidationError("--push-model \(pushModel): expected ideal, apns or fcm") }
        if matrix || matrixCell != nil {
            if scenario != nil { throw ValidationError("--matrix runs its own worlds: give it no --scenario") }
            if events || compare || seedText != nil || pushModel != nil {
                throw ValidationError("--matrix takes --policy, --duration, --matrix-seed, --format and --chart (not --events, --compare, --seed or --push-model)")
            }
            if let durationText { _ = try Self.matrixDuration(durationText) }
            if let matrixSeedText, UInt64(matrixSeedText) == nil { throw ValidationError("--matrix-seed \(matrixSeedText): expected a whole number from 0 to \(UInt64.max)") }
            if let matrixCell, !FaultMatrix.cells.indices.contains(matrixCell) {
                throw ValidationError("--matrix-cell \(matrixCell): the matrix has cells 0 to \(FaultMatrix.cells.count - 1)")
            }
        } else {
            if scenario == nil { throw ValidationError("give --scenario FILE (or --matrix)") }
            if durationText != nil { throw ValidationError("--duration goes with --matrix (a scenario says its own duration)") }
            if matrixSeedText != nil { throw ValidationError("--matrix-seed goes with --matrix or --matrix-cell") }
        }
    }

    static func matrixDuration(_ text: String) throws -> Interval {
        let d: Interval
        do { d = try ScenarioParser.parseDuration(text, { ScenarioError(file: "--duration", line: 0, message: $0) }) } catch {
            throw ValidationError("--duration \(text): expected a duration such as 3h or 90m")
        }
        guard d >= .hours(1), d <= .hours(24 * 7) else { throw ValidationError("--duration \(text): a cell runs from 1h to 7d") }
        return d
    }

    func run() throws {
        if let matrixCell {
            let d = try durationText.map(Self.matrixDuration) ?? .hours(3)
            return FileHandle.standardOutput.write(Data(FaultMatrix.cells[matrixCell].scenarioText(duration: d, matrixSeed: matrixSeedText.flatMap { UInt64($0) }).utf8))
        }
        if matrix { return try runMatrix() }
        if shrink { return try runShrink() }
        if let report { return try runReport(into: report) }
        let policies = compare ? SyncPolicy.all : [SyncPolicy.named(policy ?? "adaptive")!]
        // The log is kept only to be printed or drawn: the measures do not need it.
        let summaries = try simulated(policies, keepsLog: events || chart != nil)
        if let chart {
            let svg = chartSVG(summaries)
            guard FileManager.default.createFile(atPath: chart, contents: Data(svg.utf8)) else { fail("--chart: cannot write \(chart)") }
        }
        var lines: [String]
        if events {
            lines = summaries[0].0.logLines
        } else if format == .json {
            lines = compare ? ["[" + summaries.map(\.1.json).joined(separator: ",\n ") + "]"] : [summaries[0].1.json]
        } else {
            lines = compare ? RunSummary.comparison(summaries.map(\.1)) : summaries[0].1.table
        }
        FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }
}

extension Simulate {
    /// The scenario's runs under `policies`, side by side on the machine's cores (the first
    /// one shows progress), with their measures.
    func simulated(_ policies: [SyncPolicy], keepsLog: Bool) throws -> [(ScenarioRun, RunSummary)] {
        let seed = try seedText.map(CommandLineNumber.seed)
        var parsed = try ScenarioParser.load(path: scenario!, streaming: true)  // its steps read as the runs reach them
        if let pushModel { parsed.pushModel = PushModel(rawValue: pushModel)! }
        let labels = policies.map(\.name).joined(separator: ", ")
        // A long run keeps its history in temporary files (SQLite deletes them when it ends).
        let onDisk = HistoryChoice(rawValue: store)!.onDisk(for: parsed)
        let onDiskHome: @Sendable () throws -> HistoryHome = {
            HistoryHome(storage: InMemoryChatStorage(rows: try SQLiteMessageRows()), history: try SQLiteWorldHistory())
        }
        let home = onDisk ? onDiskHome : nil
        return try ScenarioRun.side(by: policies, of: parsed, seed: seed, keepsLog: keepsLog, home: home) { run, i in
            if i == 0 { Progress.run(run, label: labels) } else { run.run() }
        }.map { ($0, RunSummary($0)) }
    }

    /// The timeline of `--chart`, one panel per run.
    func chartSVG(_ summaries: [(ScenarioRun, RunSummary)], name: String? = nil) -> String {
        TimelineChart.svg(summaries.map { ($0.0.policy.name, RunTimeline($0.0)) },
                          title: "\(name ?? (scenario! as NSString).lastPathComponent), seed \(summaries[0].0.seed)",
                          lane: TimelineChart.Lane(rawValue: chartLane)!)
    }
}

extension Simulate {
    /// `--matrix`: every cell, every policy (or the one named), on every core.
    func runMatrix() throws {
        let duration = try durationText.map(Self.matrixDuration) ?? .hours(3)
        let policies = policy.map { [SyncPolicy.named($0)!] } ?? SyncPolicy.all
        let tty = isatty(STDERR_FILENO) == 1
        let rows = try FaultMatrix.run(policies: policies, duration: duration, matrixSeed: matrixSeedText.flatMap { UInt64($0) }) { done, total in
            if tty { FileHandle.standardError.write(Data("\rfault matrix: \(done) of \(total) runs   ".utf8)) }
        }
        if tty { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        if let chart {
            let svg = MatrixChart.svg(rows, title: "fault matrix: \(FaultMatrix.cells.count) cells × \(policies.count) policies, \(duration) each")
            guard FileManager.default.createFile(atPath: chart, contents: Data(svg.utf8)) else { fail("--chart: cannot write \(chart)") }
        }
        let lines = format == .json ? [FaultMatrix.json(rows)] : FaultMatrix.table(rows)
        FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }
}

/// A long run shows its progress on stderr, when stderr is a terminal and it takes more than a second.
enum Progress {
    static func run(_ run: ScenarioRun, label: String) {
        let tty = isatty(STDERR_FILENO) == 1
        let started = Date()
        let end = run.scriptEnd + run.scenario.settle
        var shown = false
        while !run.finished {
            run.advance(to: min(end, run.scheduler.now + .hours(1)))
            if tty, Date().timeIntervalSince(started) > 1 {
                let done = Double(run.scheduler.now.milliseconds) / Double(max(1, end.milliseconds))
                FileHandle.standardError.write(Data("\rsimulating \(label): \(Int(done * 100))% of \(run.scenario.duration)   ".utf8))
                shown = true
            }
        }
        if shown { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}

struct Server: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the simulated world over real sockets: many users in one world.",
        discussion: """
            One world, its clock on the wall clock times --speed; each user who joins gets --contacts simulated \
            contacts writing --traffic, and every other user as a contact. Prints where it listens and the admin \
            token, then serves until killed. HTTP: POST /v1/join, GET /v1/world, POST /v1/publish, \
            GET /v1/indexer/...; WebSockets: /v1/node (the node), /v1/push (the push relay); \
            GET /admin/truth and POST /admin/fault (a scenario directive) with Authorization: Bearer TOKEN. \
            The protocol: docs/server.md.
            """
    )

    @Option(name: .long, help: "Address to listen on (loopback by default).")
    var host = "127.0.0.1"

    @Option(name: .customLong("port"), parsing: .unconditional, help: ArgumentHelp("Port to listen on; 0 takes any free port.", valueName: "N"))
    var portText = "7420"

    @Option(name: .customLong("seed"), parsing: .unconditional, help: ArgumentHelp("Seed of the world (default 1).", valueName: "N"))
    var seedText: String?

    @Option(name: .customLong("speed"), parsing: .unconditional,
            help: ArgumentHelp("Simulated seconds per wall second, more than 0 and at most 10000.", valueName: "N"))
    var speedText = "1"

    @Option(name: .customLong("contacts"), parsing: .unconditional, help: ArgumentHelp("Simulated contacts of each user, 0 to 20.", valueName: "N"))
    var contactsText = "6"

    @Option(name: .customLong("traffic"), parsing: .unconditional, help: ArgumentHelp("Messages an hour from each user's simulated contacts.", valueName: "N/h"))
    var trafficText = "24/h"

    @Option(name: .long, help: ArgumentHelp("Play this scenario's network lines on the server's clock (faults for every user, receive lines); its contacts and traffic lines set --contacts and --traffic.", valueName: "FILE"))
    var scenario: String?

    @Option(name: .long, help: ArgumentHelp("Keep the world here (world.sqlite): users, secrets, messages, the clock; a restart resumes it. Without it, the world lives in memory.", valueName: "DIR"))
    var data: String?

    @Option(name: .customLong("peer-connections"), parsing: .unconditional, help: ArgumentHelp("Connections one peer address may hold open at once (default 64); more are closed as they come.", valueName: "N"))
    var peerConnectionsText = "64"

    @Option(name: .customLong("head-timeout"), parsing: .unconditional, help: ArgumentHelp("A request's head must arrive whole within this of the connection or of the last answer's request (default 10s).", valueName: "D"))
    var headTimeoutText = "10s"

    @Option(name: .customLong("idle-timeout"), parsing: .unconditional, help: ArgumentHelp("An idle keep-alive connection, or a declared body that does not come, is closed after this (default 30s).", valueName: "D"))
    var idleTimeoutText = "30s"

    @Option(name: .long, help: ArgumentHelp("The code a new user's first join must show (synchat --invite CODE); without it, one is made and printed at start.", valueName: "CODE"))
    var invite: String?

    @Flag(name: .long, help: "Let anyone join, with no invite (a demo on loopback, a test).")
    var open = false

    @Option(name: .customLong("tls-cert"), help: ArgumentHelp("Serve https and wss with this certificate chain (PEM), with --tls-key.", valueName: "FILE"))
    var tlsCert: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("The certificate's private key (PEM).", valueName: "FILE"))
    var tlsKey: String?

    @Flag(name: .long, help: "Listen on an address other than loopback without TLS (secrets cross the network in clear).")
    var insecure = false

    @Option(name: .customLong("peer-joins"), parsing: .unconditional, help: ArgumentHelp("Joins one peer address may make a minute (default 60); more get 429.", valueName: "N"))
    var peerJoinsText = "60"

    /// The connection limits (issue 28 #2, #3), read from their flags.
    func limits() throws -> (peer: Int, head: Interval, idle: Interval, joins: Int) {
        guard let peer = Int(peerConnectionsText), (1...8_192).contains(peer) else {
            throw ValidationError("--peer-connections \(peerConnectionsText): expected 1 to 8192")
        }
        guard let joins = Int(peerJoinsText), (1...1_000_000).contains(joins) else {
            throw ValidationError("--peer-joins \(peerJoinsText): expected 1 to 1000000")
        }
        func duration(_ text: String, _ flag: String) throws -> Interval {
            guard let d = try? ScenarioParser.parseDuration(text, { ScenarioError(file: flag, line: 0, message: $0) }),
                  d.milliseconds >= 100, d <= .hours(1) else {
                throw ValidationError("\(flag) \(text): expected a duration from 100ms to 1h, e.g. 10s")
            }
            return d
        }
        return (peer, try duration(headTimeoutText, "--head-timeout"), try duration(idleTimeoutText, "--idle-timeout"), joins)
    }

    @OptionGroup var subcommandArguments: SubcommandArguments

    func numbers() throws -> (port: Int, seed: UInt64, speed: Double, contacts: Int, traffic: Double) {
        guard let port = Int(portText), (0...65_535).contains(port) else { throw ValidationError("--port \(portText): expected 0 to 65535") }
        guard let contacts = Int(contactsText), (0...20).contains(contacts) else { throw ValidationError("--contacts \(contactsText): expected 0 to 20") }
        let rate = trafficText.hasSuffix("/h") ? String(trafficText.dropLast(2)) : trafficText
        guard let traffic = Double(rate), traffic.isFinite, traffic >= 0, traffic <= 1_000_000 else {
            throw ValidationError("--traffic \(trafficText): expected messages an hour, e.g. 24/h")
        }
        return (port, try seedText.map(CommandLineNumber.seed) ?? 1, try CommandLineNumber.speed(speedText), contacts, traffic)
    }

    func validate() throws {
        _ = try numbers()
        _ = try limits()
        if (tlsCert == nil) != (tlsKey == nil) { throw ValidationError("--tls-cert and --tls-key go together: give both, or neither") }
        if !WorldServer.isLoopback(host), tlsCert == nil, !insecure {
            throw ValidationError("--host \(host) is not loopback: secrets and messages would cross the network in clear; give --tls-cert FILE --tls-key FILE, or --insecure")
        }
        if open, invite != nil { throw ValidationError("--open lets anyone join; --invite gates joining: give one or the other") }
        if let invite, !(8...128).contains(invite.utf8.count) || !invite.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
            throw ValidationError("--invite: 8 to 128 printable ASCII characters, no spaces")
        }
    }

    func run() throws {
        var n = try numbers()
        var script: Scenario?
        if let scenario {
            let loaded = try ScenarioParser.load(path: scenario)
            (n.contacts, n.traffic) = (min(20, loaded.contacts), loaded.trafficPerHour)
            if seedText == nil { n.seed = loaded.seed }
            script = loaded
        }
        var store: ServerStore?
        if let data {
            do { store = try ServerStore(directory: data) } catch let refused as ServerStore.Refused {
                refuse("server: \(refused)")
            } catch {
                refuse("server: cannot open the data directory \(data): \(error)")
            }
        }
        let host: WorldHost
        do { host = try WorldHost(seed: n.seed, contacts: n.contacts, trafficPerHour: n.traffic, speed: n.speed, store: store) } catch let refused as ServerStore.Refused {
            refuse("server: \(refused)")
        } catch {
            refuse("server: cannot read \(store?.path ?? "the data directory"): \(error)")
        }
        let server = WorldServer(host: host)
        let limits = try limits()
        server.maxConnectionsPerPeer = limits.peer
        server.headTimeout = .milliseconds(limits.head.milliseconds)
        server.idleTimeout = .milliseconds(limits.idle.milliseconds)
        server.joinsPerMinute = limits.joins
        if open { server.invite = nil } else if let invite { server.invite = invite }
        if let script, let scenario {
            let skipped = host.play(script.steps.map { ($0.at, $0.directive, $0.line) })
            if !skipped.isEmpty {
                let lines = skipped.prefix(8).map(String.init).joined(separator: ", ") + (skipped.count > 8 ? ", …" : "")
                FileHandle.standardError.write(Data("synchat server: \(scenario): \(skipped.count) lines of the app not played (a client's keys): lines \(lines)\n".utf8))
            }
        }
        var tls: NIOSSLContext?
        if let tlsCert, let tlsKey {
            do { tls = try WorldServer.tls(certificate: tlsCert, key: tlsKey) } catch { refuse("server: \(error)") }
        }
        let port: Int
        do { port = try server.start(host: self.host, port: n.port, tls: tls) } catch {
            refuse("server: cannot listen on \(self.host):\(n.port) (\(error))")
        }
        // One line a script can read: where, and the admin token.
        let line = "synchat server: listening on \(tls == nil ? "http" : "https")://\(self.host):\(port) (admin token \(server.adminToken); "
            + "world seed \(n.seed), \(n.contacts) contacts a user, \(Int(n.traffic))/h each, speed x\(n.speed.formatted())"
            + (data.map { "; data \($0), \(host.users.count) users resumed" } ?? "")
            + (server.invite.map { "; invite \($0)" } ?? "; open to anyone") + ")\n"
        FileHandle.standardOutput.write(Data(line.utf8))  // unbuffered: a script reads it at once
        try server.wait()
    }
}

/// A profile or a terminal that cannot be used: one line on stderr, exit code 1. Paths come
/// from the environment (XDG_DATA_HOME, HOME) and may hold any byte: never written raw.
func refuse(_ message: String) -> Never {
    FileHandle.standardError.write(Data("synchat: \(UntrustedText.visible(message))\n".utf8))
    exit(1)
}

/// Bad flags and bad scenario files: one line on stderr, exit code 2 (README.md#flags; docs/reliability.md#bad-files).
func fail(_ message: String) -> Never {
    // A file's bytes may be quoted in the message: never write them to the terminal raw.
    FileHandle.standardError.write(Data("synchat: \(UntrustedText.visible(message))\n".utf8))
    exit(2)
}

do {
    var command = try Synchat.parseAsRoot()
    try command.run()
} catch let error as ScenarioError {
    fail(error.description)
} catch let error as ThemeError {
    fail("theme " + error.description)
} catch {
    if Synchat.exitCode(for: error) == .success {
        Synchat.exit(withError: error)  // --help, --version
    }
    let first = Synchat.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
    fail(first + " (see synchat --help)")
}
