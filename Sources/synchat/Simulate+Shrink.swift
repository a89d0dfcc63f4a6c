import Foundation
import Fuzzing
import RunReports
import Simulation
import SimulatedWorld
import SyncCore

// `simulate --shrink` and `simulate --report DIR`: wiring only; the shrinker is
// Fuzzing's `ScenarioShrinker`, the report's files are what `--events`, `--compare` and
// `--chart` print.
extension Simulate {
    /// The flags a replay needs besides the scenario and the policy: `--seed`, `--push-model`.
    var replayFlags: String {
        (seedText.map { " --seed \($0)" } ?? "") + (pushModel.map { " --push-model \($0)" } ?? "")
    }

    /// `--shrink`: the smallest scenario whose run still shows `--until` or `--until-invariant`
    /// (`ScenarioShrinker`), on stdout; its progress on stderr.
    func runShrink() throws {
        let path = scenario!
        guard let data = FileManager.default.contents(atPath: path) else { _ = try ScenarioParser.load(path: path); return }
        _ = try ScenarioParser.parse(data: data, file: path)  // a bad file is FILE:LINE, as for any run
        let shrinker = try ScenarioShrinker(text: String(decoding: data, as: UTF8.self), file: path, keepsComments: false)
        let policy = SyncPolicy.named(self.policy ?? "adaptive")!
        let seed = try seedText.map(CommandLineNumber.seed)
        let model = pushModel.map { PushModel(rawValue: $0)! }
        let property: ScenarioShrinker.Property
        let goal: String
        if let until {
            property = ScenarioShrinker.eventLine(containing: until, policy: policy, seed: seed, pushModel: model)
            goal = "a line of --events (policy \(policy.name)) contains \"\(until)\""
        } else {
            let kind = Self.shrinkInvariants.first { $0.0 == untilInvariant! }!.1
            property = ScenarioShrinker.violation(kind, policy: policy, seed: seed, pushModel: model)
            goal = "policy \(policy.name) breaks the \(untilInvariant!) invariant"
        }
        let width = ProcessInfo.processInfo.activeProcessorCount
        // The first line once the file is known to hold: a file that does not is one line of error.
        var lines = ["\(path): \(shrinker.timedLineCount) timed lines, until \(goal); \(width) runs at once"]
        func say(_ line: String) {
            lines.append(line)
            FileHandle.standardError.write(Data(lines.map { "shrink: \(UntrustedText.visible($0))\n" }.joined().utf8))
            lines = []
        }
        let started = Date()
        guard let result = shrinker.shrink(width: width, progress: say, holds: property) else {
            if let until { fail("--until \(until): no line of the --events output of \(path) (policy \(policy.name)) contains it") }
            fail("--until-invariant \(untilInvariant!): \(path) keeps it under policy \(policy.name): nothing to shrink")
        }
        let took = Date().timeIntervalSince(started)
        say("done: \(result.timedBefore) → \(result.timedAfter) timed lines, \(result.runs) runs, \(String(format: "%.1f", took)) s")
        let header = [
            "# shrunk by synchat simulate --shrink from \((path as NSString).lastPathComponent): \(result.timedBefore) → \(result.timedAfter) timed lines in \(result.runs) runs",
            "# until \(goal)",
            "# replay: synchat simulate --scenario FILE --policy \(policy.name)\(replayFlags) --events",
        ].map { UntrustedText.visible($0) + "\n" }.joined()
        FileHandle.standardOutput.write(Data((header + result.text).utf8))
    }

    /// `--report DIR`: what a tester hands on, in a new or empty folder.
    func runReport(into dir: String) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: dir, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { fail("--report \(dir): exists and is not a folder") }
            guard (try? FileManager.default.contentsOfDirectory(atPath: dir))?.isEmpty == true else {
                fail("--report \(dir): exists and is not empty (give a new or an empty folder)")
            }
        }
        guard let data = FileManager.default.contents(atPath: scenario!) else { _ = try ScenarioParser.load(path: scenario!); return }
        _ = try ScenarioParser.parse(data: data, file: scenario!)
        let policy = SyncPolicy.named(self.policy ?? "adaptive")!
        // One run per policy gives all three files: a run's log is the same alone or side by side.
        let summaries = try simulated(SyncPolicy.all, keepsLog: true)
        let events = summaries.first { $0.0.policy.name == policy.name }!.0.logLines
        do { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) } catch {
            fail("--report \(dir): cannot create the folder")
        }
        // The copy keeps the file's name when a shell takes it as it is: the chart's title
        // names it, so the README's commands redraw the same chart.
        let given = (scenario! as NSString).lastPathComponent
        let safe = !given.isEmpty && !given.hasPrefix("-") && given.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }
        // Not the name of a file the report writes (or its README's commands do): the copy
        // would be overwritten by it.
        let reserved: Set = ["events.log", "compare.txt", "chart.svg", "chart-again.svg", "readme.md"]
        let name = safe && !reserved.contains(given.lowercased()) ? given : "scenario.scenario"
        let files: [(String, Data)] = [
            (name, data),
            ("events.log", Data((events.joined(separator: "\n") + "\n").utf8)),
            ("compare.txt", Data((RunSummary.comparison(summaries.map(\.1)).joined(separator: "\n") + "\n").utf8)),
            ("chart.svg", Data(chartSVG(summaries, name: name).utf8)),
            ("README.md", Data(TesterReport.readme(scenario: name, given: given, policy: policy.name, flags: replayFlags, chartLane: chartLane,
                                                   lines: events.count, summary: summaries.first { $0.0.policy.name == policy.name }!.1).utf8)),
        ]
        // Still empty after the runs (nothing came meanwhile to be overwritten).
        guard (try? FileManager.default.contentsOfDirectory(atPath: dir))?.isEmpty == true else {
            fail("--report \(dir): files appeared in it while the runs went; nothing written (give a new or an empty folder)")
        }
        for (file, contents) in files {
            let path = (dir as NSString).appendingPathComponent(file)
            guard FileManager.default.createFile(atPath: path, contents: contents) else { fail("--report: cannot write \(path)") }
        }
        // The names are made safe, not the line's own end.
        FileHandle.standardOutput.write(Data((UntrustedText.visible("synchat: report of \(given) written to \(dir): \(files.map(\.0).joined(separator: ", "))") + "\n").utf8))
    }
}
