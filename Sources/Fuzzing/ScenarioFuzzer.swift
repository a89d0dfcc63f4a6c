import Foundation
import Simulation
import SyncCore
import SyncEngine

/// Runs generated scenarios under the three policies and checks the invariants after each
/// run; a failing case is shrunk (`ScenarioShrinker`) to a scenario file that still fails the same way.
public enum ScenarioFuzzer {
    public static let policies: [SyncPolicy] = [.naive, .seed, .adaptive]

    /// What the checks of one scenario found, over every policy.
    public struct Findings: Sendable {
        public var violations: [Violation] = []
        /// Messages that landed, over all policies' runs (they see the same traffic).
        public var messages = 0
        /// Errors the engine logged (indexer down, malformed replies …): faults it lived through.
        public var errorEvents = 0
        /// `seed`'s losses that rule 6 explains (not violations; see `Invariants.debounceGap`).
        public var debounceGaps = 0

        public var passed: Bool { violations.isEmpty }
    }

    /// The outcome of one generated case.
    public struct Outcome: Sendable {
        public var scenario: FuzzScenario
        public var findings: Findings

        public var violations: [Violation] { findings.violations }
        public var messages: Int { findings.messages }
        public var errorEvents: Int { findings.errorEvents }
        public var debounceGaps: Int { findings.debounceGaps }
        public var passed: Bool { findings.passed }
    }

    /// Generates case `seed` and checks it under every policy; each policy runs twice and the
    /// two event logs must be identical (determinism per seed).
    public static func check(seed: UInt64, settings: SyncSettings = .default) -> Outcome {
        check(FuzzScenario.generate(seed: seed), settings: settings)
    }

    /// `settings` lets a test break the engine on purpose and watch the fuzzer catch it.
    /// `prepare` runs on each fresh run before it starts (the wire fuzzer installs its
    /// breakage there); `extraChecks` adds invariants of its own.
    public static func check(_ fuzz: FuzzScenario, policies: [SyncPolicy] = policies, twice: Bool = true,
                             settings: SyncSettings = .default, prepare: (ScenarioRun) -> Void = { _ in },
                             extraChecks: (ScenarioRun) -> [Violation] = { _ in [] }) -> Outcome {
        let scenario: Scenario
        do {
            scenario = try ScenarioParser.parse(fuzz.text, file: "fuzz-\(fuzz.seed).scenario")
        } catch {
            let violation = Violation(policy: "generator", kind: .unparsable, detail: "the generated file does not parse: \(error)")
            return Outcome(scenario: fuzz, findings: Findings(violations: [violation]))
        }
        // The file must read back as the values it was written from: the printer and the
        // parser are each other's oracle on every hostile text the generator draws.
        let written = fuzz.steps.map(\.directive) + FuzzScenario.healing + (fuzz.quitAt == nil ? [] : [.quit])
        let read = scenario.steps.map(\.directive)
        if read != written {
            let i = zip(read, written).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(read.count, written.count)
            let detail = "the generated file reads back otherwise at step \(i + 1): "
                + "\(i < read.count ? read[i].summary : "nothing") where \(i < written.count ? written[i].summary : "nothing") was written"
            return Outcome(scenario: fuzz, findings: Findings(violations: [Violation(policy: "generator", kind: .unparsable, detail: detail)]))
        }
        return Outcome(scenario: fuzz, findings: check(scenario, policies: policies, twice: twice, settings: settings,
                                                       prepare: prepare, extraChecks: extraChecks))
    }

    /// Checks any parsed scenario (a shipped one, a regression file) under `policies`.
    public static func check(_ scenario: Scenario, policies: [SyncPolicy] = policies, twice: Bool = true,
                             settings: SyncSettings = .default, prepare: (ScenarioRun) -> Void = { _ in },
                             extraChecks: (ScenarioRun) -> [Violation] = { _ in [] }) -> Findings {
        var found = Findings()
        for policy in policies {
            let (run, storage) = runOnce(scenario, policy: policy, settings: settings, prepare: prepare)
            let report = Invariants.check(run, storage: storage)
            found.violations += report.violations + extraChecks(run)
            found.debounceGaps += report.debounceGaps
            found.messages = run.world.ledger.count
            found.errorEvents += run.log.filter { if case .error = $0.event { true } else { false } }.count
            if twice {
                let (again, _) = runOnce(scenario, policy: policy, settings: settings, prepare: prepare)
                if again.logLines != run.logLines {
                    let i = zip(run.logLines, again.logLines).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(run.log.count, again.log.count)
                    found.violations.append(Violation(policy: policy.name, kind: .determinism,
                                                      detail: "two runs of one seed differ at event \(i + 1) of \(run.log.count)"))
                }
            }
        }
        return found
    }

    static func runOnce(_ scenario: Scenario, policy: SyncPolicy, settings: SyncSettings,
                        prepare: (ScenarioRun) -> Void = { _ in }) -> (ScenarioRun, ObservedStorage) {
        let storage = ObservedStorage()
        let run = ScenarioRun(scenario: scenario, policy: policy, settings: settings, storage: storage)
        storage.clock = { [unowned run] in run.scheduler.now }
        prepare(run)
        run.run()
        return (run, storage)
    }

    /// A failing case shrunk by `ScenarioShrinker` (as `simulate --shrink --until-invariant`
    /// shrinks a file) while its first violation's policy breaks the same invariant; its
    /// healing tail stays, so a shrunk case never fails only because a fault was left on.
    public struct Failure: Sendable {
        public var violation: Violation
        /// What it prints: the seed, the broken invariant, the shrunk file.
        public var report: String
        /// The regression file: a comment naming the invariant, then the shrunk scenario.
        public var file: String
        public var shrunk: ScenarioShrinker.Result
    }

    /// The shrunk failure of a failing case; nil when it passed.
    public static func shrunkFailure(_ outcome: Outcome, settings: SyncSettings = .default,
                                     width: Int = ProcessInfo.processInfo.activeProcessorCount) -> Failure? {
        guard let first = outcome.violations.first else { return nil }
        let text = outcome.scenario.text
        guard let policy = policies.first(where: { $0.name == first.policy }),
              let shrinker = try? ScenarioShrinker(text: text, file: "fuzz-\(outcome.scenario.seed).scenario", pinned: ScenarioShrinker.healingTail),
              let shrunk = shrinker.shrink(width: width, holds: ScenarioShrinker.violation(first.kind, policy: policy, settings: settings))
        else {
            // Not reproducible alone (a generator's file that does not parse, a policy not run here): kept whole.
            let whole = ScenarioShrinker.Result(text: text, timedBefore: 0, timedAfter: 0, runs: 0)
            return failure(outcome, first, whole)
        }
        return failure(outcome, first, shrunk)
    }

    private static func failure(_ outcome: Outcome, _ first: Violation, _ shrunk: ScenarioShrinker.Result) -> Failure {
        let seed = outcome.scenario.seed
        let file = [
            "# found by synchat-bench fuzz (case \(seed)): \(first.policy) breaks the \(first.kind.rawValue) invariant: \(first.detail)",
            "# shrunk from \(shrunk.timedBefore) to \(shrunk.timedAfter) timed lines (the healing tail kept) in \(shrunk.runs) runs;"
                + " rerun with: synchat simulate --scenario FILE --compare",
        ].map { UntrustedText.visible($0) }.joined(separator: "\n") + "\n" + shrunk.text
        let report = ([
            "fuzz case \(seed) failed: \(first)",
        ] + outcome.violations.dropFirst().map { "  also: \($0)" } + [
            "shrunk scenario (\(shrunk.timedAfter) of \(shrunk.timedBefore) timed lines, \(shrunk.runs) runs) — rerun with: synchat simulate --scenario FILE --compare",
            shrunk.text,
        ]).joined(separator: "\n")
        return Failure(violation: first, report: report, file: file, shrunk: shrunk)
    }

    /// What a failing case prints: its seed, the broken invariant and the shrunk file.
    public static func failureReport(_ outcome: Outcome, settings: SyncSettings = .default) -> String? {
        shrunkFailure(outcome, settings: settings)?.report
    }
}
