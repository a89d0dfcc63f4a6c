import Simulation
import SyncCore
import SyncEngine

/// Runs generated scenarios under the three policies and checks the invariants after each
/// run; a failing case is minimised to a scenario file that still fails the same way.
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

    /// Shrinks `fuzz` while `violation`'s policy still breaks the same invariant.
    public static func minimise(_ fuzz: FuzzScenario, keeping violation: Violation, settings: SyncSettings = .default) -> FuzzScenario {
        guard let policy = policies.first(where: { $0.name == violation.policy }) else { return fuzz }
        return minimise(fuzz) { candidate in
            check(candidate, policies: [policy], twice: violation.kind == .determinism, settings: settings)
                .violations.contains { $0.kind == violation.kind }
        }
    }

    /// Shrinks `fuzz` while `holds` stays true: drops steps (delta debugging), then lowers the
    /// traffic, the contacts and the duration. The healing tail stays, so a minimised case
    /// never fails only because a fault was left on.
    public static func minimise(_ fuzz: FuzzScenario, while holds: (FuzzScenario) -> Bool) -> FuzzScenario {
        var best = fuzz
        var chunks = 2
        while !best.steps.isEmpty {
            let size = max(1, (best.steps.count + chunks - 1) / chunks)
            var reduced = false
            var start = 0
            while start < best.steps.count {
                var candidate = best
                candidate.steps.removeSubrange(start..<min(best.steps.count, start + size))
                if holds(candidate) {
                    best = candidate
                    reduced = true
                } else {
                    start += size
                }
            }
            if reduced { chunks = max(2, chunks - 1); continue }
            if size == 1 { break }
            chunks = min(best.steps.count, chunks * 2)
        }
        for traffic in [0, best.trafficPerHour / 2] where traffic < best.trafficPerHour {
            var c = best
            c.trafficPerHour = traffic
            if holds(c) { best = c; break }
        }
        for contacts in 1..<max(1, best.contacts) {
            var c = best
            c.contacts = contacts
            if holds(c) { best = c; break }
        }
        let lastStep = best.steps.map(\.at).max() ?? 0
        for end in [lastStep, lastStep + 60, lastStep + 600] where end < best.endSeconds && end > 0 {
            var c = best
            c.durationSeconds = end
            c.quitAt = nil
            if holds(c) { best = c; break }
        }
        return best
    }

    /// What a failing case prints: its seed, the broken invariant and the minimised file.
    public static func failureReport(_ outcome: Outcome, settings: SyncSettings = .default) -> String? {
        minimisedFailure(outcome, settings: settings)?.report
    }

    /// The report and the minimised scenario file of a failing case; nil when it passed.
    public static func minimisedFailure(_ outcome: Outcome, settings: SyncSettings = .default) -> (report: String, file: String)? {
        guard let first = outcome.violations.first else { return nil }
        let minimal = minimise(outcome.scenario, keeping: first, settings: settings)
        let report = ([
            "fuzz case \(outcome.scenario.seed) failed: \(first)",
        ] + outcome.violations.dropFirst().map { "  also: \($0)" } + [
            "minimised scenario (\(minimal.steps.count) of \(outcome.scenario.steps.count) steps) — rerun with: synchat simulate --scenario FILE --compare",
            minimal.text,
        ]).joined(separator: "\n")
        return (report, minimal.text)
    }
}
