import ArgumentParser
import Charts
import Foundation
import Fuzzing
import SimulatedWorld
import RunReports
import Simulation
import SyncCore
import SyncEngine
import SimulatedWorldOnDisk

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

    @Option(name: .customLong("matrix-seed"), parsing: .unconditional, help: ArgumentHelp("With --matrix or --matrix-cell: the same grid drawn on other seeds (docs/matrix.md).", valueName: "N"))
    var matrixSeedText: String?

    /// `--matrix-seed`, read (validate said it is a whole number).
    var matrixSeed: UInt64? { matrixSeedText.flatMap { UInt64($0) } }

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

    @OptionGroup var castOptions: CastOptions

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
        if castOptions.cast != nil, compare || events || chart != nil || report != nil || shrink || matrix || matrixCell != nil || format != .table {
            throw ValidationError("--cast draws one run's screen: give it --scenario and --policy (not --compare, --events, --chart, --report, --shrink, --format or --matrix)")
        }
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
            if let matrixSeedText, UInt64(matrixSeedText) == nil {
                throw ValidationError("--matrix-seed \(matrixSeedText): expected a whole number from 0 to \(UInt64.max)")
            }
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
            return FileHandle.standardOutput.write(Data(FaultMatrix.cells[matrixCell].scenarioText(duration: d, matrixSeed: matrixSeed).utf8))
        }
        if matrix { return try runMatrix() }
        if shrink { return try runShrink() }
        if let report { return try runReport(into: report) }
        if castOptions.cast != nil { return try runCast(castOptions) }
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
