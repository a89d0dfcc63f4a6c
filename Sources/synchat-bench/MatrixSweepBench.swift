import Foundation
import RunReports
import Simulation
import SyncCore

/// `synchat-bench matrix --seeds A-B`: the fault matrix's grid over many seeds, every policy,
/// on both cores — the goals as rates over a population of worlds (docs/matrix.md, docs/spec.md
/// §4). Goal (a) must hold on every seed; goals 1–3 on at least 99 %. Prints each rate and the
/// misses by class (goal, cell), with the seeds of each.
func matrixSweepArguments(_ rest: [String]) -> ClosedRange<UInt64> {
    guard !rest.isEmpty else { return 1...1000 }
    guard rest.count == 2, rest[0] == "--seeds" else { usage("matrix takes --seeds A-B, not \(rest.joined(separator: " "))") }
    let ends = rest[1].split(separator: "-", omittingEmptySubsequences: false).map { UInt64($0) }
    guard ends.count == 2, let a = ends[0], let b = ends[1], a >= 1, a <= b, b - a < 100_000 else {
        usage("matrix: --seeds takes A-B with 1 ≤ A ≤ B (at most 100 000 seeds), not \(rest[1])")
    }
    return a...b
}

func matrixSweepBench(seeds: ClosedRange<UInt64>) throws {
    let count = seeds.count
    say("== matrix: the grid (\(FaultMatrix.cells.count) cells × 3 policies) over matrix seeds \(seeds.lowerBound)–\(seeds.upperBound), both cores")
    let start = now()
    var aFailed: [(seed: UInt64, what: String)] = []
    var allMet = 0
    var goalMet: [String: Int] = [:], goalOrder: [String] = []
    var classes: [String: [UInt64]] = [:]
    var night: [Double] = []  // cell 79's adaptive p95: a night with 30 % of pushes lost
    var latest: [String: (seconds: Double, seed: UInt64, cell: Int)] = [:]  // each policy's latest delivery
    var beyondBackground = (seconds: 0.0, seed: UInt64(0), cell: 0)  // adaptive: latest less time in the background
    for seed in seeds {
        let rows = try FaultMatrix.run(matrixSeed: seed)
        let v = FaultMatrix.judge(rows)
        if !v.holdsA() {
            aFailed.append((seed, (v.lostOrDuplicated + v.falseUnreliable).filter { $0.policy == "adaptive" }.map(\.words).joined(separator: "; ")))
        }
        if v.goalsOneToThree { allMet += 1 }
        for goal in v.goals where goal.number <= 3 {
            let name = "\(goal.number). \(goal.label)"
            if goalMet[name] == nil { goalOrder.append(name) }
            goalMet[name, default: 0] += goal.misses.isEmpty ? 1 : 0
            for miss in goal.misses { classes["\(name.prefix(44))… cell \(miss.cell)", default: []].append(seed) }
        }
        if let p = rows.first(where: { $0.index == 79 && $0.policy == "adaptive" })?.summary.latencyP95 { night.append(p) }
        for row in rows {
            guard let m = row.summary.latencyMax else { continue }
            if m > latest[row.policy]?.seconds ?? -1 { latest[row.policy] = (m, seed, row.index) }
            if row.policy == "adaptive", m - row.summary.backgroundSeconds > beyondBackground.seconds {
                beyondBackground = (m - row.summary.backgroundSeconds, seed, row.index)
            }
        }
    }
    func rate(_ n: Int) -> String { String(format: "%d of %d (%.1f %%)", n, count, 100 * Double(n) / Double(count)) }
    line("(a) nothing lost, twice, or falsely unreliable", rate(count - aFailed.count), "goal: every seed")
    for failure in aFailed.prefix(10) { say("  seed \(failure.seed): \(failure.what)") }
    line("goals 1–3 together", rate(allMet), "goal ≥ 99 %")
    for name in goalOrder { say("  \(name): \(rate(goalMet[name] ?? 0))") }
    say("misses by class (goal, cell): seeds")
    for (key, list) in classes.sorted(by: { ($0.value.count, $1.key) > ($1.value.count, $0.key) }) {
        say("  \(key): \(list.count) — \(list.prefix(12).map(String.init).joined(separator: ", "))\(list.count > 12 ? ", …" : "")")
    }
    if !night.isEmpty {
        let within = night.filter { $0 <= 3600 }.count
        line("cell 79 (night, 30 % lost): p95 ≤ 3 600 s", rate(within), String(format: "median %.0f s", percentile(night, 0.5)))
    }
    for policy in ["naive", "seed", "adaptive"] {
        if let l = latest[policy] { line("latest delivery, \(policy)", String(format: "%.0f s (seed %d, cell %d)", l.seconds, l.seed, l.cell)) }
    }
    line("adaptive: latest less its time in background", String(format: "%.0f s (seed %d, cell %d)", beyondBackground.seconds, beyondBackground.seed, beyondBackground.cell),
         "bound \(PolicyGoals.latestBeyondBackground.milliseconds / 1000) s")
    line("wall time", String(format: "%.0f s (%.1f s a seed)", seconds(since: start), seconds(since: start) / Double(count)))
}
