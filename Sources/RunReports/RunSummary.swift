import ClientRuntime
import SimulatedWorld
import Simulation
import SyncCore
import SyncEngine

/// The measures of docs/simulate.md for one finished run, from the world's ground truth and the
/// client's store.
public struct RunSummary: Equatable, Sendable {
    public var policy: String
    public var messagesSent: Int
    public var messagesDelivered: Int
    public var messagesLost: Int
    public var duplicates: Int
    public var backendRequests: Int
    public var requestsByKind: [String: Int]
    public var catchUpFull: Int
    public var catchUpTargeted: Int
    public var catchUpSkipped: Int
    public var lightSyncs: Int
    public var latencyP50: Double?
    public var latencyP95: Double?
    public var latencyMax: Double?
    /// The latency floor's p95 (`latencyFloor`): what an all-knowing client would see.
    public var floorLatencyP95: Double?
    /// What the phone paid in battery (`WakeUps`): refresh runs, pushes processed while
    /// suspended, requests that woke the radio.
    public var wakeUps: Int
    public var refreshRuns: Int
    public var pushesWhileSuspended: Int
    public var radioWakeUps: Int
    /// Seconds in the foreground while the world had realtime broken (`AppTimeline`): what
    /// the matrix prices adaptive's looking by.
    public var realtimeOutageForeground: Double
    /// Realtime outages that ended in the foreground (`AppTimeline`): each is priced one closing look.
    public var realtimeOutagesForeground: Int
    /// Seconds in the background (`AppTimeline`): each hour is priced one look of (h).
    public var backgroundSeconds: Double
    /// Seconds from the first push outage (`push drop 100%` or `push down`) to `unreliable`.
    public var timeToUnreliable: Double?
    /// Incoming messages that landed in the first 13 minutes of the first push outage (rule 3
    /// needs three to call push unreliable, each overdue: 2 minutes for a look of (e), which
    /// waits out a slow push, before the 15 minutes the matrix allows are up) and that some
    /// channel could show within those 15 minutes: realtime brought it a push grace before
    /// they are up, or a fetch could reach it in the foreground, the device online and the
    /// indexer up, for a stretch of `PolicyGoals.fastestLook` from when it was indexed until
    /// then (a client looking that often, whatever its phase, fetches it).
    public var messagesInOutageStart: Int?
    public var overlappingSyncs: Int
    public var pushStateChanges: Int
    /// The floor: one fetch by id for each incoming message neither realtime nor push delivered.
    public var oracleRequests: Int
    /// Bytes of the backend's replies (the indexer's documents and the node's UTXO sets).
    public var backendBytes: Int
    /// Bytes on the wire by kind: each backend request kind, and `realtime` and `push`
    /// (the notifications and pushes delivered), each its modelled document's size.
    public var bytesByKind: [String: Int]
    /// The floor in bytes: a fetch by id's reply for each message neither channel delivered.
    public var oracleBytes: Int
    /// How long the engine took to believe each kind of fault the world had (`BeliefLag`).
    public var beliefLag: BeliefLag
    /// Push believed `unreliable` with no fault of push in force (`BeliefLag.falseUnreliable`).
    public var falseUnreliable: Int { beliefLag.falseUnreliable }
    public var finalPushState: PushState
    /// What was lost, oldest first, so that a lost count can be looked into.
    public var lostMessages: [LostMessage]
    public var lostTxIds: [String] { lostMessages.map(\.txId) }

    public struct LostMessage: Equatable, Sendable {
        public var txId: String
        /// The sender's handle (untrusted: a scenario names it).
        public var from: String
        public var blockTime: Instant
    }

    public init(_ run: ScenarioRun) {
        policy = run.policy.name
        // One pass over the world's ledger, each message looked up in the store: nothing of the
        // size of the history is copied (a copy costs about 1.7 KB a message at the peak of a
        // million-message run).
        let world = run.world
        var sent = 0, oracle = 0, oracleBytes = 0
        var lost: [NetworkMessage] = []
        var latencies = LatencyCounts()
        let outage = run.firstPushOutage
        world.history.forEachMessage { m, realtime, pushed in
            guard m.direction == .incoming else { return }
            let stored = run.storage.message(txId: m.txId)
            sent += 1
            // The floor: one fetch by id for each message neither realtime nor push delivered.
            if !realtime, !pushed {
                oracle += 1
                oracleBytes += SimIndexer.replyBytes(carrying: [m], me: world.me)
            }
            if let stored { latencies.add((stored.receivedAt - m.blockTime).milliseconds) } else { lost.append(m) }
        }
        messagesSent = sent
        messagesDelivered = sent - lost.count
        messagesLost = lost.count
        lostMessages = lost.map { m in
            LostMessage(txId: m.txId, from: world.contacts.first { $0.address == m.conversation }?.handle ?? m.conversation.value,
                        blockTime: m.blockTime)
        }
        // Shown twice: a txId in more than one row of the store, counted by the store.
        duplicates = run.storage.duplicateCount()
        var kinds = run.world.indexer.requestsByKind
        if run.world.node.utxoRequests > 0 { kinds["utxo_set"] = run.world.node.utxoRequests }
        requestsByKind = kinds
        backendRequests = kinds.values.reduce(0, +)
        var bytes = world.indexer.bytesByKind
        if world.node.utxoRequests > 0 { bytes["utxo_set"] = world.node.utxoBytes }
        backendBytes = bytes.values.reduce(0, +)
        bytes["realtime"] = world.node.realtimeBytes
        bytes["push"] = world.push.deliveredBytes
        bytesByKind = bytes
        self.oracleBytes = oracleBytes
        let c = run.driver.counters
        catchUpFull = c.fullSyncs
        catchUpTargeted = c.targetedSyncs
        catchUpSkipped = c.skipped
        lightSyncs = c.lightSyncs
        overlappingSyncs = c.overlappingSyncs
        pushStateChanges = c.pushStateChanges
        finalPushState = run.driver.reliability.state

        latencyP50 = latencies.percentile(0.5)
        latencyP95 = latencies.percentile(0.95)
        latencyMax = latencies.max
        let timeline = run.session.timeline.closed(at: run.scheduler.now)
        floorLatencyP95 = Self.latencyFloor(world, timeline: timeline).percentile(0.95)
        realtimeOutageForeground = Double(timeline.realtimeOutageInForeground.milliseconds) / 1000
        realtimeOutagesForeground = timeline.realtimeOutagesEndedInForeground
        backgroundSeconds = Double(timeline.background.milliseconds) / 1000
        wakeUps = world.wakeUps.total
        refreshRuns = world.wakeUps.refreshRuns
        pushesWhileSuspended = world.wakeUps.pushesWhileSuspended
        radioWakeUps = world.wakeUps.radioWakeUps

        messagesInOutageStart = outage.map { Self.showableInOutageStart(world, timeline: timeline, outage: $0, grace: run.settings.pushGrace) }
        if let start = run.firstPushOutage {
            let becameUnreliable = run.session.becameUnreliable.first { $0 >= start }
            timeToUnreliable = becameUnreliable.map { Double(($0 - start).milliseconds) / 1000 }
        }

        oracleRequests = oracle
        beliefLag = run.session.beliefLag.final
    }

    /// The belief lag rows' names and values, for the kinds in `kinds`.
    func beliefRows(kinds: [BeliefLag.Kind]) -> [(String, String)] {
        kinds.map { kind in
            let r = beliefLag.records[kind]
            let value: String
            if let r, let worst = r.worst {
                value = fmt(Double(worst.milliseconds) / 1000) + " s" + (r.unnoticed > 0 ? " (+\(r.unnoticed) unnoticed)" : "")
            } else {
                value = r.map { "unnoticed (\($0.unnoticed))" } ?? "—"
            }
            return ("belief lag \(kind.rawValue)", value)
        }
    }


    /// Byte kinds that `bytesByKind` holds beside the backend's, not part of `backendBytes`:
    /// what the node's realtime channel and the push service carried. Their rows stand on
    /// their own, not under `backend bytes`.
    public static let besideBackend: Set<String> = ["push", "realtime"]

    /// Rows of `name, value` in a fixed order (the table and the comparison use them).
    public var rows: [(String, String)] {
        rows(kinds: requestsByKind.keys.sorted(), byteKinds: bytesByKind.keys.sorted(),
             beliefKinds: BeliefLag.Kind.allCases.filter { beliefLag.records[$0] != nil })
    }

    /// The rows with a line for each of `kinds`, `byteKinds` and `beliefKinds` (0, or —, when
    /// this run had none of them).
    public func rows(kinds: [String], byteKinds: [String], beliefKinds: [BeliefLag.Kind]) -> [(String, String)] {
        func secs(_ v: Double?) -> String { v.map { fmt($0) + " s" } ?? "—" }
        return [
            ("messages sent", "\(messagesSent)"),
            ("messages delivered", "\(messagesDelivered)"),
            ("messages lost", "\(messagesLost)"),
            ("duplicates", "\(duplicates)"),
            ("backend requests", "\(backendRequests)"),
        ] + kinds.map { ("  \($0)", "\(requestsByKind[$0] ?? 0)") } + [
            ("oracle requests (floor)", "\(oracleRequests)"),
            ("wake-ups", "\(wakeUps)"),
            ("  refresh runs", "\(refreshRuns)"),
            ("  pushes while suspended", "\(pushesWhileSuspended)"),
            ("  radio wake-ups", "\(radioWakeUps)"),
            ("backend bytes", "\(backendBytes)"),
        ] + byteKinds.filter { !Self.besideBackend.contains($0) }.map { ("  \($0) bytes", "\(bytesByKind[$0] ?? 0)") } + [
            ("oracle bytes (floor)", "\(oracleBytes)"),
        ] + byteKinds.filter(Self.besideBackend.contains).map { ("\($0) bytes", "\(bytesByKind[$0] ?? 0)") } + [
            ("catch-ups full", "\(catchUpFull)"),
            ("catch-ups targeted", "\(catchUpTargeted)"),
            ("catch-ups skipped", "\(catchUpSkipped)"),
            ("light syncs", "\(lightSyncs)"),
            ("latency p50", secs(latencyP50)),
            ("latency p95", secs(latencyP95)),
            ("latency max", secs(latencyMax)),
            ("latency p95 floor", secs(floorLatencyP95)),
            ("realtime outage (fg)", secs(realtimeOutageForeground)),
            ("time to unreliable", secs(timeToUnreliable)),
        ] + beliefRows(kinds: beliefKinds) + [
            ("false unreliable", "\(falseUnreliable)"),
            ("overlapping syncs", "\(overlappingSyncs)"),
            ("push state changes", "\(pushStateChanges)"),
            ("final push state", finalPushState.rawValue),
        ]
    }

    /// Aligned `name  value` lines, then the lost messages.
    public var table: [String] {
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { $0.0.padding(toLength: width + 2, withPad: " ", startingAt: 0) + $0.1 } + lostLines
    }

    /// One line per lost message: `lost (adaptive): 3af2b1c0 from bob, landed 01:23:45.000`.
    public var lostLines: [String] {
        lostMessages.map { "lost (\(policy)): \($0.txId.prefix(8)) from \(UntrustedText.visible($0.from)), landed \($0.blockTime)" }
    }

    /// One JSON object, snake_case keys in a fixed order.
    public var json: String {
        func num(_ v: Double?) -> String { v.map { fmt($0) } ?? "null" }
        let kinds = requestsByKind.keys.sorted().map { "\"\($0)\": \(requestsByKind[$0]!)" }.joined(separator: ", ")
        let byteKinds = bytesByKind.keys.sorted().map { "\"\($0)\": \(bytesByKind[$0]!)" }.joined(separator: ", ")
        let fields = [
            "\"policy\": \"\(policy)\"",
            "\"messages_sent\": \(messagesSent)",
            "\"messages_delivered\": \(messagesDelivered)",
            "\"messages_lost\": \(messagesLost)",
            "\"duplicates\": \(duplicates)",
            "\"backend_requests\": \(backendRequests)",
            "\"requests_by_kind\": {\(kinds)}",
            "\"catchup_full\": \(catchUpFull)",
            "\"catchup_targeted\": \(catchUpTargeted)",
            "\"catchup_skipped\": \(catchUpSkipped)",
            "\"light_syncs\": \(lightSyncs)",
            "\"latency_p50_s\": \(num(latencyP50))",
            "\"latency_p95_s\": \(num(latencyP95))",
            "\"latency_max_s\": \(num(latencyMax))",
            "\"floor_latency_p95_s\": \(num(floorLatencyP95))",
            "\"wake_ups\": \(wakeUps)",
            "\"wake_ups_by_kind\": {\"refresh_runs\": \(refreshRuns), \"pushes_while_suspended\": \(pushesWhileSuspended), \"radio\": \(radioWakeUps)}",
            "\"realtime_outage_fg_s\": \(num(realtimeOutageForeground))",
            "\"realtime_outages_fg\": \(realtimeOutagesForeground)",
            "\"background_s\": \(num(backgroundSeconds))",
            "\"time_to_unreliable_s\": \(num(timeToUnreliable))",
            "\"overlapping_syncs\": \(overlappingSyncs)",
            "\"push_state_changes\": \(pushStateChanges)",
            "\"oracle_requests\": \(oracleRequests)",
            "\"backend_bytes\": \(backendBytes)",
            "\"bytes_by_kind\": {\(byteKinds)}",
            "\"oracle_bytes\": \(oracleBytes)",
            "\"belief_lag_s\": {\(beliefLag.worstSeconds.map { "\"\($0.0.rawValue)\": \(num($0.1))" }.joined(separator: ", "))}",
            "\"belief_unnoticed\": {\(BeliefLag.Kind.allCases.compactMap { k in beliefLag.records[k].map { "\"\(k.rawValue)\": \($0.unnoticed)" } }.joined(separator: ", "))}",
            "\"false_unreliable\": \(falseUnreliable)",
            "\"lost_tx_ids\": [\(lostTxIds.map { "\"\($0)\"" }.joined(separator: ", "))]",
        ]
        return "{" + fields.joined(separator: ", ") + "}"
    }

    /// The policies side by side, with adaptive/naive and adaptive/seed in the last columns.
    public static func comparison(_ runs: [RunSummary]) -> [String] {
        let names = ["measure"] + runs.map(\.policy) + ["adaptive/naive", "adaptive/seed"]
        let kinds = Set(runs.flatMap(\.requestsByKind.keys)).sorted()
        let byteKinds = Set(runs.flatMap(\.bytesByKind.keys)).sorted()
        let beliefKinds = BeliefLag.Kind.allCases.filter { k in runs.contains { $0.beliefLag.records[k] != nil } }
        let rowSets = runs.map { $0.rows(kinds: kinds, byteKinds: byteKinds, beliefKinds: beliefKinds) }
        let ordered = rowSets.first?.map(\.0) ?? []
        func value(_ run: Int, _ key: String) -> String { rowSets[run].first { $0.0 == key }?.1 ?? "0" }
        func number(_ s: String) -> Double? { Double(s.replacingOccurrences(of: " s", with: "")) }
        var table: [[String]] = [names]
        for key in ordered {
            var row = [key] + runs.indices.map { value($0, key) }
            let a = runs.firstIndex { $0.policy == "adaptive" }, n = runs.firstIndex { $0.policy == "naive" }, s = runs.firstIndex { $0.policy == "seed" }
            for other in [n, s] {
                if let a, let other, let x = number(value(a, key)), let y = number(value(other, key)), y > 0 {
                    row.append(fmt(x / y, digits: 2))
                } else {
                    row.append("")
                }
            }
            table.append(row)
        }
        let widths = (0..<names.count).map { col in table.map { $0[col].count }.max() ?? 0 }
        return table.map { row in
            row.enumerated().map { i, cell in
                i == 0 ? cell.padding(toLength: widths[i], withPad: " ", startingAt: 0)
                       : String(repeating: " ", count: widths[i] - cell.count) + cell
            }.joined(separator: "  ")
        } + runs.flatMap(\.lostLines)
    }
}

func fmt(_ v: Double, digits: Int = 1) -> String {
    var s = String(Int64((v * pow10(digits)).rounded()))
    let negative = s.hasPrefix("-")
    if negative { s.removeFirst() }
    while s.count <= digits { s = "0" + s }
    let cut = s.index(s.endIndex, offsetBy: -digits)
    return (negative ? "-" : "") + s[..<cut] + "." + s[cut...]
}

private func pow10(_ n: Int) -> Double { (0..<n).reduce(1.0) { r, _ in r * 10 } }

/// Latencies counted by the millisecond: exact percentiles (the nearest rank, as a sorted list
/// gives them) in memory bounded by the distinct values, not by the messages.
struct LatencyCounts {
    private var counts: [Int64: Int] = [:]
    private var total = 0

    mutating func add(_ milliseconds: Int64) {
        counts[milliseconds, default: 0] += 1
        total += 1
    }

    /// The smallest value with at least `p` of all values at or below it, in seconds.
    func percentile(_ p: Double) -> Double? {
        guard total > 0 else { return nil }
        let rank = min(total, Swift.max(1, Int((Double(total) * p).rounded(.up))))
        var seen = 0
        for (value, n) in counts.sorted(by: { $0.key < $1.key }) {
            seen += n
            if seen >= rank { return Double(value) / 1000 }
        }
        return nil
    }

    var max: Double? { counts.keys.max().map { Double($0) / 1000 } }
}

extension RunSummary {
    /// The messages of the first 13 minutes of a push outage starting at `outage` that some
    /// channel could show within its 15 minutes (`messagesInOutageStart`); `grace`: rule 2's
    /// wait for a push after realtime brought the message.
    static func showableInOutageStart(_ world: SimulatedWorld, timeline: AppTimeline, outage: Instant, grace: Interval) -> Int {
        let deadline = outage + PolicyGoals.foregroundPushLag
        var n = 0
        world.history.forEachDelivery { m, d in
            guard m.direction == .incoming, m.blockTime >= outage, m.blockTime < outage + .minutes(13) else { return }
            if let seen = d.realtimeAt, seen + grace <= deadline {
                n += 1
            } else if timeline.foregroundFetchPossible(from: d.indexedAt ?? m.blockTime, through: deadline, lasting: PolicyGoals.fastestLook) {
                n += 1
            }
        }
        return n
    }
}
