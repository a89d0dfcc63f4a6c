import Foundation
import SyncCore

/// Adaptive (f) and (g): push's pace and record fed to `PushWatch`, and the looks it asks for
/// (the indexer's tips against what the app has), in the background and for (e)'s checks.
extension Engine {
    /// What `PushVerifier` needs of the watch, as of now.
    var watchView: PushVerifier.Watch {
        PushVerifier.Watch(keepsUp: machines.watch.keepsUp(machines.reliability.state, now: now), silenceEndsAt: machines.watch.silenceEndsAt(),
                           oldestOwed: machines.watch.oldestOwed, losing: machines.watch.losing, pushPaidOwed: machines.watch.pushPaidSinceLook)
    }

    /// (g): realtime has been live since before what the app last proved stored (`provenThrough`):
    /// whatever landed since, realtime brought or the UTXO set shows, so rule 4's forced catch-up
    /// is a proof, not a full sync (`CatchUpGate.kindToStart`).
    var realtimeCoversProof: Bool {
        guard let live = machines.connection.liveSince, let proven = coverage.provenThrough else { return false }
        return live <= proven
    }

    /// (g): a conversation is muted, so push brings nothing of it: a realtime gap is not push's
    /// to cover, however reliable push is for the others (a reconnect's gap is proven then, as
    /// while push is in doubt; rule 6 as written trusts push for it, and seed loses what landed).
    var pushLeavesSomeOut: Bool { contactsByAddress.values.contains { $0.muted } }

    /// Push is unreliable (rules 2–3) and, under (g), losing messages, not only late with them:
    /// what (e)'s polling in `remote-push` makes up for.
    var pushFailing: Bool { machines.reliability.state == .unreliable && (!policy.pacedLooks || machines.watch.losing) }

    /// An incoming message reached the app (`byPush`: by its push, which `pushArrived` counts):
    /// the traffic's rate and push's record, if push could have carried it.
    func trafficSeen(_ message: NetworkMessage, byPush: Bool) {
        guard policy.watchPushInBackground || policy.pacedLooks, message.direction == .incoming, !byPush,
              machines.reliability.pushEligible(from: message.conversation, landedAt: message.blockTime) else { return }
        machines.watch.messageSeen(txId: message.txId, blockTime: message.blockTime)
    }

    /// A push reached the app or its notification extension: push's pace and record. (g) waits
    /// for its silence, so the next look moves.
    func pushArrived(_ message: NetworkMessage) {
        broughtOwed(message, byPush: true)
        guard policy.watchPushInBackground || policy.pacedLooks, message.direction == .incoming else { return }
        // Realtime live in the foreground would show a message push lost beside this one.
        let watched = machines.connection.lifecycle == .foreground && machines.connection.realtime == .live
        machines.watch.pushArrived(txId: message.txId, blockTime: message.blockTime, at: now, watched: watched)
        if policy.pacedLooks, machines.connection.notLiveSince != nil { updatePoller() }  // (e)'s looks wait only while realtime is not live
    }

    /// (g): a message reached the app (stored, or held by the notification extension): a tip a
    /// look left to push is paid by its own message.
    func broughtOwed(_ message: NetworkMessage, byPush: Bool) {
        guard policy.pacedLooks else { return }
        machines.watch.brought(SyncObject(holding: message), landedAt: message.blockTime, byPush: byPush)
    }

    /// Realtime stopped being live in the foreground (`ConnectionLifecycle.notLiveSince` begins):
    /// (e)'s looks count from now, and so do the pushes the first look weighs (those before
    /// came with realtime watching).
    func realtimeStopped() {
        if policy.pacedLooks { _ = machines.watch.looked(foundNothingMissing: false, at: now) }
    }

    /// Push's losses judged: each is said, and what makes up for push is decided again.
    func handle(_ actions: [PushWatch.Action]) {
        guard !actions.isEmpty else { return }
        for case .lost(let txId, let landedAt) in actions {
            emit(.pushWatch("lost \(txId.prefix(8)): no push within \(machines.watch.lossAfter) of it landing at \(landedAt)"))
        }
        updatePoller()
    }

    /// The objects whose tip is past what the app has of them: their cursor, and the newest
    /// message any channel brought (a push the extension holds included). (g): only those push
    /// is overdue for — the tip older than `PushVerifier.overdueAfter` — count; a younger one
    /// may still come by push. A young tip left so is owed by push (`PushWatch.leftToPush`): once
    /// push is overdue for it, its object counts whatever newer tip it shows (the tips show only
    /// each object's newest message), until the app has its message or a fetch covered it.
    func unbrought(_ objects: [SyncObject], tips: IndexerTips) -> [SyncObject] {
        objects.filter { object in
            if policy.pacedLooks, let owed = machines.watch.owedTip(object, cursor: cursor(of: object).lastFetchedBlockTime),
               !pushMayBring(owed) { return true }
            let have = self.have(object)
            guard let tip = tips.tip(of: object), have.map({ tip > $0 }) ?? true else { return false }
            guard pushMayBring(tip) else { return true }
            machines.watch.leftToPush(object, tip: tip)
            return false
        }
    }

    /// (g): the objects of which the indexer counts more incoming messages in the look's window
    /// (`lookCounts`: from `reorgRewind` before realtime stopped until push is overdue) than the
    /// app holds: push lost one, though a later message of the object hides it from the tips.
    /// Once a fetch covered the window (its cursor, or `fetchedThrough`, past its end), what is still short
    /// is what no fetch brings (an item the app would not store, an indexer that counts one
    /// too many): that shortfall is `unfillable` for the window, and only more than it counts.
    func countedShort(_ objects: [SyncObject], tips: IndexerTips) -> [SyncObject] {
        guard policy.pacedLooks || policy.closingLook, let window = coverage.lookCounts, tips.counts != nil else { return [] }
        let held = heldIncoming(after: window.after, through: window.through)
        if coverage.unfillable.after != window.after { coverage.unfillable = (window.after, [:]) }
        return objects.filter { object in
            guard let counted = tips.count(of: object) else { return false }
            let short = counted - held[object, default: 0]
            guard short > coverage.unfillable.short[object, default: 0] else { return false }
            let covered = [cursor(of: object).lastFetchedBlockTime, coverage.fetchedThrough[object]].compactMap { $0 }.max()
            if let covered, covered >= window.through {
                coverage.unfillable.short[object] = short
                return false
            }
            return true
        }
    }

    /// How many incoming messages of each object the app holds that landed in (after, through]:
    /// each conversation's stored ones, paged back from its newest, and the pushes the
    /// notification extension holds.
    private func heldIncoming(after: Instant, through: Instant) -> [SyncObject: Int] {
        var held: [SyncObject: Set<String>] = [:]
        func hold(_ m: NetworkMessage) {
            guard m.direction == .incoming, m.blockTime > after, m.blockTime <= through else { return }
            held[SyncObject(holding: m), default: []].insert(m.txId)
        }
        let pageSize = 64
        for (conversation, newest) in storeView.lastActivity() where newest > after {
            var before: Instant?
            while true {
                let page = storeView.page(of: conversation, before: before, limit: pageSize)
                page.forEach { hold($0.message) }
                guard page.count >= pageSize, let oldest = page.first?.message.blockTime, oldest > after else { break }
                before = oldest
            }
        }
        storeView.pendingPushes().forEach { hold($0.message) }
        return held.mapValues(\.count)
    }

    /// (g): the window a look counts messages in: from `reorgRewind` before the app last had
    /// realtime to watch (realtime stopped in the foreground, or the app went to the
    /// background), until push is overdue.
    private func countWindow() -> (after: Instant, through: Instant)? {
        guard policy.pacedLooks, let since = machines.connection.notLiveSince ?? machines.connection.backgroundSince else { return nil }
        return (since - settings.reorgRewind, now - machines.verifier.overdueAfter)
    }

    /// The call a look (of (e) or (f)) sends: the tips, counted in `countWindow` under (g),
    /// which `lookCounts` keeps for the answer.
    func lookCall() -> IndexerCall {
        coverage.lookCounts = countWindow()
        let call = coverage.lookCounts.map { IndexerCall.tipCounting(after: $0.after, through: $0.through) } ?? .tip
        counters.requestsByKind[call.kind, default: 0] += 1
        return call
    }

    /// What the app has of the object: its cursor, or the newest message any channel brought.
    private func have(_ object: SyncObject) -> Instant? {
        [cursor(of: object).lastFetchedBlockTime, coverage.newestSeen[object]].compactMap { $0 }.max()
    }

    /// (g): push may still bring a message that landed at `tip`: push is operational, has not
    /// just missed one whose push has not come since (a miss counted in a row, its push not come
    /// late either: a slow push is not what is going on then), and the message is younger than
    /// `PushVerifier.overdueAfter`.
    private func pushMayBring(_ tip: Instant) -> Bool {
        policy.pacedLooks && machines.reliability.state != .disabled && !machines.watch.missedUnpushed(machines.reliability.consecutiveMisses)
            && now - tip < machines.verifier.overdueAfter
    }

    /// (g): a look of (e) answered: what it showed, for the verifier's pace.
    /// A look whose tips are all older than what it covers (`PushVerifier.lookCoversSince`,
    /// less the indexer's lag) showed nothing landed since: it is `quiet`, while push has
    /// given no cause for doubt (operational, not losing, no miss in a row whose push has not
    /// come): a quiet world says nothing of a push that is failing.
    func pushLookAnswered(unbrought: [SyncObject], newestTip: Instant?) {
        handle(machines.watch.judge(now: now))
        let pushes = machines.watch.looked(foundNothingMissing: unbrought.isEmpty, at: now)
        let trusted = machines.reliability.state != .disabled && !machines.watch.losing && !machines.watch.missedUnpushed(machines.reliability.consecutiveMisses)
        let quiet = pushes == 0 && unbrought.isEmpty && trusted && machines.verifier.lookCoversSince.map { since in
            newestTip.map { $0 < since - settings.indexerLagAllowance } ?? true
        } ?? false
        let look: PushVerifier.Look = !unbrought.isEmpty ? .unbrought : quiet ? .quiet : .clean(pushes: pushes)
        handle(machines.verifier.lookAnswered(look, watch: watchView, now: now))
    }

    /// (f): a background refresh looks first: one tip request (the light sync's single flight
    /// and budget hold for it).
    func refreshLook() {
        guard pending.tipOut == nil, runs.isEmpty else {
            let running = runs.first.map { "a \($0.kind.rawValue) sync (\($0.trigger))" } ?? "a tip request"
            emit(.backgroundRefresh("skipped: \(running) is out"))
            return handle(machines.refresh.grantUnused(mode: pushChannel.mode, pushState: machines.reliability.state, now: now))
        }
        let call = lookCall()
        let id = request()
        pending.sent(id, .tip(.refreshLook))
        coverage.lookAskedAt = now
        effects.append(.indexer(id: id, call))
        var why = machines.watch.standing(machines.reliability.state, now: now, background: true).words
        if policy.closingLook, machines.watch.keepsUp(machines.reliability.state, now: now, background: true) {  // (h)
            why += machines.watch.recordCounted ? "; push alone trusted for \(machines.refresh.trustedLookEvery), a look counts what it brought"
                : "; \(machines.watch.uncounted) of its deliveries came with nothing to show a loss beside them: a look counts them"
        }
        emit(.refreshLookAsked(objects: fullSyncObjects().count, why: why))
    }

    /// (f): the look's tips: what moved past its cursor, and what push had not brought.
    func refreshLookReplied(result: Result<Data, TransportError>) {
        let tips: IndexerTips
        do {
            tips = try IndexerTips.read(result.get(), now: now)
        } catch {
            emit(.error(source: "indexer", message: "tip: \(error); the refresh ends"))
            return handle(machines.refresh.lightSyncEnded(mode: pushChannel.mode, pushState: machines.reliability.state, now: now))
        }
        let objects = fullSyncObjects()
        let moved = objects.filter { object in
            guard let tip = tips.tip(of: object) else { return false }
            return cursor(of: object).lastFetchedBlockTime.map { tip > $0 } ?? true
        }.sorted { (tips.tip(of: $0)!, $0.description) > (tips.tip(of: $1)!, $1.description) }
        let short = countedShort(objects, tips: tips)
        let found = unbrought(objects, tips: tips)
        let missing = objects.filter { found.contains($0) || short.contains($0) }
        _ = machines.watch.looked(foundNothingMissing: missing.isEmpty, at: now)
        let through = coverage.lookAskedAt.map { $0 - settings.indexerLagAllowance }
        if moved.isEmpty, let through { provesThrough(through) }  // every object is stored up to its tip
        let before = osRefresh.runId
        handle(machines.refresh.lookAnswered(moved: moved, unbrought: missing, mode: pushChannel.mode, pushState: machines.reliability.state,
                                    pushLosing: machines.watch.losing, now: now))
        if let runId = osRefresh.runId, runId != before, moved.count <= settings.lightSyncConversations, let through {
            coverage.refreshCovers = (runId, through)  // it fetches every object that moved
        }
    }

    /// (b), (f): the app has every incoming message that landed before `through` (a look's tips
    /// and the refresh sync of all that moved said so): the next proof of a gap reads only what
    /// is newer. Only once a full sync has set it in this launch.
    func provesThrough(_ through: Instant) {
        guard let proven = coverage.provenThrough, proven < through else { return }
        coverage.provenThrough = through
    }
}
