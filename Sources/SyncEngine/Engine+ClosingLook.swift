import Foundation
import SyncCore

/// Adaptive (h): the closing look of a foreground realtime outage that push was trusted to
/// cover (`ClosingLook`): owed when rule 6 skips the reconnect's catch-up, dropped when a
/// catch-up covers the gap, asked once push is overdue for the gap's last message.
extension Engine {
    /// The reconnect's catch-up was skipped (rule 6, push reliable): the gap since realtime was
    /// last live, less the reorg buffer, is push's alone; a look is owed.
    func closingLookOwed() {
        guard policy.closingLook, machines.connection.lifecycle == .foreground else { return }
        let ended = machines.connection.lastLiveEndedAt ?? now
        // Counted from the reorg buffer before the gap, as a fetch would ask (rule 9).
        // The push path closed in the gap (a server restart loses the pushes in flight): the
        // look cannot wait for pushes that are not coming.
        if pushPathGap {
            machines.closing.gapLeftToPush(ClosingLook.Window(after: ended - settings.reorgRewind, through: now), now: now, pushCannotCover: true)
            return emit(.closingLook("the reconnect's catch-up was skipped for a \(now - ended) gap in which the push path was closed too; the indexer's tips counted over it now"))
        }
        machines.closing.gapLeftToPush(ClosingLook.Window(after: ended - settings.reorgRewind, through: now), now: now)
        emit(.closingLook("the reconnect's catch-up was skipped with push trusted for a \(now - ended) gap; the indexer's tips counted over it in \(machines.closing.delay), once push is overdue for its last message"))
    }

    /// A catch-up of everything (a full sync, or a proof of the gap by the UTXO set) started:
    /// it covers every gap that ended before it.
    func closingLookCovered() {
        guard policy.closingLook, machines.closing.catchUpStarted(at: now) else { return }
        emit(.closingLook("dropped: this catch-up covers the gap"))
    }

    /// The look is due: asked now if nothing is out (rule 8), or a little later.
    func closingLookDue() {
        let free = machines.connection.lifecycle == .foreground && pending.tipOut == nil && runs.isEmpty
        guard let window = machines.closing.deadlineReached(now: now, canLook: free) else { return }
        coverage.lookCounts = (window.after, window.through)
        let call = IndexerCall.tipCounting(after: window.after, through: window.through)
        counters.requestsByKind[call.kind, default: 0] += 1
        let id = request()
        pending.sent(id, .tip(.closingLook))
        effects.append(.indexer(id: id, call))
        emit(.closingLookAsked(objects: fullSyncObjects().count))
    }

    /// The tips, counted over the gap, against what the app holds: an object short of its count,
    /// or whose tip push is overdue for and has not brought, is fetched by a targeted sync.
    func closingLookReplied(result: Result<Data, TransportError>) {
        let tips: IndexerTips
        do {
            tips = try IndexerTips.read(result.get(), now: now)
        } catch {
            machines.closing.failed(now: now)
            return emit(.error(source: "indexer", message: "tip: \(error); the closing look is asked again in \(machines.closing.due.map { $0 - now } ?? .zero)"))
        }
        machines.closing.answered()
        let objects = fullSyncObjects()
        let short = countedShort(objects, tips: tips)
        let missing = unbrought(objects, tips: tips)
        let moved = objects.filter { missing.contains($0) || short.contains($0) }
        emit(.closingLookAnswered(age: tips.latest.map { now - $0 }, moved: moved.map(\.description), of: objects.count))
        if !moved.isEmpty { trigger(.closingLook, forced: false, tipObjects: moved) }
    }
}
