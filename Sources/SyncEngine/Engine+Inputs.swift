import Foundation
import SyncCore

/// What the app and the world tell the engine: the user's inputs, and the world's callbacks (the `ClientEndpoint` of the ports).
extension Engine {
    // MARK: - Inputs

    /// Cold start of the app process: restore what was learned, register for push if needed.
    /// The OS then makes the app active (`appDidBecomeActive`).
    func launch() {
        emit(.launched(messages: storage.messageCount(), pushState: reliability.state, mode: mode))
        if relaunched, let debt = gate.owed { emit(.catchUpOwed(kind: debt.kind, forced: debt.forced)) }
        // Messages written before the last quit (or crash) that the network never took go now.
        sends.restore(storage.outbox())
        retrySends(failedOnly: false)
        conditionsChanged()
        if mode == .remotePush {
            registerToken(reason: tokenStatus == .active ? "launch: refreshing the active token" : "launch: registering for remote push")
        } else if tokenStatus != .none {
            unregisterToken(reason: "launch: mode \(mode.rawValue)")
        }
    }

    public var contacts: [Contact] { contactsByAddress.values.sorted { $0.address < $1.address } }

    public func contact(_ address: Address) -> Contact? { contactsByAddress[address] }

    /// Adds or renames a contact (a conversation).
    /// Contacts the network names: the app adds those it does not know. What it knows it keeps
    /// as the user left it (a name given, a mute).
    func contactsKnown(_ list: [Contact]) {
        for c in list where contactsByAddress[c.address] == nil { upsertContact(c) }
    }

    func rename(_ address: Address, to name: String) {
        guard var c = contactsByAddress[address], c.displayName != name else { return }
        c.displayName = name
        upsertContact(c)
    }

    func upsertContact(_ contact: Contact) {
        contactsByAddress[contact.address] = contact
        emit(.contact(contact))
        write(.contact(contact))
    }

    /// The user writes to a contact: publish, store as sent. A body over
    /// `MessageLimits.maxBodyBytes` is not sent (the compose line and the scenario parser
    /// stop it first; this is the last word): an error event, and nil.
    func send(to contact: Address, text: String) {
        guard text.utf8.count <= MessageLimits.maxBodyBytes else {
            emit(.error(source: "send", message: "a message of \(text.utf8.count) bytes is over the limit of \(MessageLimits.maxBodyBytes); not sent"))
            return
        }
        let m = sends.add(to: contact, body: text, now: now)
        writeOutbox()
        publish(m)
    }

    /// Hands an outbox entry to the network (again).
    func publish(_ m: OutgoingMessage) {
        guard sends.contains(m.localId) else { return }
        let id = request()
        guard let sending = sends.sending(m.localId, request: id) else { return }
        emit(.outgoing(sending))
        effects.append(.publish(id: id, to: m.to, body: m.body, key: m.localId))
    }

    /// Tries the outbox again now: the failed entries ("retry now"), or all of it (a launch).
    func retrySends(failedOnly: Bool) {
        for m in sends.toRetry(failedOnly: failedOnly) { publish(m) }
    }

    func writeOutbox() { write(.outbox(outbox)) }

    /// The network took the message (the reply to `.publish`): store it as sent. Or it
    /// could not: the message stays in the outbox, failed, and is tried again after a wait.
    func published(id: Int, _ result: Result<Publication, TransportError>) {
        guard sends.isInFlight(id) else { return }
        let publication: Publication
        switch result {
        case .success(let p):
            publication = p
        case .failure(let error):
            guard let (failed, wait) = sends.failed(request: id, reason: error.message, final: error.final, now: now) else { return }
            let to = contactsByAddress[failed.to]?.handle ?? failed.to.value
            emit(.sendFailed(to: to, reason: error.message, retryIn: wait, failures: failed.failures))
            emit(.outgoing(failed))
            writeOutbox()
            return
        }
        guard let done = sends.sent(request: id, txId: publication.message.txId) else { return }
        writeOutbox()
        let message = publication.message
        let contact = message.conversation
        emit(.messageSent(txId: message.txId, to: contactsByAddress[contact]?.handle ?? contact.value))
        store(message, via: .sent, receivedAt: now)
        emit(.outgoing(done))
        // (b): an output this send spent leaves the UTXO set, so the set can no longer reveal
        // its message; if the store lacks it, the next proven gap fetches it by id.
        for id in publication.spent where !has(id) { spentUnstored.insert(id) }
    }

    /// Mutes or unmutes a contact: no push for it, and it never counts as push evidence.
    func setMuted(_ contact: Address, _ muted: Bool) {
        guard var c = contactsByAddress[contact] else { return }
        c.muted = muted
        upsertContact(c)
        effects.append(.setMuted(contact, muted))
        reliability.contactMuteChanged(contact, muted: muted, now: now)
        emit(.world("\(muted ? "muted" : "unmuted") \(c.handle)"))
    }

    /// Rule 15: switch notification mode; rule 1 re-evaluates push.
    func setMode(_ newMode: NotificationMode) {
        guard newMode != mode else { return }
        let left = mode == .remotePush
        mode = newMode
        emit(.world("notification mode \(newMode.rawValue)"))
        conditionsChanged()
        handle(refresh.conditionsChanged(mode: mode, pushState: reliability.state, now: now))  // rule 14
        if newMode == .remotePush, tokenStatus != .active {
            registerToken(reason: "mode remote-push: registering for remote push")
        } else if left {
            // Leaving remote push stops pushes, as a real client does: no banners in background-fetch or off.
            unregisterToken(reason: "mode \(newMode.rawValue): no more pushes")
        }
        updatePoller()
    }

    /// Rule 15: what banners show (name and text, name only, or nothing).
    func setPreview(_ preview: PreviewMode) {
        guard preview != notifier.preview else { return }
        notifier.preview = preview
        emit(.world("notification preview \(preview.rawValue)"))
    }

    /// The user asks for a sync now (`S`): forced, it ignores the debounce (rule 6) but still
    /// joins a running sync (rule 8).
    func syncNow() {
        trigger(.manual, forced: true)
    }

    /// The user read a conversation: its count goes to zero now, and the store is told.
    func markRead(_ conversation: Address) {
        unread.read(conversation)
        write(.markRead(conversation))
    }

    /// Unread messages by conversation (those with any), as the engine counts them.
    public var unreadCounts: [Address: Int] { unread.all }

    /// A message the app has: stored, or kept in memory while the store cannot write.
    public func message(txId: String) -> StoredMessage? {
        unsaved.message(txId: txId) ?? storage.message(txId: txId)
    }

    /// Why the store cannot write (`disk full`), for a status bar; nil while writes land.
    public var storeTrouble: String? { unsaved.trouble }
    /// Changes kept in memory until the store can write them.
    public var unsavedChanges: Int { unsaved.count }

    /// A write of the profile's world failed (it shares the store's disk): the same trouble.
    func worldWriteFailed(_ error: Error) {
        storeFailed(error)
    }

    /// The reply to `.retryWorldWrites`: nil when everything the world kept is written.
    func worldWritesRetried(_ error: Error?) {
        if let error {
            storeFailed(error)
        } else if unsaved.trouble != nil, storeRetryAt == nil, unsaved.count == 0, unsaved.recovered() {
            emit(.storeTrouble(nil, unsaved: keptBeforeRecovery, retryEvery: Self.storeRetryInterval))
        }
    }

    /// The OS's notification permission changed (rule 1).
    func permissionChanged(_ granted: Bool) {
        permissionGranted = granted
        conditionsChanged()
    }

    func keepaliveAnswered(_ ping: Int) {
        handleConnection { $0.keepaliveAnswered(ping: ping, now: now) }
    }


    // MARK: - ClientEndpoint: what the world tells the app

    func appDidBecomeActive() {
        let first = connection.lifecycle == .launched
        let detail = first ? (relaunched ? "relaunch: a cold start of a saved profile" : "first launch")
            : connection.backgroundSince.map { "after \(now - $0) in background" } ?? ""
        emit(.lifecycle(.foreground, detail: detail))
        handle(refresh.enteredForeground(now: now))
        resuming = connection.lifecycle != .foreground
        processPendingPushes()  // rule 12, before the grace timers that ran out while suspended
        reliability.appResumed()
        watch.appResumed()
        handle(watch.judge(now: now))
        handle(reliability.deadlineReached(now: now))
        resuming = false
        if reregisterWhenActive, mode == .remotePush {
            reregisterWhenActive = false
            registerToken(reason: "app active: token \(tokenStatus.rawValue), registering again")
        }
        closing.enteredForeground(now: now)
        handleConnection { $0.becameActive(now: now) }
        updatePoller()
    }

    func appDidEnterBackground() {
        emit(.lifecycle(.background, detail: "app suspended; realtime can no longer be trusted"))
        handleConnection { $0.enteredBackground(now: now) }
        reliability.appSuspended()
        watch.appSuspended()
        gate.enteredBackground()
        closing.enteredBackground()
        updatePoller()
        handle(refresh.enteredBackground(mode: mode, pushState: reliability.state, now: now))
    }

    func realtimeConnected(connection id: Int) {
        guard id == currentConnection else { return }  // a superseded connect attempt
        handleConnection { $0.connected(now: now) }
    }

    func realtimeConnectFailed(connection id: Int, error: String) {
        guard id == currentConnection else { return }
        handleConnection { $0.connectFailed(now: now, error: error) }
    }

    func realtimeDisconnected(connection id: Int, error: String) {
        guard id == currentConnection else { return }
        handleConnection { $0.disconnected(now: now, error: error) }
    }

    func realtimeNotified(connection id: Int, message: NetworkMessage) {
        guard id == currentConnection else { return }
        store(message, via: .realtime, receivedAt: now)
        if message.direction == .incoming {
            // Rule 2: only incoming messages push could have carried are evidence (the machine judges).
            handle(reliability.realtimeTxSeen(txId: message.txId, from: message.conversation, landedAt: message.blockTime, now: now))
        }
    }

    func pushDelivered(payload: Data) {
        guard let message = decodePush(payload, source: "push") else { return }
        store(message, via: .push, receivedAt: now)
        handle(reliability.pushReceived(txId: message.txId, arrivedAt: now, now: now))
        pushArrived(message)
    }

    func notificationExtensionReceived(payload: Data) {
        guard let message = decodePush(payload, source: "notification extension") else { return }
        let push = PendingPush(message: message, arrivedAt: now)
        pendingArrivals[message.txId] = now
        // The app has it, held by the extension: a look does not count it as push's to bring.
        let object = SyncObject(holding: message)
        if newestSeen[object].map({ $0 < message.blockTime }) ?? true { newestSeen[object] = message.blockTime }
        pushArrived(message)
        if !has(message.txId) { pendingUnstored.insert(message.txId) }
        if unsaved.trouble != nil {
            unsaved.keep(push)  // in order, behind a removal that may still be owed
        } else {
            write(.appendPendingPush(push))
        }
        notify(message)
    }

    /// A malformed payload is an error event and nothing else: the message it was meant to
    /// carry still arrives by realtime or the next catch-up.
    func decodePush(_ payload: Data, source: String) -> NetworkMessage? {
        do {
            return try PushPayload.decode(payload, me: me, now: now)
        } catch {
            emit(.error(source: source, message: "\(error); ignored, the message will come by another channel"))
            return nil
        }
    }

    func tokenStatusChanged(_ status: TokenStatus) {
        guard status != tokenStatus else { return }
        tokenStatus = status
        emit(.tokenStatus(status))
        if status == .expired || status == .invalid {
            reregisterWhenActive = true
            emit(.tokenRegistration("token \(status.rawValue): will register again when the app is next active"))
        }
        conditionsChanged()
    }

    func backgroundRefreshGranted(task: Int) {
        currentRefreshTask = task
        emit(.backgroundRefresh("granted by the OS"))
        handle(watch.judge(now: now))  // the app runs: what came due while it was suspended
        handle(refresh.refreshGranted(mode: mode, pushState: reliability.state, keepsUp: watch.keepsUp(reliability.state, now: now, background: true),
                                      recordCounted: watch.recordCounted, standing: watch.standing(reliability.state, now: now, background: true), now: now))
    }

    func backgroundRefreshExpired(task: Int) {
        guard task == currentRefreshTask else { return }
        currentRefreshTask = nil
        handle(refresh.refreshExpired(now: now))
    }
}
