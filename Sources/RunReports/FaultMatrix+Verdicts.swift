import Foundation
import Simulation
import SyncCore

/// The fault matrix's verdicts: the goals of docs/matrix.md judged over a grid's rows, as values
/// (`judge`) and as the lines `simulate --matrix` prints (`verdicts`).
extension FaultMatrix {
    /// The goals (docs/matrix.md, `PolicyGoals`), each a line with its count over the grid and
    /// the cells that miss it: a goal missed is a line that says `not:`.
    public static func verdicts(_ rows: [Row]) -> [String] {
        let v = judge(rows)
        var out = [""]
        out.append("lost or duplicated: \(v.lostOrDuplicated.isEmpty ? "none" : v.lostOrDuplicated.map(\.words).joined(separator: "; ")) in \(rows.count) runs")
        out.append("false unreliable: " + (v.falseUnreliable.isEmpty ? "none" : v.falseUnreliable.map(\.words).joined(separator: "; ")))
        for goal in v.goals {
            out.append("\(goal.number). \(goal.label): \(goal.judged - goal.misses.count) of \(goal.judged) cells"
                       + (goal.misses.isEmpty ? "" : " (not: " + goal.misses.map(\.words).joined(separator: "; ") + ")") + (goal.note.map { "; " + $0 } ?? ""))
        }
        out.append("4. wake-ups over the grid: " + v.wakeUps.map { "\($0.policy) \($0.count)" }.joined(separator: ", "))
        out.append("4. latest delivery over the grid (max, not p95): " + v.worstLatency.map { w in
            "\(w.policy) \(Interval(milliseconds: Int64(w.seconds * 1000))) (cell \(w.cell))"
        }.joined(separator: ", "))
        return out
    }

    /// The verdicts as values (`verdicts` prints them; `synchat-bench matrix` counts them over seeds).
    public struct Verdicts: Sendable {
        /// One cell's run that broke a goal, and how, in the verdict line's words.
        public struct Miss: Sendable, Equatable {
            public var cell: Int
            public var policy: String
            public var words: String
        }
        public struct Goal: Sendable {
            public var number: Int
            public var label: String
            public var judged: Int
            public var misses: [Miss]
            /// What the line adds after its count (the worlds out of every client's reach).
            public var note: String?
        }
        public var lostOrDuplicated: [Miss] = []
        public var falseUnreliable: [Miss] = []
        public var goals: [Goal] = []
        public var wakeUps: [(policy: String, count: Int)] = []
        /// Each policy's latest delivery over the grid, and its cell: a message is never lost,
        /// at worst this late (every world ends in the foreground with every fault lifted).
        public var worstLatency: [(policy: String, seconds: Double, cell: Int)] = []

        /// Goal (a) for `policy`: nothing lost or shown twice, and no false `unreliable`.
        public func holdsA(_ policy: String = "adaptive") -> Bool {
            !(lostOrDuplicated + falseUnreliable).contains { $0.policy == policy }
        }
        /// Goals 1–3 met in every cell they judge.
        public var goalsOneToThree: Bool { goals.filter { $0.number <= 3 }.allSatisfy(\.misses.isEmpty) }
    }

    public static func judge(_ rows: [Row]) -> Verdicts {
        var v = Verdicts()
        v.lostOrDuplicated = rows.filter { $0.summary.messagesLost > 0 || $0.summary.duplicates > 0 }.map {
            .init(cell: $0.index, policy: $0.policy, words: "cell \($0.index) \($0.policy) (\($0.summary.messagesLost) lost, \($0.summary.duplicates) dup)")
        }
        v.falseUnreliable = rows.filter { $0.summary.falseUnreliable > 0 }.map {
            .init(cell: $0.index, policy: $0.policy, words: "cell \($0.index) \($0.policy) ×\($0.summary.falseUnreliable)")
        }
        let adaptive = rows.filter { $0.policy == "adaptive" }
        let seeds = Dictionary(uniqueKeysWithValues: rows.filter { $0.policy == "seed" }.map { ($0.index, $0.summary) })
        let naives = Dictionary(uniqueKeysWithValues: rows.filter { $0.policy == "naive" }.map { ($0.index, $0.summary) })
        /// A goal's line: `label` is "N. words"; each miss begins with its cell's number.
        func line(_ label: String, _ judged: [Row], _ misses: [String], note: String? = nil) {
            let number = Int(label.prefix { $0.isNumber }) ?? 0
            let words = String(label.drop { $0.isNumber }.dropFirst(2))
            v.goals.append(.init(number: number, label: words, judged: judged.count,
                                 misses: misses.map { .init(cell: Int($0.prefix { $0.isNumber }) ?? -1, policy: "adaptive", words: $0) }, note: note))
        }

        // 1. A push that dies in the background is found.
        // A world where naive, syncing at every grant the OS gives, is over the bound too is out
        // of every client's reach (an OS grant fell in the indexer's downtime, and the next is
        // 15 min away): listed apart, with naive's p95, while adaptive is within a minute of it.
        let background = adaptive.filter { Self.pushDeadInBackground($0.cell) }
        let unreachable = background.filter { a in naives[a.index].map { PolicyGoals.beyondEveryGrant(adaptive: a.summary, naive: $0) } ?? false }
        let deadInBackground = background.filter { a in !unreachable.contains { $0.index == a.index } }
        let late = deadInBackground.compactMap { a -> String? in
            var why: [String] = []
            if (a.summary.latencyP95 ?? 0) > PolicyGoals.deadPushInBackgroundP95 { why.append("p95 \(Int((a.summary.latencyP95 ?? 0).rounded())) s") }
            if let n = naives[a.index], Double(a.summary.backendRequests) > Double(n.backendRequests) * PolicyGoals.deadPushRequestsShareOfNaive {
                why.append("req \(a.summary.backendRequests)/\(n.backendRequests)")
            }
            return why.isEmpty ? nil : "\(a.index) " + why.joined(separator: " ")
        }
        line("1. background, push dead: adaptive p95 ≤ \(Int(PolicyGoals.deadPushInBackgroundP95)) s at ≤ ½ naive's requests",
             deadInBackground, late,
             note: unreachable.isEmpty ? nil : "naive, syncing at every grant, misses it too: " + unreachable.map { a in
                 "\(a.index): naive \(Int((naives[a.index]?.latencyP95 ?? 0).rounded())) s, adaptive \(Int((a.summary.latencyP95 ?? 0).rounded())) s"
             }.joined(separator: "; "))

        // 2. Never slower than seed.
        let withSeed = adaptive.filter { seeds[$0.index] != nil }
        let slower = withSeed.compactMap { a -> String? in
            let s = seeds[a.index]!
            return PolicyGoals.neverSlower(adaptive: a.summary, seed: s) ? nil
                : "\(a.index) \(Int((a.summary.latencyP95 ?? 0).rounded()))/\(Int((s.latencyP95 ?? 0).rounded())) s"
        }
        line("2. adaptive p95 ≤ 1.1 × seed's + 60 s", withSeed, slower)

        // 3. Never dearer than seed where seed is not blind, but for the price of looking.
        let comparable = withSeed.filter { PolicyGoals.seedNotBlind(seeds[$0.index]!) }
        let dearer = comparable.compactMap { a in PolicyGoals.dearer(adaptive: a.summary, seed: seeds[a.index]!).map { "\(a.index) \($0)" } }
        line("3. seed's p95 ≤ 300 s: adaptive ≤ seed's requests and bytes + the price of looking (spec §4)", comparable, dearer)
        let fgUp = adaptive.filter { $0.cell.app == .foreground && $0.cell.indexer == .up && $0.cell.network == .on }
        let slow = fgUp.filter { ($0.summary.latencyP95 ?? 0) > PolicyGoals.foregroundP95 }.map { "\($0.index)" }
        line("3. foreground, indexer up: adaptive p95 ≤ 300 s", fgUp, slow)
        // Rule 3 needs three messages without their push, each overdue: a world where fewer of
        // the first 13 minutes' messages could be shown by any channel (realtime, or a fetch in
        // the foreground with the device online and the indexer up for a minute, (e)'s fastest
        // pace) before the 15 minutes are up cannot be judged in 15 (it is listed).
        // A world where adaptive found push dead in time anyway counts as met.
        let fgDead = adaptive.filter { $0.cell.app == .foreground && $0.cell.push == .drop100 && $0.cell.mode == .remotePush }
        func foundInTime(_ a: FaultMatrix.Row) -> Bool {
            a.summary.beliefLag.records[.push]?.worst.map { $0 <= PolicyGoals.foregroundPushLag } ?? false
        }
        let judgeable = fgDead.filter { ($0.summary.messagesInOutageStart ?? 0) >= 3 || foundInTime($0) }
        let unnoticed = judgeable.compactMap { a -> String? in
            foundInTime(a) ? nil : "\(a.index) \(a.summary.beliefLag.records[.push]?.worst.map { "\($0)" } ?? "never")"
        }
        let sparse = fgDead.filter { ($0.summary.messagesInOutageStart ?? 0) < 3 && !foundInTime($0) }
            .map { a -> String in
                let n = a.summary.messagesInOutageStart ?? 0
                return "\(a.index): \(n) message\(n == 1 ? "" : "s") any channel could show in time"
            }
        line("3. foreground, push dead: believed unreliable within 15 min", judgeable, unnoticed,
             note: sparse.isEmpty ? nil : "too few messages to tell: " + sparse.joined(separator: "; "))

        // 4. The floor, and what a phone pays.
        let overFloor = adaptive.filter { a in
            guard let p = a.summary.latencyP95, let f = a.summary.floorLatencyP95, f > 0 else { return false }
            return p > f * PolicyGoals.floorFactor
        }
        let judged = adaptive.filter { ($0.summary.floorLatencyP95 ?? 0) > 0 }
        line("4. adaptive p95 ≤ 3 × the floor's (where not, docs/matrix.md says why)", judged, overFloor.map { "\($0.index)" })
        v.wakeUps = orderedPolicies(rows).map { p in (p, rows.filter { $0.policy == p }.map(\.summary.wakeUps).reduce(0, +)) }
        v.worstLatency = orderedPolicies(rows).compactMap { p in
            rows.filter { $0.policy == p }.compactMap { r in r.summary.latencyMax.map { (r.index, $0) } }.max { $0.1 < $1.1 }.map { (p, $0.1, $0.0) }
        }
        return v
    }

    /// Goal 1's worlds: the app in the background (all day, or a night), push dead, the device
    /// online.
    static func pushDeadInBackground(_ c: MatrixCell) -> Bool {
        (c.app == .background || c.app == .night) && c.push == .drop100 && c.mode == .remotePush && c.network == .on
    }
}
