import Foundation
import SyncCore

/// The pure machines' actions carried out, and the push token and its conditions.
extension Engine {
    // MARK: - Machine actions

    func handle(_ actions: [PushReliability.Action]) {
        for action in actions {
            switch action {
            case .stateChanged(let from, let to, let reason):
                counters.pushStateChanges += 1
                machines.watch.stateChanged(to: to, now: now)
                emit(.pushState(from: from, to: to, reason: reason.words))
                handle(machines.refresh.conditionsChanged(mode: pushChannel.mode, pushState: to, now: now))  // rule 14
                updatePoller()  // (e): rule 13 in remote-push while push is unreliable, and (e)'s checks
            case .observedHit(let txId, let offset, let via):
                emit(.observationHit(txId: txId, pushOffset: offset, via: via))
            case .observedMiss(let txId, let misses, let via):
                machines.watch.missed(txId: txId, startsStreak: misses == 1)
                emit(.observationMiss(txId: txId, consecutiveMisses: misses, threshold: settings.missesToUnreliable, via: via))
            case .observedSuperseded(let txId, let via):
                emit(.observationSuperseded(txId: txId, via: via))
            case .observedHitSuperseded(let txId, let via):
                emit(.observationHitSuperseded(txId: txId, via: via))
            case .startForcedCatchUp:
                if machines.gate.justCaughtUp(now: now, within: settings.pushGrace), runs.isEmpty, let last = machines.gate.lastFullSyncAt {
                    emit(.pushWatch("no forced catch-up: the full one that found these misses finished \(now - last) ago"))
                } else if presence.resuming, runs.isEmpty, machines.gate.deferForcedToRecovery() {
                    emit(.catchUpDeferred(trigger: .pushUnreliable, until: settings.recoveryFallback))
                } else {
                    trigger(.pushUnreliable, forced: true)
                }
            case .reregisterToken:
                registerToken(reason: "re-register: push unreliable")
            case .reregisterSkipped(let ago, let left):
                emit(.tokenRegistration("re-register skipped: last one \(ago) ago, next allowed in \(left)"))
            case .sightingsLetGo:
                break  // said with the path's change (`pushPathChanged`)
            }
        }
    }

    /// Hands the connection machine one input (rules 10–11) and carries out its actions. The
    /// machine owns realtime's liveness (`liveSince`, `notLiveSince`, `lastLiveEndedAt`); when
    /// realtime stops being live in the foreground, what the engine does about it is done here.
    func handleConnection(_ input: (inout ConnectionLifecycle) -> [ConnectionLifecycle.Action]) {
        let wasNotLive = machines.connection.notLiveSince != nil
        let actions = input(&machines.connection)
        if !wasNotLive, machines.connection.notLiveSince != nil { realtimeStopped() }
        handle(actions)
    }

    func handle(_ actions: [ConnectionLifecycle.Action]) {
        for action in actions {
            switch action {
            case .connect(let forced, let reason):
                emit(.realtime(.connecting, reason: (forced ? "forced reconnect, " : "") + reason.words))
                presence.currentConnection = nil  // its id comes back with `.connectionOpened`
                effects.append(.connect(forced: forced))
            case .requestCatchUp(let triggers, _):
                for t in triggers { trigger(t, forced: false) }
            case .realtimeChanged(let state, let reason):
                emit(.realtime(state, reason: reason.words))
            case .ping(let id):
                counters.keepalivePings += 1
                // Without a connection there is nothing to answer: the ping times out.
                guard let current = presence.currentConnection else { break }
                effects.append(.ping(connection: current, ping: id))
            }
        }
        if actions.contains(where: { if case .ping = $0 { false } else { true } }) { updatePoller() }
    }

    func handle(_ actions: [FallbackPoller.Action]) {
        for action in actions {
            switch action {
            case .started(let first, let reason):
                emit(.polling("started (\(reason.words)), first poll " + (first > now ? "in \(first - now)" : "now")))
            case .stopped(let reason):
                emit(.polling("stopped: \(reason.words)"))
            case .scheduled(let at):
                emit(.polling("next poll in \(at - now) (\(settings.pollDelay) after the last sync completed)"))
            case .poll:
                poll()
            }
        }
    }

    /// Rule 13's poll; with (d), while push is not reliable and a full sync is not due, the
    /// indexer's tips first (one request): a sync only of the objects whose tip moved past
    /// their cursors.
    func poll() {
        guard policy.checkTipBeforePoll, machines.reliability.state != .reliable, pending.tipOut == nil, runs.isEmpty, machines.gate.owed?.kind != .full,
              let lastFull = machines.gate.lastFullSyncAt, now - lastFull < policy.fullSyncMaxAge else {
            return trigger(.poll, forced: false)
        }
        counters.requestsByKind[IndexerCall.tip.kind, default: 0] += 1
        let id = request()
        pending.sent(id, .tip(.poll))
        machines.poller.syncStarted(now: now)
        effects.append(.indexer(id: id, .tip))
        emit(.tipAsked(objects: fullSyncObjects().count))
    }

    func tipReplied(result: Result<Data, TransportError>) {
        guard machines.poller.active else { return }
        let tips: IndexerTips
        switch result {
        case .failure(let error):
            emit(.error(source: "indexer", message: "tip: \(error); polling with a sync"))
            return trigger(.poll, forced: false)
        case .success(let data):
            do { tips = try IndexerTips.read(data, now: now) } catch {
                emit(.error(source: "indexer", message: "tip: \(error); polling with a sync"))
                return trigger(.poll, forced: false)
            }
        }
        // Rule 9's cursor: every message of an object up to it is stored, so an object whose
        // newest indexed message is not past it has nothing new.
        let moved = fullSyncObjects().filter { object in
            guard let tip = tips.tip(of: object) else { return false }
            guard let cursor = cursor(of: object).lastFetchedBlockTime else { return true }
            return tip > cursor
        }
        emit(.tipsAnswered(age: tips.latest.map { now - $0 }, moved: moved.map(\.description), of: fullSyncObjects().count))
        if moved.isEmpty {
            counters.tipSkips += 1
            handle(machines.poller.syncCompleted(now: now))
        } else {
            trigger(.poll, forced: false, tipObjects: moved)
        }
    }

    /// (e): the tips against what the app has of each object (its cursor, or the newest
    /// message any channel brought): what moved is what push and realtime have not brought.
    /// (g): only what push is overdue for counts (`unbrought`); a younger message may still come.
    func pushCheckReplied(result: Result<Data, TransportError>) {
        guard machines.verifier.active else { return }
        let tips: IndexerTips
        do {
            tips = try IndexerTips.read(result.get(), now: now)
        } catch {
            machines.verifier.lookFailed(now: now)
            let wait = policy.pacedLooks ? (machines.verifier.nextDeadline.map { $0 - now } ?? machines.verifier.retryWait) : machines.verifier.verifyInterval
            return emit(.error(source: "indexer", message: "tip: \(error); push check again in \(wait)"))
        }
        let objects = fullSyncObjects()
        let short = countedShort(objects, tips: tips)
        let missing = unbrought(objects, tips: tips)
        let moved = objects.filter { missing.contains($0) || short.contains($0) }
        emit(.pushCheckAnswered(age: tips.latest.map { now - $0 }, moved: moved.map(\.description), of: objects.count))
        if policy.pacedLooks { pushLookAnswered(unbrought: moved, newestTip: tips.latest) }
        if !moved.isEmpty { trigger(.pushCheck, forced: false, tipObjects: moved) }
    }

    func handle(_ actions: [BackgroundRefresh.Action]) {
        for action in actions {
            switch action {
            case .request(let earliest, let reason):
                osRefresh.earliest = earliest
                effects.append(.requestBackgroundRefresh(earliest: earliest))
                emit(.backgroundRefresh("requested, earliest in \(earliest - now) (\(reason.words))"))
            case .cancelRequest(let reason):
                osRefresh.earliest = nil
                effects.append(.cancelBackgroundRefresh)
                emit(.backgroundRefresh("request withdrawn: \(reason.words)"))
            case .runLightSync, .runFullSync:
                var conversations = 0
                if case .runLightSync(let n, _) = action { conversations = n }
                refreshSync(kind: action == .runFullSync ? .full : .light, conversations: conversations)
            case .skip(let reason):
                emit(.backgroundRefresh("skipped: \(reason.words)"))
            case .stopLightSync(let reason):
                if let id = osRefresh.runId {
                    finish(runId: id, stoppedBy: reason.words)
                } else if pending.tipOut == .refreshLook {
                    emit(.backgroundRefresh("look stopped: \(reason.words)"))
                }
            case .look:
                refreshLook()
            case .syncMoved(let objects, let reason):
                emit(.backgroundRefresh(reason.words))
                refreshSync(kind: .light, objects: objects)
            }
        }
    }

    /// Rule 14's refresh sync, under rule 8's single flight: a sync that started while the
    /// refresh looked (a manual one, say) holds it, and the grant goes unused.
    func refreshSync(kind: CatchUpGate.SyncKind, conversations: Int = 0, objects: [SyncObject]? = nil) {
        switch machines.gate.lightSyncRequested(now: now, running: runs.first?.running) {
        case .start:
            osRefresh.runId = startSync(kind: kind, trigger: .backgroundRefresh, forced: false, conversations: conversations, objects: objects)
        case .busy(let running):
            emit(.backgroundRefresh("skipped: a \(running.kind.rawValue) sync (\(running.trigger.rawValue)) is running"))
            handle(machines.refresh.grantUnused(mode: pushChannel.mode, pushState: machines.reliability.state, now: now))
        }
    }

    /// `tipObjects`: (d)'s objects whose tip moved, which a targeted sync fetches alone.
    func trigger(_ trigger: CatchUpTrigger, forced: Bool, tipObjects: [SyncObject]? = nil) {
        switch machines.gate.triggered(trigger, forced: forced, pushState: machines.reliability.state, now: now, running: runs.first?.running,
                              foreground: machines.connection.lifecycle == .foreground, realtimeLive: machines.connection.realtime == .live,
                              tipsProved: tipObjects != nil, pushInDoubt: machines.watch.inDoubt || pushLeavesSomeOut || pushPathGap,
                              realtimeSinceProof: realtimeCoversProof) {
        case .start(let t, let forced, let kind):
            if kind == .targeted, let tipObjects {
                startSync(kind: .targeted, trigger: t, forced: forced, objects: tipObjects)
            } else if kind == .targeted {
                startTargeted(trigger: t, forced: forced)
            } else {
                startSync(kind: .full, trigger: t, forced: forced)
            }
        case .join(let t, let running):
            counters.joined += 1
            // The inspector lists who joined a catch-up (a background refresh's light sync is not one).
            if let first = runs.first, first.id != osRefresh.runId { runs.join(first.id, trigger: t) }
            // (g): a targeted sync does not cover this reconnect's gap (the node's or the
            // subscription's): a proof's UTXO set was asked before some of what landed in it, and a
            // fetch of the objects a look named leaves the others out. The reconnect asks again
            // once it ends.
            if policy.pacedLooks, t == .rpcRestored || t == .subscriptionRestart, running.kind == .targeted {
                coverage.reconnectAfterRun = t
            }
            emit(.catchUpJoined(trigger: t, running: "\(running.kind.rawValue) \(running.trigger.rawValue)"))
        case .skip(let t, let ago, let left):
            counters.skipped += 1
            emit(.catchUpSkipped(trigger: t, lastAgo: ago, nextAllowedIn: left))
            if t == .rpcRestored { closingLookOwed() }
        }
    }

    // MARK: - Push token and conditions

    func registerToken(reason: String) {
        emit(.tokenRegistration(reason))
        effects.append(.registerToken)
    }

    func unregisterToken(reason: String) {
        pushChannel.reregisterWhenActive = false
        emit(.tokenRegistration("unregister: " + reason))
        effects.append(.unregisterToken)
    }

    /// The push path closed or opened again: the reliability machine stops counting what push
    /// could not bring. A reconnect after it proves its gap (`pushPathGap`), as while push is in doubt.
    func pushPathChanged(open: Bool) {
        var letGo = 0
        for action in machines.reliability.pushPathChanged(open: open, now: now) {
            if case .sightingsLetGo(let txIds) = action { letGo += txIds.count }
        }
        emit(.pushPath(open: open, letGo: letGo))
    }

    /// The push path was closed since realtime was last live: push cannot have covered the
    /// realtime gap a reconnect closes, however reliable it is.
    var pushPathGap: Bool { machines.reliability.pushPathWasClosed(since: machines.connection.lastLiveEndedAt ?? now) }

    func conditionsChanged() {
        let conditions = PushConditions(mode: pushChannel.mode, permissionGranted: pushChannel.permissionGranted, tokenStatus: pushChannel.tokenStatus)
        handle(machines.reliability.conditionsChanged(conditions, now: now))
    }

    /// Rule 13's poller and (e)'s checks, after any change of lifecycle, realtime, mode or push state.
    func updatePoller() {
        handle(machines.poller.conditionsChanged(lifecycle: machines.connection.lifecycle, realtimeAvailable: !machines.connection.subscriptionUnavailable, mode: pushChannel.mode,
                                        syncRunning: !runs.isEmpty, pushUnreliable: pushFailing,
                                        realtimeGoneSince: machines.connection.notLiveSince, now: now))
        handle(machines.verifier.conditionsChanged(foreground: machines.connection.lifecycle == .foreground, notLiveSince: machines.connection.notLiveSince,
                                          pushState: machines.reliability.state, pushFailing: pushFailing, polling: machines.poller.active, watch: watchView,
                                          now: now))
    }

    func handle(_ actions: [PushVerifier.Action]) {
        for action in actions {
            switch action {
            case .started(let reason): emit(.pushCheck("started: " + reason.words))
            case .stopped(let reason): emit(.pushCheck("stopped: " + reason.words))
            case .check: verifyPush()
            case .scheduled(let at, let reason): emit(.pushCheck(reason.words + (at.map { " (at \($0))" } ?? "")))
            }
        }
    }

    /// (e): one tip request; what moved past what the app has is fetched (`tipReplied`).
    func verifyPush() {
        guard pending.tipOut == nil, runs.isEmpty else {
            return emit(.pushCheck("a sync or a tip request is out; next check in \(machines.verifier.verifyInterval)"))
        }
        let call = lookCall()
        let id = request()
        pending.sent(id, .tip(.pushCheck))
        effects.append(.indexer(id: id, call))
        emit(.pushCheckAsked(objects: fullSyncObjects().count))
    }
}
