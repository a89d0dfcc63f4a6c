import SimWorld
import SyncCore
import SyncEngine

/// The figures of one finished run, from the world's ground truth and the client's store.
public struct RunSummary: Equatable, Sendable {
    public var messagesSent: Int
    public var messagesDelivered: Int
    public var messagesLost: Int
    public var duplicates: Int
    public var backendRequests: Int
    public var requestsByKind: [String: Int]
    public var catchUpFull: Int
    public var catchUpLight: Int
    public var catchUpSkipped: Int
    public var overlappingSyncs: Int
    public var pushStateChanges: Int
    public var finalPushState: PushState
    public var lostTxIds: [String]

    public init(_ run: ScenarioRun) {
        let incoming = run.world.ledger.filter { $0.direction == .incoming }
        let stored = run.storage.allMessages()
        let storedIds = Set(stored.map(\.txId))
        let lost = incoming.filter { !storedIds.contains($0.txId) }
        messagesSent = incoming.count
        messagesDelivered = incoming.count - lost.count
        messagesLost = lost.count
        lostTxIds = lost.map(\.txId)
        duplicates = stored.count - storedIds.count
        var kinds = run.world.indexer.requestsByKind
        if run.world.node.utxoRequests > 0 { kinds["utxo_set"] = run.world.node.utxoRequests }
        requestsByKind = kinds
        backendRequests = kinds.values.reduce(0, +)
        let c = run.driver.counters
        catchUpFull = c.fullSyncs
        catchUpLight = c.lightSyncs
        catchUpSkipped = c.skipped
        overlappingSyncs = c.overlappingSyncs
        pushStateChanges = c.pushStateChanges
        finalPushState = run.driver.reliability.state
    }

    /// Aligned `name  value` lines.
    public var table: [String] {
        let rows: [(String, String)] = [
            ("messages sent", "\(messagesSent)"),
            ("messages delivered", "\(messagesDelivered)"),
            ("messages lost", "\(messagesLost)"),
            ("duplicates", "\(duplicates)"),
            ("backend requests", "\(backendRequests)"),
        ] + requestsByKind.keys.sorted().map { ("  \($0)", "\(requestsByKind[$0]!)") } + [
            ("catch-ups full", "\(catchUpFull)"),
            ("light syncs", "\(catchUpLight)"),
            ("catch-ups skipped", "\(catchUpSkipped)"),
            ("overlapping syncs", "\(overlappingSyncs)"),
            ("push state changes", "\(pushStateChanges)"),
            ("final push state", finalPushState.rawValue),
        ]
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { $0.0.padding(toLength: width + 2, withPad: " ", startingAt: 0) + $0.1 }
    }
}
