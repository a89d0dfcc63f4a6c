import Foundation
import Fuzzing
import Simulation
import SyncCore

// `synchat-bench fuzz [--count N] [--from SEED]`: the hostile-input figures of
// docs/reliability.md. A failing case is shrunk as `simulate --shrink --until-invariant`
// shrinks a file (`ScenarioShrinker`), printed, and written to
// TestData/fuzz-regressions/SEED.scenario with a comment naming the invariant it broke:
// RegressionTests fails on it until the engine is fixed, then keeps it fixed.

/// `--count N` (default 10 000) and `--from SEED` (default 1); anything else is a one-line
/// error and exit code 2.
func fuzzArguments(_ args: [String]) -> (count: Int, from: UInt64) {
    var count = 10_000, from: UInt64 = 1
    var i = 0
    func value(_ flag: String) -> String {
        guard i + 1 < args.count else { usage("\(flag) needs a value") }
        i += 1
        return args[i]
    }
    while i < args.count {
        switch args[i] {
        case "--count":
            let v = value("--count")
            guard let n = Int(v), n > 0 else { usage("--count \(v): expected a positive number of cases") }
            count = n
        case "--from":
            let v = value("--from")
            guard let n = UInt64(v) else { usage("--from \(v): expected a seed, a number ≥ 0") }
            from = n
        default:
            usage("unknown argument \(args[i]) (fuzz takes --count N and --from SEED)")
        }
        i += 1
    }
    return (count, from)
}

func usage(_ message: String) -> Never {
    FileHandle.standardError.write(Data("synchat-bench: \(message)\n".utf8))
    exit(2)
}

/// A row whose value may be longer than `row`'s column.
func line(_ name: String, _ value: String, _ goal: String = "") {
    say(name.padding(toLength: 56, withPad: " ", startingAt: 0) + value + (goal.isEmpty ? "" : "   (\(goal))"))
}

func seconds(since start: UInt64) -> Double { Double(now() - start) / 1e9 }

func shippedFiles(_ folder: String, _ ext: String) -> [(String, String)] {
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(ext) }.sorted()
    return names.compactMap { name in (try? String(contentsOfFile: "\(folder)/\(name)", encoding: .utf8)).map { ("\(folder)/\(name)", $0) } }
}

/// The regression folder RegressionTests reads, from the package root (where the bench runs).
let regressionFolder = "TestData/fuzz-regressions"

/// Writes a shrunk failing case into the regression folder; a file of that name already
/// there is left alone (an older finding of the same seed), and this one is printed only.
func writeRegression(_ text: String, named name: String) {
    let path = "\(regressionFolder)/\(name)"
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: regressionFolder, isDirectory: &isDirectory), isDirectory.boolValue else {
        return say("no \(regressionFolder) here (run from the package root): \(name) not written")
    }
    guard !FileManager.default.fileExists(atPath: path) else { return say("\(path) exists: left as it is") }
    guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) else { return say("could not write \(path)") }
    say("written to \(path): RegressionTests runs it")
}

func fuzzBench(count: Int, from: UInt64) {
    say("== fuzz: \(count) generated scenarios (seeds \(from)…\(from + UInt64(count) - 1)) × naive, seed, adaptive, each run twice")
    var start = now()
    var messages = 0, errors = 0, gaps = 0, gapCases = 0, failed = 0
    var byKind: [String: Int] = [:]
    for seed in from..<(from + UInt64(count)) {
        let outcome = ScenarioFuzzer.check(seed: seed)
        messages += outcome.messages
        errors += outcome.errorEvents
        gaps += outcome.debounceGaps
        if outcome.debounceGaps > 0 { gapCases += 1 }
        for v in outcome.violations { byKind[v.kind.rawValue, default: 0] += 1 }
        if let failure = ScenarioFuzzer.shrunkFailure(outcome) {
            failed += 1
            say(failure.report)
            writeRegression(failure.file, named: "\(seed).scenario")
        }
    }
    var took = seconds(since: start)
    line("cases / runs", "\(count) / \(count * 6)")
    line("messages landed (per policy)", "\(messages)")
    line("engine error events lived through", "\(errors)")
    line("failing cases", "\(failed)", "goal 0")
    line("violations by invariant", byKind.isEmpty ? "none" : byKind.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
    line("seed: messages rule 6 leaves unfetched", "\(gaps) in \(gapCases) cases", "by design; adaptive (c) closes it")
    line("wall time", String(format: "%.1f s (%.0f cases/s)", took, Double(count) / took))

    let documents = count * 2
    say("== fuzz: wire — \(documents) real replies and pushes broken 13 ways, at the decoders")
    start = now()
    let decoders = WireFuzzer.checkDecoders(count: documents, seed: from)
    took = seconds(since: start)
    line("documents / rejected with a WireError", "\(decoders.documents) / \(decoders.rejected)", "goal: all")
    line("accepted although broken", "\(decoders.accepted.count)", "goal 0")
    for line in decoders.accepted.prefix(5) { say("  accepted: \(line)") }
    line("by mutation", decoders.byMutation.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
    line("wall time", String(format: "%.1f s", took))

    let engineCases = max(1, count / 10)
    say("== fuzz: wire through the engine — \(engineCases) scenarios × 3 policies, a fifth of replies and pushes broken")
    start = now()
    var engineFailed = 0
    for seed in from..<(from + UInt64(engineCases)) {
        let outcome = WireFuzzer.checkEngine(seed: seed)
        if !outcome.violations.isEmpty {
            engineFailed += 1
            say("wire case \(seed): " + outcome.violations.map(\.description).joined(separator: "; "))
        }
    }
    took = seconds(since: start)
    line("failing cases (lost, duplicate, invented, silent)", "\(engineFailed) of \(engineCases)", "goal 0")
    line("wall time", String(format: "%.1f s", took))

    var scenarios = shippedFiles("Scenarios", ".scenario")
    scenarios += (1...20).map { ("fuzz-\($0).scenario", FuzzScenario.generate(seed: UInt64($0)).text) }
    let themes = shippedFiles("Themes", ".toml")
    say("== fuzz: bad files — \(count) scenario, theme and keys files each, each broken on one line")
    start = now()
    let s = FileFuzzer.checkScenarios(count: count, seed: from, corpus: scenarios)
    line("scenario files: still valid / FILE:LINE error / wrong", "\(s.stillValid) / \(s.rejected) / \(s.failures.count)", "goal: 0 wrong")
    for line in s.failures.prefix(5) { say("  \(line)") }
    if themes.isEmpty {
        say("  (no Themes/ here: run from the package root for the theme files)")
    } else {
        let t = FileFuzzer.checkThemes(count: count, seed: from, corpus: themes)
        line("theme files: clean / with warnings / wrong", "\(t.stillValid) / \(t.rejected) / \(t.failures.count)", "goal: 0 wrong, never fatal")
        for line in t.failures.prefix(5) { say("  \(line)") }
    }
    let k = FileFuzzer.checkKeys(count: count, seed: from, corpus: FileFuzzer.keysCorpus)
    line("keys files: clean / with warnings / wrong", "\(k.stillValid) / \(k.rejected) / \(k.failures.count)", "goal: 0 wrong, never fatal")
    for line in k.failures.prefix(5) { say("  \(line)") }
    line("wall time", String(format: "%.1f s", seconds(since: start)))
}

/// `synchat-bench regressions [--write]`: shrinks every file of the regression folder once
/// with the shrinker of `simulate --shrink`. Their defects are fixed, so no
/// invariant breaks any more: a file is shrunk while every policy's run keeps every invariant
/// and shows the same key lines as the file as it is (`ScenarioShrinker.keyLines`: catch-ups
/// by trigger and kind, push state changes, each message by contact, kind and channel), its comments
/// and healing tail kept. Prints each file's figures; `--write` rewrites the files that shrank,
/// with a line in their leading comment saying so.
func regressionsBench(write: Bool) throws {
    say("== regressions: \(regressionFolder), each shrunk while every policy keeps every invariant and its key lines")
    say("file".padding(toLength: 18, withPad: " ", startingAt: 0) + "timed lines   file lines   runs   wall s")
    for (path, text) in shippedFiles(regressionFolder, ".scenario") {
        let original = try ScenarioParser.parse(text, file: path)
        let shrinker = try ScenarioShrinker(text: text, file: path, pinned: ScenarioShrinker.healingTail)
        let start = now()
        let name = (path as NSString).lastPathComponent
        guard let result = shrinker.shrink(holds: ScenarioShrinker.sameFinding(as: original)) else {
            say("\(name): breaks an invariant as it is: left alone")
            continue
        }
        var lines = result.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let lead = lines.prefix { $0.hasPrefix("#") }.count
        let shrank = result.timedAfter < result.timedBefore
        if shrank {
            lines.insert("# shrunk once by synchat-bench regressions: \(result.timedBefore) → \(result.timedAfter) timed lines besides the healing tail;"
                         + " every policy keeps its catch-ups, push changes and messages (ScenarioShrinker.sameFinding)", at: lead)
        }
        let before = text.split(separator: "\n").count, after = lines.count - 1
        say(name.padding(toLength: 18, withPad: " ", startingAt: 0)
            + "\(result.timedBefore) → \(result.timedAfter)".padding(toLength: 14, withPad: " ", startingAt: 0)
            + "\(before) → \(shrank ? after : before)".padding(toLength: 13, withPad: " ", startingAt: 0)
            + "\(result.runs)".padding(toLength: 7, withPad: " ", startingAt: 0) + String(format: "%.1f", seconds(since: start)))
        if write, shrank {
            guard FileManager.default.createFile(atPath: path, contents: Data(lines.joined(separator: "\n").utf8)) else { return say("could not write \(path)") }
        }
    }
}
