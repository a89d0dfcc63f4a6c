import Foundation
import RunReports
import Simulation
import SyncCore
import SyncEngine

// `synchat-bench scaling`: is `simulate` linear in what it simulates? CPU time of one
// policy's run for 24 h and for 7 days, and for 400 and 4 000 messages an hour, against the
// ratio of messages carried; 100 000 messages an hour for an hour; a 1 000 000-line scenario
// (run by the release `synchat`, its peak memory read from the kernel).

/// CPU seconds this process has used (user + system, every thread).
func cpuSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// A day of the speed bench's shape (background at night, a push outage), repeated. Every
/// day is the same work: it opens in the foreground and closes in the background, so the
/// next day's foreground (or the scenario's final one) catches up on the day's last hours.
/// Without the close, the first day of a run is lighter than the others: its last stretch
/// in the foreground is never fetched again, where each later day's is fetched by the next
/// morning's catch-up (a 24 h run's indexer served two thirds of its messages, a week's
/// every one: 7 d / 24 h CPU read 1.11–1.13 × the message ratio, 0.95 × what was carried).
func dailyScenario(days: Int, hours: Int = 24, trafficPerHour: Int, contacts: Int = 20) throws -> Scenario {
    var lines = ["seed 3", "duration \(days * hours)h", "contacts \(contacts)", "traffic \(trafficPerHour)/h"]
    for d in 0..<days where hours == 24 {
        let h = d * 24
        lines += ["at \(h)h foreground", "at \(h + 1)h background", "at \(h + 2)h foreground", "at \(h + 5)h push drop 100%",
                  "at \(h + 6)h push drop 0%", "at \(h + 8)h background", "at \(h + 16)h foreground", "at \(h + 23)h background"]
    }
    return try ScenarioParser.parse(lines.joined(separator: "\n"), file: "bench-scaling")
}

/// Messages carried and CPU seconds: the least of `tries` runs (one run's CPU time varies by
/// several per cent with what else the machine does; the least is the run's own cost; with
/// seven, a ratio of two such leasts still moved by ±4 % from one bench run to the next).
/// `carried`: the messages sent plus those the indexer served in replies (ground truth):
/// what the run moved over the simulated network.
func measuredRun(_ scenario: Scenario, _ policy: SyncPolicy, tries: Int = 11) -> (messages: Int, carried: Int, cpu: Double) {
    var best = Double.infinity, messages = 0, carried = 0
    for _ in 0..<tries {
        let c0 = cpuSeconds()
        let run = ScenarioRun(scenario: scenario, policy: policy, keepsLog: false)  // as simulate does
        run.run()
        let summary = RunSummary(run)
        best = min(best, cpuSeconds() - c0)
        messages = summary.messagesSent
        carried = summary.messagesSent + run.world.indexer.messagesServed
    }
    return (messages, carried, best)
}

func scalingBench(lines: Int) throws {
    say("== scaling: simulate's CPU time (least of 11 runs) against the messages it carries (goal: ratios within 10 % of the message ratio)")
    say("policy      case               messages  carried   CPU s    ×CPU ×messages CPU/messages ×carried CPU/carried")
    let day = try dailyScenario(days: 1, trafficPerHour: 420)
    let week = try dailyScenario(days: 7, trafficPerHour: 420)
    let light = try dailyScenario(days: 1, trafficPerHour: 400)
    let heavy = try dailyScenario(days: 1, trafficPerHour: 4000)
    typealias Measured = (messages: Int, carried: Int, cpu: Double)
    func line(_ policy: String, _ name: String, _ r: Measured, base: Measured?) {
        var text = policy.padding(toLength: 12, withPad: " ", startingAt: 0) + name.padding(toLength: 18, withPad: " ", startingAt: 0)
            + "\(r.messages)".leftPad(9) + "\(r.carried)".leftPad(9) + String(format: "%8.2f", r.cpu)
        if let base {
            let cpu = r.cpu / base.cpu, messages = Double(r.messages) / Double(base.messages)
            let carried = Double(r.carried) / Double(base.carried)
            text += String(format: "%8.2f%10.2f%13.2f%9.2f%12.2f", cpu, messages, cpu / messages, carried, cpu / carried)
        }
        say(text)
    }
    for policy in SyncPolicy.all {
        let d = measuredRun(day, policy), w = measuredRun(week, policy)
        line(policy.name, "24 h, 420/h", d, base: nil)
        line(policy.name, "7 d, 420/h", w, base: d)
        let l = measuredRun(light, policy), h = measuredRun(heavy, policy)
        line(policy.name, "24 h, 400/h", l, base: nil)
        line(policy.name, "24 h, 4 000/h", h, base: l)
    }
    for policy in SyncPolicy.all {
        let scenario = try dailyScenario(days: 1, hours: 1, trafficPerHour: 100_000)
        let r = measuredRun(scenario, policy, tries: 1)
        row("1 h at 100 000 messages/h, \(policy.name)", String(format: "%.2f s CPU", r.cpu), "goal ≤ 10 s (\(r.messages) messages)")
    }
    // A tenth of the lines in memory and on disk, then all of them as `simulate` chooses
    // (auto: on disk past HistoryChoice.diskThreshold messages): flat on disk.
    try bigScenario(lines: lines / 10, history: "memory")
    try bigScenario(lines: lines / 10, history: "disk")
    try bigScenario(lines: lines, history: "auto")
}

/// A scenario of `lines` `receive` lines, run by the release binary with `--store
/// history`: wall time and peak RSS.
func bigScenario(lines: Int, history: String) throws {
    guard let binary = releaseBinary() else { return }
    let path = NSTemporaryDirectory() + "synchat-bench-\(lines)-lines.scenario"
    if !FileManager.default.fileExists(atPath: path) {
        var text = "# synchat-bench scaling: \(lines) receive lines\nseed 5\nduration \(lines / 3600 + 2)h\ncontacts 5\ntraffic 0/h\n"
        text.reserveCapacity(lines * 40)
        let names = ["alice", "bob", "carol", "dave", "erin"]
        for i in 0..<lines {
            text += "at \(i)s receive \(names[i % 5]) \"line \(i) of the big one\"\n"
        }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }
    var before = rusage()
    getrusage(RUSAGE_CHILDREN.rawValue, &before)
    let t0 = now()
    // The child's own high-water mark (VmHWM), read from /proc while it runs: a forked
    // child's ru_maxrss starts from this bench's own resident memory.
    let out = sh("\(binary) simulate --scenario \(path) --policy adaptive --store \(history) --format json > /dev/null & pid=$!; peak=0; "
        + "while kill -0 $pid 2>/dev/null; do h=$(awk '/^VmHWM/ {print $2}' /proc/$pid/status 2>/dev/null); "
        + "[ -n \"$h\" ] && peak=$h; sleep 0.05; done; wait $pid; echo $? $peak")
    let wall = Double(now() - t0) / 1e9
    var after = rusage()
    getrusage(RUSAGE_CHILDREN.rawValue, &after)
    let cpu = Double(after.ru_utime.tv_sec - before.ru_utime.tv_sec + after.ru_stime.tv_sec - before.ru_stime.tv_sec)
        + Double(after.ru_utime.tv_usec - before.ru_utime.tv_usec + after.ru_stime.tv_usec - before.ru_stime.tv_usec) / 1e6
    let parts = out.split(separator: " ")
    let status = parts.first.map(String.init) ?? "?"
    let peakKB = parts.count > 1 ? Double(parts[1]) ?? 0 : 0
    let home = history == "auto" ? (lines > HistoryChoice.diskThreshold ? "auto: disk" : "auto: memory") : history
    row("\(lines)-line scenario, adaptive, \(home): wall / CPU", String(format: "%.1f s / %.1f s", wall, cpu), status == "0" ? "" : "exit \(status)")
    row("  its peak resident memory", String(format: "%.0f MB", peakKB / 1024),
        String(format: "%.2f KB a line; goal: bounded (flat in the lines)", peakKB / Double(lines)))
}
