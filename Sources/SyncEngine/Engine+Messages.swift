import Foundation
import SyncCore

/// Messages: storing once, the store's writes and their answers, notifications, pending pushes.
extension Engine {
    // MARK: - Messages

    func store(_ message: NetworkMessage, via channel: Channel, receivedAt: Instant) {
        for m in commit([StoredMessage(message: message, receivedAt: receivedAt, via: channel)], cursor: nil) {
            announce(m)
        }
    }

    /// Writes messages and the cursor that covers them as one write (rule 9), carrying along
    /// whatever the store could not take before. Returns the messages new to the app at once,
    /// so that the chat goes on whatever the write's answer. `runId`: a sync whose answer
    /// waits for this write (a failed one leaves it incomplete).
    func commit(_ messages: [StoredMessage], cursor: CursorMove?, runId: Int? = nil) -> [StoredMessage] {
        var seen = Set<String>()
        let fresh = messages.filter { !has($0.txId) && seen.insert($0.txId).inserted }
        for m in fresh {
            storeView.unsaved.writing(m)
            if m.message.direction == .incoming { unread.arrived(in: m.message.conversation) }
        }
        let carried = storeView.unsaved.messages
        storeView.unsaved.messagesStored()
        for m in carried { storeView.unsaved.writing(m) }
        write(.messages(carried + fresh, cursor: cursor), runId: runId)
        return fresh
    }

    /// A sync object's cursor: as written, even if the write has not answered yet.
    func cursor(of object: SyncObject) -> SyncCursor {
        storeView.cursor(object)
    }

    /// Asks the runner to write; `runId` waits for the answer.
    func write(_ w: StoreWrite, runId: Int? = nil) {
        let id = request()
        storeView.writes.asked(id, w, runId: runId)
        if let runId { runs.writing(runId) }
        effects.append(.write(id: id, w))
    }

    /// A write answered.
    func written(id: Int, failure: String?) {
        let stored = failure == nil
        guard let (w, runId) = storeView.writes.answered(id, stored: stored) else { return }
        switch w {
        case .messages(let messages, _):
            storeView.unsaved.written(messages.map(\.txId), stored: stored)
        case .state:
            break
        case .contact(let c): if !stored { storeView.unsaved.keep(c) }
        case .markRead(let a): if !stored { storeView.unsaved.keepRead(a) }
        case .appendPendingPush(let p): if !stored { storeView.unsaved.keep(p) }
        case .removePendingPushes: if !stored { storeView.unsaved.clearPendingPushes = true }
        case .outbox: if !stored { storeView.outboxUnsaved = true }
        }
        if storeView.writes.retryAnswered(id, failed: failure != nil) {
            effects.append(.retryWorldWrites)  // the retry landed; the world's own writes share the disk
        }
        if let failure { storeFailed(reason: failure) }
        if let runId, runs[runId] != nil {
            runs.answered(runId, failed: !stored)
            if runs.isDone(runId) { finish(runId: runId, stoppedBy: nil) }
        }
    }

    /// The app has this message: stored, or kept in memory.
    func has(_ txId: String) -> Bool { storeView.has(txId) }

    /// A write failed: the trouble is logged once, when it starts, and everything unsaved is
    /// tried again every `storeRetryInterval` until it all lands.
    func storeFailed(_ error: Error) { storeFailed(reason: "\(error)") }

    func storeFailed(reason: String) {
        if storeView.unsaved.failed(reason: reason) {
            emit(.storeTrouble(storeView.unsaved.trouble, unsaved: storeView.unsaved.count, retryEvery: Self.storeRetryInterval))
        }
        if storeView.retryAt == nil { storeView.retryAt = now + Self.storeRetryInterval }
    }

    /// Writes everything kept in memory, in order; the trouble ends when all of it lands.
    func retryStore() {
        storeView.retryAt = nil
        storeView.keptBeforeRecovery = storeView.unsaved.keptDuringTrouble
        let before = pending.lastRequestId
        if !storeView.unsaved.messages.isEmpty { _ = commit([], cursor: nil) }
        for (address, c) in storeView.unsaved.contacts.sorted(by: { $0.key < $1.key }) {
            storeView.unsaved.contactStored(address)
            write(.contact(c))
        }
        for a in storeView.unsaved.reads.sorted() {
            storeView.unsaved.readStored(a)
            write(.markRead(a))
        }
        if storeView.unsaved.clearPendingPushes {
            storeView.unsaved.clearPendingPushes = false
            write(.removePendingPushes)
        }
        for p in storeView.unsaved.takePendingPushes() { write(.appendPendingPush(p)) }
        if storeView.outboxUnsaved {
            storeView.outboxUnsaved = false
            writeOutbox()
        }
        saveState()
        // The trouble ends when all of these land, and then the world's own writes.
        let batch = Set((before + 1)...max(before + 1, pending.lastRequestId)).filter { storeView.writes.isInFlight($0) }
        if batch.isEmpty { effects.append(.retryWorldWrites) } else { storeView.writes.retrying(batch) }
    }

    func announce(_ m: StoredMessage) {
        let object = SyncObject(holding: m.message)
        if coverage.newestSeen[object].map({ $0 < m.message.blockTime }) ?? true { coverage.newestSeen[object] = m.message.blockTime }
        broughtOwed(m.message, byPush: m.via == .push)
        trafficSeen(m.message, byPush: m.via == .push)
        pushChannel.pendingUnstored.remove(m.txId)
        coverage.spentUnstored.remove(m.txId)
        let a = m.message.conversation
        emit(.messageStored(m, contact: contactsByAddress[a] ?? Contact(address: a, handle: a.value, displayName: a.value)))
        // On screen in the foreground: read as it is stored (its write is queued before this).
        if a == presence.viewing, m.message.direction == .incoming, machines.connection.lifecycle == .foreground { markRead(a) }
        if m.via == .background, m.message.direction == .incoming,
           pushChannel.pendingArrivals[m.txId] == nil {
            notify(m.message)  // a background refresh found it, and no push had shown it
        }
    }

    /// Rule 15: a banner for an incoming message that reached the backgrounded app.
    func notify(_ message: NetworkMessage) {
        let contact = contactsByAddress[message.conversation]
            ?? Contact(address: message.conversation, handle: message.conversation.value, displayName: message.conversation.value)
        switch machines.notifier.incoming(from: contact, kind: message.kind, text: message.body, mode: pushChannel.mode, now: now) {
        case .show(let banner):
            emit(.banner(banner, badge: badge))
        case .suppressed(let reason):
            emit(.bannerSuppressed(conversation: contact.handle, reason: reason.words))
        }
    }

    /// The badge: every unread message, including those still pending in the extension.
    public var badge: Int {
        unread.total + pushChannel.pendingUnstored.count
    }

    /// Rule 12: pushes the extension stored while backgrounded are stored now and count as
    /// push deliveries at the time they really arrived.
    func processPendingPushes() {
        let pending = storeView.takePendingPushes()
        guard !pending.isEmpty else { return }
        for p in pending {
            store(p.message, via: .push, receivedAt: p.arrivedAt)
            handle(machines.reliability.pushReceived(txId: p.message.txId, arrivedAt: p.arrivedAt, now: now))
        }
        pushChannel.pendingArrivals.removeAll()
        pushChannel.pendingUnstored.removeAll()
        write(.removePendingPushes)
    }
}
