import Foundation
import Shrinking
import SimulatedWorld
import Simulation
import SyncCore

/// Where a scenario showed what it is shrunk for: the instant of the event line that showed
/// it, when a line did (a broken invariant is seen only at the end of a run).
public struct Witness: Sendable, Equatable {
    public var at: Instant?

    public init(at: Instant? = nil) { self.at = at }
}

/// Shrinks a scenario file while a property of its run holds (`simulate --shrink`, and every
/// failing case of the fuzzer): `DeltaDebugging` over its timed lines (`at …`); then its
/// header — a duration that ends just past the witness, fewer contacts, lower traffic; then
/// single timed lines until removing any one loses the property (1-minimal). The other lines
/// stay as they are (the comments unless told otherwise). Candidates of a round run at once, one thread each,
/// at most `width`; the first in a fixed order wins, so the result does not depend on which
/// finished first. A candidate that does not parse (a step beyond a shorter duration, a
/// contact a removed line added) does not hold.
public struct ScenarioShrinker: Sendable {
    /// Whether a scenario still shows the property, and where; nil when it does not.
    public typealias Property = @Sendable (Scenario) -> Witness?

    /// A file's line, kept as read (LF, no CR).
    struct Line: Sendable {
        var text: String
        /// For a step (`at …`): its time and what follows the time.
        var step: (at: Interval, rest: String)?
    }

    /// What one candidate keeps: which of the timed lines, and the header values it changes.
    struct Candidate: Hashable, Sendable {
        var timed: [Int]
        var duration: Interval?
        var contacts: Int?
        var traffic: Double?
    }

    public struct Result: Sendable {
        /// The shrunk scenario file (its lines kept, its header changed, LF line ends).
        public var text: String
        public var timedBefore: Int
        public var timedAfter: Int
        /// Scenario runs made (a candidate seen before is not run again; one that does not parse is not run).
        public var runs: Int
    }

    let file: String
    let lines: [Line]
    /// The indices in `lines` of the steps ddmin may remove.
    let timed: [Int]
    /// Steps that always stay (a fuzz case's healing tail); moved to a shorter duration's end.
    let pinned: Set<Int>
    let original: Scenario
    /// Whether the file's own comment lines stay (a fuzz case's, a regression's) or go (they
    /// speak of lines that may be gone).
    let keepsComments: Bool

    /// `pinned(line)`: whether a step line must stay (`healingTail` for the fuzzer's files).
    /// Throws the file's `ScenarioError` when it does not parse.
    public init(text: String, file: String, keepsComments: Bool = true, pinned: ([String]) -> Set<Int> = { _ in [] }) throws {
        self.file = file
        self.keepsComments = keepsComments
        original = try ScenarioParser.parse(text, file: file)
        var body = text
        if body.hasPrefix("\u{FEFF}") { body.removeFirst() }
        // CRLF is one Character to Swift: split on both (a lone CR stays in its line, as the parser keeps it).
        var raw = body.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).map(String.init)
        if raw.last == "" { raw.removeLast() }
        let steps = Dictionary(original.steps.map { ($0.line, $0.at - Instant.zero) }, uniquingKeysWith: { a, _ in a })
        let lines: [Line] = raw.enumerated().map { i, text in
            guard let at = steps[i + 1] else { return Line(text: text, step: nil) }
            // `at TIME rest`: what follows the time, to write it at another time.
            var rest = Substring(text).drop { $0 == " " || $0 == "\t" }.dropFirst(2).drop { $0 == " " || $0 == "\t" }
            rest = rest.drop { $0 != " " && $0 != "\t" }.drop { $0 == " " || $0 == "\t" }
            return Line(text: text, step: (at, String(rest)))
        }
        let pins = pinned(raw)
        self.lines = lines
        self.pinned = pins
        timed = lines.indices.filter { lines[$0].step != nil && !pins.contains($0) }
    }

    /// The timed lines of a fuzz case's file after its `# every fault is lifted …` comment:
    /// they keep the case from failing only because a fault was left on, so they stay.
    public static func healingTail(_ lines: [String]) -> Set<Int> {
        guard let marker = lines.firstIndex(where: { $0.hasPrefix("# every fault is lifted") }) else { return [] }
        return Set(lines.indices.filter { $0 > marker && $0 < lines.count && lines[$0].trimmingCharacters(in: .whitespaces).hasPrefix("at ") })
    }

    public var timedLineCount: Int { timed.count }

    /// Shrinks while `holds`; nil when the scenario as given does not hold. `width`: how many
    /// runs at once (the cores); `progress` is told of each stage.
    public func shrink(width: Int = ProcessInfo.processInfo.activeProcessorCount, progress: (String) -> Void = { _ in },
                       holds: @escaping Property) -> Result? {
        let runner = Runner(property: holds, file: file)
        let full = Candidate(timed: timed)
        guard let first = runner.evaluate([text(full)])[0] else { return nil }
        var witness = first

        func test(_ candidates: [Candidate]) -> [Bool] {
            let results = runner.evaluate(candidates.map(text))
            for (c, r) in zip(candidates, results) where r != nil { runner.remember(c, r!) }
            return results.map { $0 != nil }
        }

        // 1. ddmin over the timed lines.
        var best = full
        var dd = DeltaDebugging<Int>(width: width) { sets in
            test(sets.map { var c = best; c.timed = $0; return c })
        }
        best.timed = dd.ddmin(timed)
        witness = runner.witness(of: best) ?? witness
        progress("ddmin: \(timed.count) → \(best.timed.count) timed lines (\(runner.runs) runs)")

        // 2. The header: a duration that ends just past the witness (or the last step), fewer contacts, lower traffic.
        var tried = 0
        let durations = durationCandidates(best, witness: witness)
        if let i = CandidateBatches.firstHolding(durations, width: width, tried: &tried, test: test) {
            best = durations[i]
            progress("duration: \(SessionRecorder.time(original.duration)) → \(SessionRecorder.time(best.duration!)) (\(runner.runs) runs)")
        }
        // Up to 8 one by one, then a quarter, a half, three quarters, all but one: a few runs even for 1000.
        let n = original.contacts
        let counts = Set(Array(0...min(8, n)) + [n / 4, n / 2, 3 * n / 4, n - 1]).filter { $0 >= 0 && $0 < n }.sorted()
        let fewer = counts.map { k -> Candidate in var c = best; c.contacts = k; return c }
        if let i = CandidateBatches.firstHolding(fewer, width: width, tried: &tried, test: test) {
            best = fewer[i]
            progress("contacts: \(original.contacts) → \(best.contacts!) (\(runner.runs) runs)")
        }
        let t = original.trafficPerHour
        let lower = Array(Set([0, (t / 4).rounded(.down), (t / 2).rounded(.down)].filter { $0 < t })).sorted()
            .map { v -> Candidate in var c = best; c.traffic = v; return c }
        if let i = CandidateBatches.firstHolding(lower, width: width, tried: &tried, test: test) {
            best = lower[i]
            progress("traffic: \(SessionRecorder.rate(t)) → \(SessionRecorder.rate(best.traffic!)) (\(runner.runs) runs)")
        }

        // 3. Single lines until none can go: 1-minimal.
        let before = best.timed.count
        var single = DeltaDebugging<Int>(width: width) { sets in
            test(sets.map { var c = best; c.timed = $0; return c })
        }
        best.timed = single.oneMinimal(best.timed)
        progress("1-minimal: \(before) → \(best.timed.count) timed lines (\(runner.runs) runs)")
        return Result(text: text(best), timedBefore: timed.count, timedAfter: best.timed.count, runs: runner.runs)
    }

    /// Durations to try, shortest first, each shorter than the scenario's and no earlier than
    /// its last kept step: just past the witness (the next whole second), then a minute and
    /// ten minutes past the last step or the witness.
    func durationCandidates(_ c: Candidate, witness: Witness) -> [Candidate] {
        let last = c.timed.compactMap { lines[$0].step?.at }.max() ?? .zero
        var ends: [Interval] = [last, last + .minutes(1), last + .minutes(10)]
        if let at = witness.at {
            let past = Interval.seconds((at.milliseconds + 1000) / 1000)
            ends += [past, past + .minutes(1), past + .minutes(10)]
        }
        let current = c.duration ?? original.duration
        return Array(Set(ends.map { max($0, last, .seconds(1)) })).filter { $0 < current }.sorted()
            .map { var d = c; d.duration = $0; return d }
    }

    /// The file a candidate keeps: every line that is not a step, the steps it keeps and the
    /// pinned ones (moved to a shorter duration's end), its header values written over the file's.
    func text(_ c: Candidate) -> String {
        let keep = Set(c.timed).union(pinned)
        var out: [String] = []
        var written = Set<String>()
        func header(_ key: String) -> String? {
            switch key {
            case "duration": return c.duration.map { "duration \(SessionRecorder.time($0))" }
            case "contacts": return c.contacts.map { "contacts \($0)" }
            case "traffic": return c.traffic.map { "traffic \(SessionRecorder.rate($0))" }
            default: return nil
            }
        }
        func missingHeaders() {
            for key in ["duration", "contacts", "traffic"] where !written.contains(key) {
                if let line = header(key) { out.append(line); written.insert(key) }
            }
        }
        for (i, line) in lines.enumerated() {
            if let step = line.step {
                missingHeaders()  // a header the file did not have goes before its first step
                guard keep.contains(i) else { continue }
                if pinned.contains(i), let d = c.duration, step.at > d {
                    out.append("at \(SessionRecorder.time(d)) \(step.rest)")
                } else {
                    out.append(line.text)
                }
                continue
            }
            let key = line.text.split(maxSplits: 1, whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init) ?? ""
            if !keepsComments, key.hasPrefix("#") { continue }
            if let replaced = header(key) {
                out.append(replaced)
                written.insert(key)
            } else {
                out.append(line.text)
            }
        }
        missingHeaders()
        return out.map { $0 + "\n" }.joined()
    }

    /// Runs candidates' files, at once on threads of their own, remembering every answer.
    final class Runner: @unchecked Sendable {
        let property: Property
        let file: String
        private var answers: [String: Witness?] = [:]
        private var witnesses: [Candidate: Witness] = [:]
        private(set) var runs = 0

        init(property: @escaping Property, file: String) {
            self.property = property
            self.file = file
        }

        func remember(_ c: Candidate, _ w: Witness) { witnesses[c] = w }
        func witness(of c: Candidate) -> Witness? { witnesses[c] }

        /// Each text's answer, in order; the ones not seen before run side by side.
        func evaluate(_ texts: [String]) -> [Witness?] {
            var fresh: [String] = []
            for t in texts where answers[t] == nil && !fresh.contains(t) { fresh.append(t) }
            let parsed = fresh.map { try? ScenarioParser.parse($0, file: file) }
            let results = Results(fresh.count)
            let group = DispatchGroup()
            for (i, scenario) in parsed.enumerated() {
                guard let scenario else { continue }
                runs += 1
                group.enter()
                let property = self.property
                let thread = Thread {
                    results.put(property(scenario), at: i)
                    group.leave()
                }
                thread.stackSize = 8 << 20  // as `ScenarioRun.side`: a run recurses deeper than a secondary thread's default
                thread.start()
            }
            group.wait()
            for (i, t) in fresh.enumerated() { answers[t] = .some(results.value(at: i)) }
            return texts.map { answers[$0]! }
        }
    }

    final class Results: @unchecked Sendable {
        private var values: [Witness?]
        private let lock = NSLock()
        init(_ n: Int) { values = Array(repeating: nil, count: n) }
        func put(_ w: Witness?, at i: Int) { lock.lock(); values[i] = w; lock.unlock() }
        func value(at i: Int) -> Witness? { lock.lock(); defer { lock.unlock() }; return values[i] }
    }
}

extension ScenarioShrinker {
    /// The property of `simulate --shrink --until TEXT`: a line of the run's event log (what
    /// `--events` prints under `policy`) contains `text`. The run stops at the first such line:
    /// what comes later cannot change the lines before it.
    public static func eventLine(containing text: String, policy: SyncPolicy, seed: UInt64? = nil,
                                 pushModel: PushModel? = nil) -> Property {
        { scenario in
            var scenario = scenario
            if let seed { scenario.seed = seed }
            if let pushModel { scenario.pushModel = pushModel }
            let run = ScenarioRun(scenario: scenario, policy: policy)
            var seen = 0
            while !run.finished {
                run.advance(to: min(run.scriptEnd + run.scenario.settle, run.scheduler.now + .minutes(10)))
                let log = run.log
                if let hit = log[seen...].first(where: { $0.line.contains(text) }) { return Witness(at: hit.at) }
                seen = log.count
            }
            return nil
        }
    }

    /// The property of `--until-invariant` and of the fuzzer's failing cases: `policy`'s run
    /// breaks the invariant `kind` (run twice for `determinism`).
    public static func violation(_ kind: Violation.Kind, policy: SyncPolicy, settings: SyncSettings = .default,
                                 seed: UInt64? = nil, pushModel: PushModel? = nil) -> Property {
        { scenario in
            var scenario = scenario
            if let seed { scenario.seed = seed }
            if let pushModel { scenario.pushModel = pushModel }
            let found = ScenarioFuzzer.check(scenario, policies: [policy], twice: kind == .determinism, settings: settings)
            return found.violations.contains { $0.kind == kind } ? Witness() : nil
        }
    }
}
