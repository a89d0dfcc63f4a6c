import RunReports
import SimulatedWorld
import Simulation
import SyncCore
import SyncEngine

/// One broken invariant of one policy's run.
public struct Violation: Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable {
        case lost, duplicates, phantom, overlap, pushTransition = "push-transition", falseUnreliable = "false-unreliable", cursor,
             determinism, unparsable, wire
    }

    public var policy: String
    public var kind: Kind
    public var detail: String

    public init(policy: String, kind: Kind, detail: String) {
        self.policy = policy
        self.kind = kind
        self.detail = detail
    }

    public var description: String { "\(policy): \(kind.rawValue): \(detail)" }
}

/// The invariants every fuzzed run must keep, checked from the world's ground truth, the
/// event log and the storage's record of cursor writes — not from the driver's own counters.
public enum Invariants {
    /// The push-state changes the machine may make (rules 1 and 3): to `disabled` from any
    /// state, `disabled → unknown`, to `reliable` from `unknown` / `unreliable` on a hit, to
    /// `unreliable` from `unknown` / `reliable` on the third consecutive miss.
    public static func legal(_ from: PushState, _ to: PushState) -> Bool {
        switch (from, to) {
        case (_, .disabled): return from != .disabled
        case (.disabled, .unknown): return true
        case (.unknown, .reliable), (.unreliable, .reliable): return true
        case (.unknown, .unreliable), (.reliable, .unreliable): return true
        default: return false
        }
    }

    /// What one run's check found.
    public struct Report: Sendable {
        public var violations: [Violation] = []
        /// `seed` only: messages lost by rule 6 as the spec writes it (see `debounceGap`).
        public var debounceGaps = 0
    }

    public static func check(_ run: ScenarioRun, storage: ObservedStorage) -> Report {
        let policy = run.policy.name
        var report = Report()
        func fail(_ kind: Violation.Kind, _ detail: String) { report.violations.append(Violation(policy: policy, kind: kind, detail: detail)) }

        // 0 lost after settle, 0 duplicates (docs/simulate.md), from the world's ledger and the store.
        // Under `seed`, a loss that rule 6 itself explains is counted, not failed: that policy
        // is rules 1–15 exactly, and adaptive's (c) exists to close this very gap.
        let summary = RunSummary(run)
        let lostIds = Set(summary.lostTxIds)
        var unexplained = run.world.ledger.filter { lostIds.contains($0.txId) }
        if policy == SyncPolicy.seed.name {
            let before = unexplained.count
            unexplained.removeAll { debounceGap($0, in: run) }
            report.debounceGaps = before - unexplained.count
        }
        if let first = unexplained.first {
            fail(.lost, "\(unexplained.count) of \(summary.messagesSent) incoming messages not stored after settle (first \(first.txId.prefix(8)) from \(first.conversation.value) at \(first.blockTime))")
        }
        let stored = storage.allMessages()
        if Set(stored.map(\.txId)).count != stored.count {
            fail(.duplicates, "\(stored.count - Set(stored.map(\.txId)).count) txIds stored twice")
        }
        // Nothing invented: every stored message is the network's, field for field.
        let ledger = Dictionary(run.world.ledger.map { ($0.txId, $0) }, uniquingKeysWith: { a, _ in a })
        let phantoms = stored.filter { ledger[$0.txId] != $0.message }
        if let first = phantoms.first {
            fail(.phantom, "\(phantoms.count) stored messages differ from the network's (first \(first.txId.prefix(8)): \(ledger[first.txId] == nil ? "not on the network" : "other content"))")
        }

        // No overlapping syncs (seed, adaptive): from the log, a start while another runs.
        if run.policy.name != SyncPolicy.naive.name {
            var open = 0
            var overlaps: [Instant] = []
            for e in run.log {
                switch e.event {
                case .catchUpStarted:
                    if open > 0 { overlaps.append(e.at) }
                    open += 1
                case .catchUpFinished: open -= 1
                default: break
                }
            }
            if let first = overlaps.first { fail(.overlap, "\(overlaps.count) syncs started while another ran (first at \(first))") }
        }

        // Push state: a continuous chain of legal transitions, each with its cause at the same instant.
        var state: PushState?
        for (i, e) in run.log.enumerated() {
            guard case .pushState(let from, let to, _) = e.event else { continue }
            if let state, state != from { fail(.pushTransition, "at \(e.at) the change starts from \(from.rawValue) but the state was \(state.rawValue)") }
            if !legal(from, to) { fail(.pushTransition, "illegal \(from.rawValue) → \(to.rawValue) at \(e.at)") }
            let before = run.log[..<i].reversed().prefix { $0.at == e.at }
            if to == .reliable, !before.contains(where: { if case .observationHit = $0.event { true } else { false } }) {
                fail(.pushTransition, "→ reliable at \(e.at) without a hit")
            }
            if to == .unreliable, !before.contains(where: {
                if case .observationMiss(_, let n, let t, _) = $0.event { n >= t } else { false }
            }) {
                fail(.pushTransition, "→ unreliable at \(e.at) without \(run.settings.missesToUnreliable) consecutive misses")
            }
            state = to
        }

        // Rule 2: evidence is only what push could have carried. A run whose push service
        // delivered every push it owed within the spec's grace of its landing never saw push
        // fail, so push must never have become unreliable. (The grace is the spec's, not the
        // engine's settings: a test may break those on purpose.)
        let grace = SyncSettings.default.pushGrace
        if let fall = run.log.first(where: { if case .pushState(_, .unreliable, _) = $0.event { true } else { false } }),
           pushHealthy(run, grace: grace) {
            fail(.falseUnreliable, "push became unreliable at \(fall.at) although every push it owed was delivered within \(grace)")
        }

        // Rule 9: a cursor never moves backwards, and a request never starts more than the
        // reorg rewind before the cursor stored when it was made.
        for w in storage.cursorWrites {
            if let b = w.before.lastFetchedBlockTime, let a = w.after.lastFetchedBlockTime, a < b {
                fail(.cursor, "\(w.object) moved back from \(b) to \(a) at \(w.at)")
            } else if w.before.lastFetchedBlockTime != nil, w.after.lastFetchedBlockTime == nil {
                fail(.cursor, "\(w.object) was cleared at \(w.at)")
            }
        }
        var latest: [SyncObject: [(Instant, Instant)]] = [:]
        for w in storage.cursorWrites { if let a = w.after.lastFetchedBlockTime { latest[w.object, default: []].append((w.at, a)) } }
        for (at, call) in run.world.indexer.calls {
            let object: SyncObject, since: Instant
            switch call {
            case .handshakes(let d, let s, let page) where page == 0: object = .handshakes(d); since = s
            case .contextual(let a, let d, let s, let page) where page == 0: object = .contextual(a, d); since = s
            case .payments(let s, let page) where page == 0: object = .payments; since = s
            default: continue
            }
            // The cursor written strictly before the call: a lower bound of the one it read.
            guard let cursor = latest[object]?.last(where: { $0.0 < at })?.1 else { continue }
            if since < cursor - run.settings.reorgRewind {
                fail(.cursor, "\(object) requested since \(since) at \(at), more than \(run.settings.reorgRewind) before its cursor \(cursor)")
            }
        }
        return report
    }

    /// Ground truth: the push service delivered every push it owed (token active, sender not
    /// muted when the message landed) within the grace of the message's landing.
    public static func pushHealthy(_ run: ScenarioRun, grace: Interval) -> Bool {
        let push = run.world.push
        let landed = Dictionary(run.world.ledger.map { ($0.txId, $0.blockTime) }, uniquingKeysWith: { a, _ in a })
        return push.owedPushes.allSatisfy { id in
            guard let at = push.deliveredAt(id), let blockTime = landed[id] else { return false }
            return at - blockTime <= grace
        }
    }

    /// A loss rules 6 and 8 explain: neither realtime nor push brought the message to the app, a
    /// catch-up trigger after it landed was skipped by the debounce (push reliable) or joined a
    /// sync already running (rule 8's single flight: its requests went before the message was
    /// indexed), and no complete full catch-up started after it was indexed — had one, it would
    /// have fetched it.
    public static func debounceGap(_ m: NetworkMessage, in run: ScenarioRun) -> Bool {
        if run.world.node.delivered(m.txId) || run.world.push.delivered(m.txId) { return false }
        let indexed = m.blockTime + run.world.timings.indexingLag.high
        var skipped = false
        var startedAt: Instant?
        for e in run.log {
            switch e.event {
            case .catchUpSkipped where e.at >= m.blockTime, .catchUpJoined where e.at >= m.blockTime:
                skipped = true
            case .catchUpStarted(_, .full, _, _):
                startedAt = e.at
            case .catchUpFinished(_, .full, _, _, let failed, _, let stoppedBy):
                if let s = startedAt, s >= indexed, failed == 0, stoppedBy == nil { return false }
                startedAt = nil
            default:
                break
            }
        }
        return skipped
    }
}
