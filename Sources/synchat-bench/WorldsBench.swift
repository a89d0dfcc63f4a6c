import Foundation
import RunReports
import Simulation
import SyncCore
import SyncEngine

// `synchat-bench worlds`: the engine across the space of worlds. Bytes as well as
// requests on a week and a day of an hourly commute; the foreground blind spot; the fault
// matrix's wall time and its goals. Figures only, never a verdict that fails a build.

/// A day (or days) of an hourly commute: 400 messages an hour from 50 contacts, the app in the
/// background from :20 to :50 of every hour.
func hourlyCommute(days: Int) throws -> Scenario {
    var lines = ["seed 3", "duration \(days * 24)h", "contacts 50", "traffic 400/h", "at 0m foreground"]
    for h in 0..<(days * 24) { lines += ["at \(h * 60 + 20)m background", "at \(h * 60 + 50)m foreground"] }
    return try ScenarioParser.parse(lines.joined(separator: "\n"), file: "bench-commute")
}

func worldsBench() throws {
    say("== worlds: bytes as well as requests (an hourly commute, 400/h, 50 contacts, background :20 to :50)")
    say("policy    run    messages  requests      bytes   CPU s   ×messages  ×requests  ×bytes  ×CPU  CPU÷messages")
    let day = try hourlyCommute(days: 1), week = try hourlyCommute(days: 7)
    var bytes: [String: (day: Int, week: Int)] = [:]
    for policy in SyncPolicy.all {
        var figures: [(messages: Int, requests: Int, bytes: Int, cpu: Double)] = []
        for scenario in [day, week] {
            var best = Double.infinity
            var summary: RunSummary?
            for _ in 0..<3 {
                let c0 = cpuSeconds()
                let run = ScenarioRun(scenario: scenario, policy: policy, keepsLog: false)
                run.run()
                summary = RunSummary(run)
                best = min(best, cpuSeconds() - c0)
            }
            figures.append((summary!.messagesSent, summary!.backendRequests, summary!.backendBytes, best))
        }
        let (d, w) = (figures[0], figures[1])
        bytes[policy.name] = (d.bytes, w.bytes)
        for (name, f) in [("24 h", d), ("7 d", w)] {
            say(policy.name.padding(toLength: 9, withPad: " ", startingAt: 0) + " " + name.padding(toLength: 5, withPad: " ", startingAt: 0)
                + "\(f.messages)".leftPad(10) + "\(f.requests)".leftPad(10) + "\(f.bytes)".leftPad(11) + String(format: "%8.2f", f.cpu))
        }
        let m = Double(w.messages) / Double(d.messages)
        say(String(repeating: " ", count: 52) + String(format: "%9.2f  %9.2f  %6.2f  %4.2f  %6.2f", m, Double(w.requests) / Double(d.requests),
                                                           Double(w.bytes) / Double(d.bytes), w.cpu / d.cpu, w.cpu / d.cpu / m)
            + "  (goal: CPU÷messages within 15 %)")
    }
    for (name, pick) in [("24 h", \(day: Int, week: Int).day), ("7 d", \(day: Int, week: Int).week)] {
        let a = bytes["adaptive"]![keyPath: pick], s = bytes["seed"]![keyPath: pick]
        row("adaptive bytes ÷ seed's, \(name)", String(format: "%.2f", Double(a) / Double(s)), "goal ≤ 1")
    }

    say("== worlds: the shipped scenarios, bytes and requests")
    let directory = URL(fileURLWithPath: "Scenarios")
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".scenario") }.sorted()
    say("scenario           policy     requests     bytes   p95 s  push lag s")
    for name in names {
        let scenario = try ScenarioParser.load(path: directory.appendingPathComponent(name).path)
        for run in try ScenarioRun.side(by: SyncPolicy.all, of: scenario, keepsLog: false) {
            let s = RunSummary(run)
            let lag = s.beliefLag.records[.push].map { $0.worst.map { String(format: "%.0f", Double($0.milliseconds) / 1000) } ?? "never" } ?? "—"
            say(name.replacingOccurrences(of: ".scenario", with: "").padding(toLength: 18, withPad: " ", startingAt: 0) + " "
                + s.policy.padding(toLength: 9, withPad: " ", startingAt: 0) + "\(s.backendRequests)".leftPad(10) + "\(s.backendBytes)".leftPad(10)
                + String(format: "%8.1f", s.latencyP95 ?? 0) + lag.leftPad(12))
        }
    }

    say("== worlds: the fault matrix (\(FaultMatrix.cells.count) cells × 3 policies, 3 h each, \(ProcessInfo.processInfo.activeProcessorCount) threads)")
    let t0 = now()
    let rows = try FaultMatrix.run()
    let seconds = Double(now() - t0) / 1e9
    row("matrix, wall", String(format: "%.1f s", seconds), "goal ≤ 300 s")
    for line in FaultMatrix.verdicts(rows) where !line.isEmpty { say(line) }
}
