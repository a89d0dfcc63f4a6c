import Directives
import Foundation
import Simulation
import SyncCore
import SyncEngine

/// One world of the fault matrix (`synchat simulate --matrix`, docs/matrix.md): where the app is, and
/// what is wrong with each channel. Each cell is a scenario of its own (`scenarioText`), so a
/// hot cell can be saved and replayed like any other (`--matrix-cell N` prints it).
public struct MatrixCell: Hashable, Sendable {
    public enum App: String, CaseIterable, Sendable {
        case foreground, background
        /// Foreground and background in turn, 30 min each.
        case commuting
        /// Two hours in the foreground, eight in the background, two back: 12 h, whatever
        /// the matrix's duration; its faults start an hour into the night.
        case night
    }

    public enum Realtime: String, CaseIterable, Sendable {
        case up, down
        /// The socket goes stale (silently) every 10 minutes.
        case stale
        case flaky = "flaky 30%"
    }

    public enum Push: String, CaseIterable, Sendable {
        case ok
        case drop100 = "drop 100%"
        case drop30 = "drop 30%"
        case delay90 = "delay 90s"
        case tokenExpired = "token expired"
    }

    public enum Indexer: String, CaseIterable, Sendable {
        case up
        /// Down for 10 minutes of every hour.
        case downSpells = "down 10m/h"
        case slow = "slow 2s"
    }

    public enum Network: String, CaseIterable, Sendable {
        case on
        /// The device offline for 10 minutes of every hour.
        case offSpells = "off 10m/h"
    }

    public var app: App
    public var realtime: Realtime
    public var push: Push
    public var indexer: Indexer
    public var mode: NotificationMode
    public var network: Network

    public init(app: App, realtime: Realtime = .up, push: Push = .ok, indexer: Indexer = .up, mode: NotificationMode = .remotePush,
                network: Network = .on) {
        self.app = app
        self.realtime = realtime
        self.push = push
        self.indexer = indexer
        self.mode = mode
        self.network = network
    }

    /// The cell's own seed, from its words: the same cell keeps its seed when the grid changes.
    public var seed: UInt64 { seed(matrixSeed: nil) }

    /// The cell's seed on the grid `matrixSeed` (`--matrix-seed N`): the same worlds drawn
    /// again, other traffic and other timings; nil is the grid the table shows by default.
    public func seed(matrixSeed: UInt64?) -> UInt64 {
        StableHash.fnv1a(description + (matrixSeed.map { ", matrix seed \($0)" } ?? "")) % 1_000_000
    }

    /// How long the cell runs: the matrix's duration, or a night's 12 h.
    public func duration(_ matrixDuration: Interval) -> Interval { app == .night ? .hours(12) : matrixDuration }

    public var description: String {
        "app \(app.rawValue), realtime \(realtime.rawValue), push \(push.rawValue), indexer \(indexer.rawValue), mode \(mode.rawValue), network \(network.rawValue)"
    }

    /// Faults hold from 10 min in until 30 min before the end (then the world heals, so the
    /// final foreground and settle make "lost" well defined); the app's pattern runs throughout.
    /// Its steps are numbered by the lines `scenarioText` writes them on.
    public func scenario(duration matrixDuration: Interval, matrixSeed: UInt64? = nil) -> Scenario {
        let minutes = Int(duration(matrixDuration).milliseconds / 60_000)
        let from = app == .night ? 180 : 10, until = max(from + 10, minutes - 30)
        var scenario = Scenario(source: "matrix")
        scenario.seed = seed(matrixSeed: matrixSeed)
        scenario.duration = .minutes(Int64(minutes))
        scenario.contacts = 6
        scenario.trafficPerHour = 30
        scenario.mode = mode
        var steps: [(Int, Int, Directive)] = []  // (minute, order, directive): faults after the app's moves of the same minute
        func at(_ m: Int, _ d: Directive, order: Int = 1) { steps.append((m, order, d)) }
        func at(_ m: Int, _ change: WorldFaults.Change) { at(m, .fault(change)) }
        switch app {
        case .foreground: break
        case .background: at(2, .background, order: 0)
        case .commuting:
            for m in stride(from: 30, to: minutes, by: 30) { at(m, (m / 30) % 2 == 1 ? .background : .foreground, order: 0) }
        case .night: at(120, .background, order: 0); at(600, .foreground, order: 0)
        }
        switch realtime {
        case .up: break
        case .down: at(from, .realtimeDown); at(until, .realtimeUp)
        case .stale: for m in stride(from: from, to: until, by: 10) { at(m, .realtimeStale) }
        case .flaky: at(from, .realtimeFlaky(percent: 30)); at(until, .realtimeUp)
        }
        switch push {
        case .ok: break
        case .drop100: at(from, .pushDrop(percent: 100)); at(until, .pushDrop(percent: 0))
        case .drop30: at(from, .pushDrop(percent: 30)); at(until, .pushDrop(percent: 0))
        case .delay90: at(from, .pushDelay(.seconds(90))); at(until, .pushUp)
        case .tokenExpired: at(from, .tokenExpire)
        }
        switch indexer {
        case .up: break
        case .downSpells:
            for h in stride(from: 0, to: until, by: 60) where h + 20 >= from && h + 30 <= until {
                at(h + 20, .indexerDown); at(h + 30, .indexerUp)
            }
        case .slow: at(from, .indexerLatency(.seconds(2))); at(until, .indexerLatency(.zero))
        }
        switch network {
        case .on: break
        case .offSpells:
            for h in stride(from: 0, to: until, by: 60) where h + 40 >= from && h + 50 <= until {
                at(h + 40, .networkOff); at(h + 50, .networkOn)
            }
        }
        steps.sort { ($0.0, $0.1) < ($1.0, $1.1) }
        scenario.steps = [Scenario.Step(at: .zero, directive: .foreground, line: 0)]
            + steps.map { Scenario.Step(at: .zero + .minutes(Int64($0.0)), directive: $0.2, line: 0) }
        return scenario.numberingLines(comments: comments(matrixSeed: matrixSeed))
    }

    /// The cell's scenario as a file (`simulate --matrix-cell N`): the one comment names the
    /// cell, times are in minutes.
    public func scenarioText(duration matrixDuration: Interval, matrixSeed: UInt64? = nil) -> String {
        scenario(duration: matrixDuration, matrixSeed: matrixSeed).text(comments: comments(matrixSeed: matrixSeed), time: { "\($0.milliseconds / 60_000)m" })
    }

    private func comments(matrixSeed: UInt64?) -> [String] {
        ["fault matrix cell: \(description)" + (matrixSeed.map { " (matrix seed \($0))" } ?? "")]
    }

    /// The cell as the JSON row's `cell` object.
    public var json: String {
        "{\"app\": \"\(app.rawValue)\", \"realtime\": \"\(realtime.rawValue)\", \"push\": \"\(push.rawValue)\", "
            + "\"indexer\": \"\(indexer.rawValue)\", \"mode\": \"\(mode.rawValue)\", \"network\": \"\(network.rawValue)\"}"
    }
}

/// `synchat simulate --matrix`: every policy over a grid of worlds (docs/matrix.md).
public enum FaultMatrix {
    /// The grid, pruned where an axis says nothing new:
    /// - remote-push, indexer up, network on: app × realtime × push, except that a background
    ///   app has no realtime to break (realtime only `up` there): 20 + 20 + 5 cells;
    /// - the indexer's faults (down spells, slow) where catch-ups matter: every app with push
    ///   ok and dropping all, realtime up; and the foreground with realtime down: 16 cells;
    /// - the other modes (background-fetch, off), where push is off whatever it does: every
    ///   app with realtime up, and foreground and commuting with realtime down: 10 cells;
    /// - the device offline in spells, every app, push ok and dropping all: 6 cells;
    /// - a night (12 h, its faults from the third hour): push ok, dropping all and dropping 30 %
    ///   in remote-push, push ok in the other modes: 5 cells.
    public static let cells: [MatrixCell] = {
        var cells: [MatrixCell] = []
        let day: [MatrixCell.App] = [.foreground, .background, .commuting]
        for app in day {
            for realtime in MatrixCell.Realtime.allCases where app != .background || realtime == .up {
                for push in MatrixCell.Push.allCases { cells.append(MatrixCell(app: app, realtime: realtime, push: push)) }
            }
        }
        for indexer in [MatrixCell.Indexer.downSpells, .slow] {
            for app in day {
                for push in [MatrixCell.Push.ok, .drop100] { cells.append(MatrixCell(app: app, push: push, indexer: indexer)) }
            }
            for push in [MatrixCell.Push.ok, .drop100] { cells.append(MatrixCell(app: .foreground, realtime: .down, push: push, indexer: indexer)) }
        }
        for mode in [NotificationMode.backgroundFetch, .off] {
            for app in day {
                for realtime in [MatrixCell.Realtime.up, .down] where app != .background || realtime == .up {
                    cells.append(MatrixCell(app: app, realtime: realtime, mode: mode))
                }
            }
        }
        for app in day {
            for push in [MatrixCell.Push.ok, .drop100] { cells.append(MatrixCell(app: app, push: push, network: .offSpells)) }
        }
        for push in [MatrixCell.Push.ok, .drop100, .drop30] { cells.append(MatrixCell(app: .night, push: push)) }
        for mode in [NotificationMode.backgroundFetch, .off] { cells.append(MatrixCell(app: .night, mode: mode)) }
        return cells
    }()

    public struct Row: Sendable {
        public var cell: MatrixCell
        public var index: Int
        public var summary: RunSummary
        public var policy: String { summary.policy }

        /// One JSON object: the cell, then the measures named as `simulate --format json` names them.
        public var json: String { "{\"cell\": \(cell.json), " + summary.json.dropFirst() }
    }

    /// Runs `policies` over `cells` for `duration` each, on `threads` threads; `progress` is
    /// told of each run finished (from any thread).
    /// `matrixSeed`: the grid drawn on other seeds (`--matrix-seed N`).
    public static func run(cells: [MatrixCell] = cells, policies: [SyncPolicy] = SyncPolicy.all, duration: Interval = .hours(3),
                           matrixSeed: UInt64? = nil, threads: Int = ProcessInfo.processInfo.activeProcessorCount,
                           progress: (@Sendable (Int, Int) -> Void)? = nil) throws -> [Row] {
        let scenarios = cells.map { $0.scenario(duration: duration, matrixSeed: matrixSeed) }
        let jobs = cells.indices.flatMap { c in policies.map { (c, $0) } }
        // The longest runs are taken first, so that no thread is left with a night at the end;
        // each row keeps its place.
        let order = jobs.indices.filter { cells[jobs[$0].0].app == .night } + jobs.indices.filter { cells[jobs[$0].0].app != .night }
        let slots = Slots<Row>(jobs.count)
        let next = Counter()
        let done = DispatchGroup()
        for _ in 0..<max(1, min(threads, jobs.count)) {
            done.enter()
            let thread = Thread {
                defer { done.leave() }
                while let taken = next.take(below: jobs.count) {
                    let j = order[taken]
                    let (c, policy) = jobs[j]
                    let run = ScenarioRun(scenario: scenarios[c], policy: policy, keepsLog: false)
                    run.run()
                    slots.put(Row(cell: cells[c], index: c, summary: RunSummary(run)), at: j)
                    progress?(next.finished(), jobs.count)
                }
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
        done.wait()
        return try slots.all()
    }

    /// The human table, one line a cell, the policies side by side (fits 120 columns), then
    /// the goals' verdicts. Naive shows its p95 and requests; seed adds its bytes; adaptive adds
    /// its wake-ups and its p95 over the floor's (`×floor`), and its push lag ends the line.
    public static func table(_ rows: [Row]) -> [String] {
        let policies = orderedPolicies(rows)
        func secs(_ v: Double?) -> String {
            guard let v else { return "—" }
            return v >= 10_000 ? "\(Int(v / 3600))h" : v >= 100 ? "\(Int(v.rounded()))s" : fmt(v) + "s"
        }
        func kb(_ b: Int) -> String {
            b >= 10_000_000 ? "\(b / 1_000_000)M" : b >= 1_000_000 ? fmt(Double(b) / 1_000_000) + "M" : b >= 10_000 ? "\(b / 1000)k" : fmt(Double(b) / 1000) + "k"
        }
        func times(_ a: Double?, _ floor: Double?) -> String {
            guard let a, let floor, floor > 0 else { return "—" }
            let r = a / floor
            return r >= 999.5 ? ">999×" : r >= 10 ? "\(Int(r.rounded()))×" : fmt(r) + "×"
        }
        func pad(_ s: String, _ n: Int, right: Bool = false) -> String {
            s.count >= n ? s : right ? String(repeating: " ", count: n - s.count) + s : s + String(repeating: " ", count: n - s.count)
        }
        // Each policy's columns and their widths (a p95's width holds the lost mark `!`).
        func columns(_ p: String) -> [(String, Int)] {
            switch p {
            case "naive": return [("p95", 6), ("req", 6)]
            case "adaptive": return [("p95", 6), ("req", 6), ("bytes", 6), ("wake", 5), ("×floor", 7)]
            default: return [("p95", 6), ("req", 6), ("bytes", 6)]
            }
        }
        let cellWidth = 4 + 6 + 6 + 10 + 11 + 6 + 6
        func width(_ p: String) -> Int { columns(p).map(\.1).reduce(0, +) }
        var lines = [pad("", cellWidth) + policies.map { "│ " + pad($0, width($0) - 1) }.joined() + "│ push",
                     pad("  #", 4) + pad("app", 6) + pad("rt", 6) + pad("push", 10) + pad("indexer", 11) + pad("mode", 6) + pad("net", 6)
                        + policies.map { p in "│" + columns(p).map { pad($0.0, $0.1, right: true) }.joined() }.joined()
                        + "│ lag"]
        let byCell = Dictionary(grouping: rows, by: \.index)
        for index in byCell.keys.sorted() {
            let cellRows = byCell[index]!
            let c = cellRows[0].cell
            let app = ["foreground": "fg", "background": "bg", "commuting": "comm", "night": "night"][c.app.rawValue]!
            let mode = ["remote-push": "push", "background-fetch": "fetch", "off": "off"][c.mode.rawValue]!
            let push = c.push == .tokenExpired ? "token exp" : c.push.rawValue
            let realtime = c.realtime == .flaky ? "flaky" : c.realtime.rawValue
            var line = pad(String(index), 3, right: true) + " " + pad(app, 6) + pad(realtime, 6) + pad(push, 10)
                + pad(c.indexer.rawValue, 11) + pad(mode, 6) + pad(c.network == .on ? "on" : "spells", 6)
            for p in policies {
                guard let s = cellRows.first(where: { $0.policy == p })?.summary else { line += "│" + pad("", width(p)); continue }
                let flag = s.messagesLost > 0 || s.duplicates > 0 ? "!" : " "
                var cells = [pad(secs(s.latencyP95), 5, right: true), pad(String(s.backendRequests), 6, right: true)]
                if p != "naive" { cells.append(pad(kb(s.backendBytes), 6, right: true)) }
                if p == "adaptive" {
                    cells.append(pad(String(s.wakeUps), 5, right: true))
                    cells.append(pad(times(s.latencyP95, s.floorLatencyP95), 7, right: true))
                }
                line += "│" + flag + cells.joined()
            }
            if let lag = cellRows.first(where: { $0.policy == "adaptive" })?.summary.beliefLag.records[.push] {
                line += "│ " + (lag.worst.map { secs(Double($0.milliseconds) / 1000) } ?? "never")
            } else {
                line += "│"
            }
            lines.append(line)
        }
        return lines + verdicts(rows).flatMap { wrap($0, width: 120) }
    }

    /// A verdict line cut to fit `width`: before its list of cells (` (not: `) and at its
    /// semicolons, the rest indented.
    static func wrap(_ line: String, width: Int) -> [String] {
        guard line.count > width else { return [line] }
        var parts: [String] = []
        var rest = Substring(line)
        if let open = line.range(of: " (not: ") {
            parts.append(String(line[..<open.lowerBound]))
            rest = line[open.lowerBound...].dropFirst()
        }
        parts += rest.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
        var out: [String] = [], current = ""
        for part in parts {
            let piece = current.isEmpty ? part : current + (part.hasPrefix("(not:") ? " " : ";") + part
            if piece.count + 1 > width, !current.isEmpty {  // room for the ";" that ends a cut line
                out.append(current + (part.hasPrefix("(not:") ? "" : ";"))
                current = "   " + part.trimmingPrefix(" ")
            } else {
                current = piece
            }
        }
        return out + [current]
    }

    public static func orderedPolicies(_ rows: [Row]) -> [String] {
        let names = Set(rows.map(\.policy))
        return SyncPolicy.all.map(\.name).filter(names.contains) + names.subtracting(SyncPolicy.all.map(\.name)).sorted()
    }

    /// The JSON array: a row per policy per cell.
    public static func json(_ rows: [Row]) -> String {
        "[" + rows.map(\.json).joined(separator: ",\n ") + "]"
    }
}

/// A counter shared by the matrix's threads: the next job to take, and how many are done.
private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var nextJob = 0
    private var done = 0

    func take(below limit: Int) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        guard nextJob < limit else { return nil }
        nextJob += 1
        return nextJob - 1
    }

    func finished() -> Int {
        lock.lock()
        defer { lock.unlock() }
        done += 1
        return done
    }
}
