import Simulation
import SyncCore

/// Shrinking a regression file once its defect is fixed: the file fails no invariant any more,
/// so it is shrunk while it still exercises what it did — under every policy, the same
/// sequence of the decisions a finding is about — and still keeps every invariant.
extension ScenarioShrinker {
    /// The lines of a run's event log that say what a regression exercises, without their
    /// times, ids and counts: each catch-up's trigger and kind as it starts, ends or is
    /// skipped, each push state change, and each message with its contact, kind and the channel
    /// that first brought it (or `sent`). The findings of `TestData/fuzz-regressions` are all
    /// about these: a send that spent an output, a message a sync should have fetched, a
    /// cursor, a proof of a gap, a miss.
    public static func keyLines(_ log: [String]) -> [String] {
        log.compactMap { line in
            guard line.count > 13 else { return nil }
            let text = String(line.dropFirst(13))  // "HH:MM:SS.mmm "
            if text.hasPrefix("catch-up started ("), let colon = text.range(of: "): ") {
                let kind = text[colon.upperBound...].split(separator: " ").first ?? ""
                return String(text[..<colon.upperBound]) + kind + (text.hasSuffix(", forced") ? ", forced" : "")
            }
            if text.hasPrefix("catch-up finished ("), let comma = text.firstIndex(of: ",") { return String(text[..<comma]) }
            if let change = text.firstMatch(of: /^push (unknown|reliable|unreliable|disabled) → (unknown|reliable|unreliable|disabled)/) {
                return String(change.output.0)
            }
            if text.hasPrefix("catch-up skipped ("), let close = text.firstIndex(of: ")") { return String(text[...close]) }
            // `message 3dde9a5c from bob (contextual) via realtime`, `message d324d5bf to bob (contextual) via sent`
            if let message = text.firstMatch(of: /^message \S+ ((?:from|to) .+ \(\w+\) via \w+)$/) { return "message " + message.output.1 }
            return nil
        }
    }

    /// Holds while every policy's run keeps every invariant and shows `original`'s key lines
    /// (`keyLines`), in order.
    public static func sameFinding(as original: Scenario, policies: [SyncPolicy] = ScenarioFuzzer.policies) -> Property {
        let expected = policies.map { keyLines(run(original, policy: $0).run.logLines) }
        return { scenario in
            for (policy, key) in zip(policies, expected) {
                let (run, storage) = Self.run(scenario, policy: policy)
                guard Invariants.check(run, storage: storage).violations.isEmpty, keyLines(run.logLines) == key else { return nil }
            }
            return Witness()
        }
    }

    static func run(_ scenario: Scenario, policy: SyncPolicy) -> (run: ScenarioRun, storage: ObservedStorage) {
        let storage = ObservedStorage()
        let run = ScenarioRun(scenario: scenario, policy: policy, storage: storage)
        storage.clock = { [unowned run] in run.scheduler.now }
        run.run()
        return (run, storage)
    }
}
