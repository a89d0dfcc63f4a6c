import Foundation
import SyncCore

/// Syncs (rule 9): starting, fetching page by page, proving a gap, finishing.
extension Engine {
    /// The most pages of one object a sync follows (25 payments a page: 25 000 payments in one
    /// catch-up; the cursor keeps what was stored, so a retry goes on from there).
    public static let mostPagesASync = 1000

    // MARK: - Syncs (rule 9)

    @discardableResult
    /// `conversations`: how many a light sync covers (rule 14, from `BackgroundRefresh`).
    /// `objects`: what a targeted sync of (d) fetches.
    func startSync(kind: CatchUpGate.SyncKind, trigger: CatchUpTrigger, forced: Bool, conversations: Int = 0,
                           objects given: [SyncObject]? = nil) -> Int {
        if !runs.isEmpty { counters.overlappingSyncs += 1 }
        let objects = given ?? (kind == .full ? fullSyncObjects() : lightSyncObjects(conversations))
        let id = runs.start(kind: kind, trigger: trigger, forced: forced, now: now)
        switch kind {
        case .full: counters.fullSyncs += 1
        case .light: counters.lightSyncs += 1
        case .targeted: counters.targetedSyncs += 1
        }
        machines.poller.syncStarted(now: now)
        emit(.catchUpStarted(trigger: trigger, kind: kind, forced: forced, objects: objects.count))
        if kind == .full { closingLookCovered() }
        fetchAll(objects, runId: id)
        if objects.isEmpty { finish(runId: id, stoppedBy: nil) }
        return id
    }

    func fetchAll(_ objects: [SyncObject], runId: Int) {
        guard !objects.isEmpty else { return }
        afterIndexerLag(.fetch(objects, runId: runId))
    }

    /// A message that landed just before the subscription went live was too early for
    /// realtime and may not be indexed yet: a catch-up asks once the indexer has caught up
    /// with it, `indexerLagAllowance` after the subscription.
    func afterIndexerLag(_ ask: PendingRequests.Held) {
        guard let live = machines.connection.liveSince, now < live + settings.indexerLagAllowance else { return perform(ask) }
        pending.hold(ask, until: live + settings.indexerLagAllowance)
    }

    /// An ask the indexer's lag held, now (unless its sync was stopped meanwhile).
    func perform(_ ask: PendingRequests.Held) {
        switch ask {
        case .fetch(let objects, let runId):
            guard runs[runId] != nil else { return }
            for object in objects {
                let since = cursor(of: object).requestStart(now: now, rewind: settings.reorgRewind)
                fetch(object, since: since, page: 0, runId: runId)
            }
        case .utxoSet(let runId):
            guard runs[runId] != nil else { return }
            counters.requestsByKind["utxo_set", default: 0] += 1
            runs.asked(runId)
            let request = request()
            pending.sent(request, .utxoSet(runId: runId))
            coverage.utxoAskedAt[runId] = now
            effects.append(.requestUtxoSet(id: request, since: coverage.provenThrough.map { $0 - settings.reorgRewind }))
        }
    }

    /// (b): ask the node for the UTXO set, fetch by id the txIds not stored. If the node
    /// cannot answer, the same run becomes a full sync.
    func startTargeted(trigger: CatchUpTrigger, forced: Bool = false) {
        if !runs.isEmpty { counters.overlappingSyncs += 1 }
        let id = runs.start(kind: .targeted, trigger: trigger, forced: forced, now: now)
        counters.targetedSyncs += 1
        machines.poller.syncStarted(now: now)
        emit(.catchUpStarted(trigger: trigger, kind: .targeted, forced: forced, objects: 1))
        closingLookCovered()
        afterIndexerLag(.utxoSet(runId: id))
    }

    func utxoReplied(requestId: Int, result: Result<[String], TransportError>) {
        guard case .utxoSet(let runId)? = pending.answered(requestId), runs[runId] != nil else { return }
        runs.answered(runId)
        switch result {
        case .failure(let error):
            emit(.error(source: "node", message: "UTXO set: \(error); the gap cannot be proven, running a full sync"))
            runs.becameFull(runId)
            counters.targetedSyncs -= 1
            counters.fullSyncs += 1
            fetchAll(fullSyncObjects(), runId: runId)
        case .success(let txIds):
            let requestedAt = now
            // The gap: unspent outputs the store lacks, and outputs the user's sends spent unseen
            // (walked in turn: the set is the address's whole unspent history, not copied again).
            for id in [txIds, coverage.spentUnstored.sorted()].joined() where !has(id) {
                let call = IndexerCall.messageById(id)
                counters.requestsByKind[call.kind, default: 0] += 1
                runs.asked(runId)
                let request = request()
                pending.sent(request, .message(call: call, runId: runId, requestedAt: requestedAt))
                effects.append(.indexer(id: request, call))
            }
        }
        if runs.isDone(runId) { finish(runId: runId, stoppedBy: nil) }
    }

    /// Rule 9: handshakes in and out, contextual messages of every conversation in and out, payments.
    func fullSyncObjects() -> [SyncObject] {
        var objects: [SyncObject] = [.handshakes(.incoming), .handshakes(.outgoing)]
        for c in contacts {
            objects.append(.contextual(c.address, .incoming))
            objects.append(.contextual(c.address, .outgoing))
        }
        objects.append(.payments)
        return objects
    }

    /// Rule 14: incoming contextual messages of the most recently active conversations.
    func lightSyncObjects(_ conversations: Int) -> [SyncObject] {
        let activity = storeView.lastActivity()
        let ranked = contacts.sorted {
            let a = activity[$0.address] ?? .zero, b = activity[$1.address] ?? .zero
            return a == b ? $0.address < $1.address : a > b
        }
        return ranked.prefix(conversations).map { .contextual($0.address, .incoming) }
    }

    func fetch(_ object: SyncObject, since: Instant, page: Int, runId: Int) {
        let call: IndexerCall
        switch object {
        case .handshakes(let d): call = .handshakes(d, since: since, page: page)
        case .contextual(let a, let d): call = .contextual(a, d, since: since, page: page)
        case .payments: call = .payments(since: since, page: page)
        }
        counters.requestsByKind[call.kind, default: 0] += 1
        runs.asked(runId)
        let requestedAt = now
        let request = request()
        pending.sent(request, .page(object: object, call: call, since: since, page: page, runId: runId, requestedAt: requestedAt))
        effects.append(.indexer(id: request, call))
    }

    func indexerReplied(id: Int, result: Result<Data, TransportError>) {
        switch pending.answered(id) {
        case .tip(.poll)?: tipReplied(result: result)
        case .tip(.pushCheck)?: pushCheckReplied(result: result)
        case .tip(.refreshLook)?: refreshLookReplied(result: result)
        case .tip(.closingLook)?: closingLookReplied(result: result)
        case .page(let object, let call, let since, let page, let runId, let requestedAt)?:
            fetchReplied(object, call: call, since: since, page: page, runId: runId, requestedAt: requestedAt, result: result)
        case .message(let call, let runId, let requestedAt)?:
            fetchReplied(nil, call: call, since: .zero, page: 0, runId: runId, requestedAt: requestedAt, result: result)
        case .utxoSet?, nil:
            break  // not the indexer's, or no longer waited for
        }
    }

    func fetchReplied(_ object: SyncObject?, call: IndexerCall, since: Instant, page: Int, runId: Int, requestedAt: Instant,
                              result: Result<Data, TransportError>) {
        guard let run = runs[runId] else {
            return  // the sync was stopped (budget, OS expiry, foreground): its late replies are dropped
        }
        runs.answered(runId)
        switch result {
        case .failure(let error):
            runs.failed(runId)
            emit(.error(source: "indexer", message: "\(call.kind): \(error); cursor of \(object.map(\.description) ?? "none") unchanged"))
        case .success(let data):
            do {
                let reply = try IndexerPage.read(data, for: call, me: me, now: now)
                if !reply.rejected.isEmpty {
                    switch coverage.rejectedItems.judge(reply.rejected) {
                    case .retry(let reason, let strikes):
                        throw WireError("\(reason) (rejected \(strikes) of \(coverage.rejectedItems.attempts) times before it is skipped)")
                    case .skip(let newly):
                        for item in newly {
                            let what = item.txId.map { "message \($0.prefix(8))" } ?? "an item"
                            emit(.error(source: "indexer", message: "\(what) rejected \(coverage.rejectedItems.attempts) times in a row (\(item.reason)); skipped for good, the sync moves on"))
                        }
                    }
                }
                if case .messageById(let id) = call, reply.messages.isEmpty {
                    // (b): the node showed this output, so the message exists; the indexer has
                    // not indexed it yet. The gap is not closed: this catch-up is incomplete.
                    runs.failed(runId)
                    emit(.error(source: "indexer", message: "message_by_id \(id.prefix(8)): not indexed yet; the catch-up is incomplete"))
                }
                let channel: Channel = run.kind == .light ? .background : .fetch
                // A message whose push already reached the notification extension was the
                // app's first from that push, when it arrived: keep that as its first channel.
                let messages = reply.messages.map { m in
                    pushChannel.pendingArrivals[m.txId].map { StoredMessage(message: m, receivedAt: $0, via: .push) }
                        ?? StoredMessage(message: m, receivedAt: now, via: channel)
                }
                // Rule 9: the cursor moves in the same commit as the messages it covers.
                // (A fetch by id, for (b), has no cursor.)
                let move = object.map {
                    CursorMove(object: $0, cursor: self.cursor(of: $0).advanced(
                        coveringUpTo: (reply.messages.map(\.blockTime) + reply.rejected.compactMap(\.blockTime)).max(),
                        requestedAt: requestedAt, indexingLag: settings.indexerLagAllowance))
                }
                // If the write fails, what it carried is kept in memory and shown, but the
                // cursor does not move: the catch-up is incomplete (rule 9) and is retried.
                let fresh = commit(messages, cursor: move, runId: runId)
                runs.stored(runId, fresh.count)
                for m in fresh {
                    announce(m)
                    if m.message.direction == .incoming {
                        // (a): a message first found by a catch-up is push evidence too. If its
                        // push already reached the extension (a refresh in the background), that
                        // push is its match.
                        handle(machines.reliability.fetchedTx(txId: m.txId, from: m.message.conversation, blockTime: m.message.blockTime,
                                                     pushArrivedAt: pushChannel.pendingArrivals[m.txId], now: now))
                    }
                }
                if let object, let next = reply.nextPage {
                    // A page says the next one follows: only page + 1, after a page that held
                    // something, and not past the most a sync follows (an indexer that says
                    // "more" forever would keep the sync going forever). Else the sync stops
                    // here, incomplete (its cursor kept what it stored), and is retried.
                    let page = call.page ?? -1
                    if next == page + 1, !reply.messages.isEmpty, next < Self.mostPagesASync {
                        fetch(object, since: since, page: next, runId: runId)
                    } else {
                        runs.failed(runId)
                        let why = next >= Self.mostPagesASync ? "past the \(Self.mostPagesASync) pages a sync follows"
                            : reply.messages.isEmpty ? "after an empty page" : "not page \(page + 1)"
                        emit(.error(source: "indexer", message: "page \(page) of \(object) says page \(next) follows, \(why); the catch-up is incomplete"))
                    }
                } else if let object {
                    // (g): the object's last page: what the indexer had indexed of it by then
                    // is held, or is what no fetch brings (`countedShort`).
                    coverage.fetchedThrough[object] = requestedAt - settings.indexerLagAllowance
                }
            } catch {
                runs.failed(runId)
                let source = error is WireError ? "indexer" : "storage"
                emit(.error(source: source, message: "\(error); nothing stored, cursor of \(object.map(\.description) ?? "none") unchanged"))
            }
        }
        if runs.isDone(runId) { finish(runId: runId, stoppedBy: nil) }
    }

    func finish(runId: Int, stoppedBy: String?) {
        guard let run = runs.finish(runId) else { return }
        let fromRefresh = osRefresh.runId == runId
        if fromRefresh { osRefresh.runId = nil }
        let succeeded = run.failed == 0 && stoppedBy == nil
        let askedAt = coverage.utxoAskedAt.removeValue(forKey: runId)
        if succeeded {
            // (b): what a complete full sync or proof covered. A full sync's requests found
            // every message indexed when it started (indexing takes up to the allowance); a
            // proof stored every output the node showed when asked.
            let covered: Instant? = switch run.kind {
            case .full: run.startedAt - settings.indexerLagAllowance
            case .targeted: askedAt
            default: nil
            }
            if let covered, coverage.provenThrough.map({ $0 < covered }) ?? true { coverage.provenThrough = covered }
            if run.kind == .targeted, let askedAt { advanceCursorsAfterProof(askedAt: askedAt) }
            if let proof = coverage.refreshCovers, proof.runId == runId { provesThrough(proof.through) }  // (f)
        }
        if coverage.refreshCovers?.runId == runId { coverage.refreshCovers = nil }
        // A fetch of the objects a look named (no UTXO set asked) is no catch-up of a gap: (c) still trails it.
        machines.gate.finished(kind: run.kind, succeeded: succeeded, now: now, foreground: machines.connection.lifecycle == .foreground,
                      forced: run.forced, progressed: run.failed < run.requests, coversAll: run.kind == .full || askedAt != nil)
        counters.errors += run.failed
        emit(.catchUpFinished(trigger: run.trigger, kind: run.kind, stored: run.stored, requests: run.requests,
                              failed: run.failed, took: now - run.startedAt, stoppedBy: stoppedBy))
        handle(machines.poller.syncCompleted(now: now))
        if fromRefresh {
            handle(machines.refresh.lightSyncEnded(mode: pushChannel.mode, pushState: machines.reliability.state, now: now))
        }
        if let again = coverage.reconnectAfterRun, runs.isEmpty {
            coverage.reconnectAfterRun = nil
            if machines.connection.lifecycle == .foreground, machines.connection.liveSince != nil { trigger(again, forced: false) }
        }
    }

    /// (b): a complete proof stored every incoming output that landed before the UTXO set
    /// was asked for (the unspent ones the app lacked were fetched by id, the ones the user's
    /// sends spent were too), so every object of incoming messages is stored up to then
    /// (rule 9's cursor), and the next full sync starts there instead of re-reading hours that
    /// realtime and push already brought. Outgoing objects are the user's own sends, stored
    /// when published; their cursors move only with fetches. Payments are incoming here: the
    /// app sends no payment (a wallet that did would keep `payments` out of this, as outgoing).
    func advanceCursorsAfterProof(askedAt: Instant) {
        let covered = askedAt - settings.indexerLagAllowance
        for object in fullSyncObjects() {
            switch object {
            case .handshakes(.outgoing), .contextual(_, .outgoing): continue
            default: break
            }
            let current = cursor(of: object)
            guard current.lastFetchedBlockTime.map({ $0 < covered }) ?? true else { continue }
            _ = commit([], cursor: CursorMove(object: object, cursor: SyncCursor(lastFetchedBlockTime: covered)))
        }
    }
}
