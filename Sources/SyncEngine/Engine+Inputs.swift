import Foundation
import SyncCore

/// What the app and the world tell the engine: the user's inputs, and the world's callbacks (the `ClientEndpoint` of the ports).
extension Engine {
    // MARK: - Inputs

    /// Cold start of the app process: restore what was learned, register for push if needed.
    /// The OS then makes the app active (`appDidBecomeActive`).
    func launch() {
        emit(.launched(messages: storeView.messageCount(), pushState: machines.reliability.state, mode: pushChannel.mode))
        if presence.relaunched, let debt = machines.gate.owed { emit(.catchUpOwed(kind: debt.kind, forced: debt.forced)) }
        // Messages written before the last quit (or crash) that the network never took go now.
        sends.restore(storeView.outbox())
        retrySends(failedOnly: false)
        conditionsChanged()
        if pushChannel.mode == .remotePush {
            registerToken(reason: pushChannel.tokenStatus == .active ? "launch: refreshing the active token" : "launch: registering for remote push")
        } else if pushChannel.tokenStatus != .none {
            unregisterToken(reason: "launch: mode \(pushChannel.mode.rawValue)")
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
        for id in publication.spent where !has(id) { coverage.spentUnstored.insert(id) }
    }

    /// Mutes or unmutes a contact: no push for it, and it never counts as push evidence.
    func setMuted(_ contact: Address, _ muted: Bool) {
        guard var c = contactsByAddress[contact] else { return }
        c.muted = muted
        upsertContact(c)
        effects.append(.setMuted(contact, muted))
        machines.reliability.contactMuteChanged(contact, muted: muted, now: now)
        emit(.world("\(muted ? "muted" : "unmuted") \(c.handle)"))
    }

    /// Rule 15: switch notification mode; rule 1 re-evaluates push.
    func setMode(_ newMode: NotificationMode) {
        guard newMode != pushChannel.mode else { return }
        let left = pushChannel.mode == .remotePush
        pushChannel.mode = newMode
        emit(.world("notification mode \(newMode.rawValue)"))
        conditionsChanged()
        handle(machines.refresh.conditionsChanged(mode: pushChannel.mode, pushState: machines.reliability.state, now: now))  // rule 14
        if newMode == .remotePush, pushChannel.tokenStatus != .active {
            registerToken(reason: "mode remote-push: registering for remote push")
        } else if left {
            // Leaving remote push stops pushes, as a real client does: no banners in background-fetch or off.
            unregisterToken(reason: "mode \(newMode.rawValue): no more pushes")
        }
        updatePoller()
    }

    /// Rule 15: what banners show (name and text, name only, or nothing).
    func setPreview(_ preview: PreviewMode) {
        guard preview != machines.notifier.preview else { return }
        machines.notifier.preview = preview
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
        storeView.message(txId: txId)
    }

    /// Why the store cannot write (`disk full`), for a status bar; nil while writes land.
    public var storeTrouble: String? { storeView.unsaved.trouble }
    /// Changes kept in memory until the store can write them.
    public var unsavedChanges: Int { storeView.unsaved.count }

    /// A write of the profile's world failed (it shares the store's disk): the same trouble.
    func worldWriteFailed(_ error: Error) {
        storeFailed(error)
    }

    /// The reply to `.retryWorldWrites`: nil when everything the world kept is written.
    func worldWritesRetried(_ error: Error?) {
        if let error {
            storeFailed(error)
        } else if storeView.unsaved.trouble != nil, storeView.retryAt == nil, storeView.unsaved.count == 0, storeView.unsaved.recovered() {
            emit(.storeTrouble(nil, unsaved: storeView.keptBeforeRecovery, retryEvery: Self.storeRetryInterval))
        }
    }

    /// The OS's notification permission changed (rule 1).
    func permissionChanged(_ granted: Bool) {
        pushChannel.permissionGranted = granted
        conditionsChanged()
    }

    func keepaliveAnswered(_ ping: Int) {
        handleConnection { $0.keepaliveAnswered(ping: ping, now: now) }
    }


    // MARK: - ClientEndpoint: what the world tells the app

    func appDidBecomeActive() {
        let first = machines.connection.lifecycle == .launched
        let detail = first ? (presence.relaunched ? "relaunch: a cold start of a saved profile" : "first launch")
            : machines.connection.backgroundSince.map { "after \(now - $0) in background" } ?? ""
        emit(.lifecycle(.foreground, detail: detail))
        handle(machines.refresh.enteredForeground(now: now))
        presence.resuming = machines.connection.lifecycle != .foreground
        processPendingPushes()  // rule 12, before the grace timers that ran out while suspended
        machines.reliability.appResumed()
        machines.watch.appResumed()
        handle(machines.watch.judge(now: now))
        handle(machines.reliability.deadlineReached(now: now))
        presence.resuming = false
        if pushChannel.reregisterWhenActive, pushChannel.mode == .remotePush {
            pushChannel.reregisterWhenActive = false
            registerToken(reason: "app active: token \(pushChannel.tokenStatus.rawValue), registering again")
        }
        machines.closing.enteredForeground(now: now)
        handleConnection { $0.becameActive(now: now) }
        updatePoller()
    }

    func appDidEnterBackground() {
        emit(.lifecycle(.background, detail: "app suspended; realtime can no longer be trusted"))
        handleConnection { $0.enteredBackground(now: now) }
        machines.reliability.appSuspended()
        machines.watch.appSuspended()
        machines.gate.enteredBackground()
        machines.closing.enteredBackground()
        updatePoller()
        handle(machines.refresh.enteredBackground(mode: pushChannel.mode, pushState: machines.reliability.state, now: now))
    }

    func realtimeConnected(connection id: Int) {
        guard id == presence.currentConnection else { return }  // a superseded connect attempt
        handleConnection { $0.connected(now: now) }
    }

    func realtimeConnectFailed(connection id: Int, error: String) {
        guard id == presence.currentConnection else { return }
        handleConnection { $0.connectFailed(now: now, error: error) }
    }

    func realtimeDisconnected(connection id: Int, error: String) {
        guard id == presence.currentConnection else { return }
        handleConnection { $0.disconnected(now: now, error: error) }
    }

    func realtimeNotified(connection id: Int, message: NetworkMessage) {
        guard id == presence.currentConnection else { return }
        store(message, via: .realtime, receivedAt: now)
        if message.direction == .incoming {
            // Rule 2: only incoming messages push could have carried are evidence (the machine judges).
            handle(machines.reliability.realtimeTxSeen(txId: message.txId, from: message.conversation, landedAt: message.blockTime, now: now))
        }
    }

    func pushDelivered(payload: Data) {
        guard let message = decodePush(payload, source: "push") else { return }
        store(message, via: .push, receivedAt: now)
        handle(machines.reliability.pushReceived(txId: message.txId, arrivedAt: now, now: now))
        pushArrived(message)
    }

    func notificationExtensionReceived(payload: Data) {
        guard let message = decodePush(payload, source: "notification extension") else { return }
        let push = PendingPush(message: message, arrivedAt: now)
        pushChannel.pendingArrivals[message.txId] = now
        // The app has it, held by the extension: a look does not count it as push's to bring.
        let object = SyncObject(holding: message)
        if coverage.newestSeen[object].map({ $0 < message.blockTime }) ?? true { coverage.newestSeen[object] = message.blockTime }
        pushArrived(message)
        if !has(message.txId) { pushChannel.pendingUnstored.insert(message.txId) }
        if storeView.unsaved.trouble != nil {
            storeView.unsaved.keep(push)  // in order, behind a removal that may still be owed
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
        guard status != pushChannel.tokenStatus else { return }
        pushChannel.tokenStatus = status
        emit(.tokenStatus(status))
        if status == .expired || status == .invalid {
            pushChannel.reregisterWhenActive = true
            emit(.tokenRegistration("token \(status.rawValue): will register again when the app is next active"))
        }
        conditionsChanged()
    }

    func backgroundRefreshGranted(task: Int) {
        osRefresh.task = task
        emit(.backgroundRefresh("granted by the OS"))
        handle(machines.watch.judge(now: now))  // the app runs: what came due while it was suspended
        handle(machines.refresh.refreshGranted(mode: pushChannel.mode, pushState: machines.reliability.state, keepsUp: machines.watch.keepsUp(machines.reliability.state, now: now, background: true),
                                      recordCounted: machines.watch.recordCounted, standing: machines.watch.standing(machines.reliability.state, now: now, background: true), now: now))
    }

    func backgroundRefreshExpired(task: Int) {
        guard task == osRefresh.task else { return }
        osRefresh.task = nil
        handle(machines.refresh.refreshExpired(now: now))
    }
}
