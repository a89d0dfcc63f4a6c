import Foundation
import SyncCore

/// Timers and persistence: the end of every input, the inspector, the one deadline, the learned state.
extension Engine {
    // MARK: - Timers and persistence

    /// Ends every input: persist what changed. (The runner re-arms its one wake-up at
    /// `nextDeadline`.)
    func settle() {
        persist()
        for (a, n) in unread.takeChanged() { emit(.unread(conversation: a, count: n)) }
        let current = status
        if current != lastStatus {
            lastStatus = current
            emit(.status(current))
        }
        if inspecting {
            let detail = inspection
            if detail != lastInspection {
                lastInspection = detail
                emit(.inspection(detail))
            }
        }
    }

    func inspect(_ on: Bool) {
        inspecting = on
        lastInspection = nil  // the first look gets the state at once
    }

    /// What an inspector shows, as of now (sent as `.inspection` while inspecting).
    public var inspection: EngineInspection {
        var i = EngineInspection()
        i.push.state = reliability.state
        i.push.misses = reliability.consecutiveMisses
        i.push.missThreshold = settings.missesToUnreliable
        i.push.pending = reliability.sightings
        i.push.unmatchedPushes = reliability.unmatchedPushes
        i.push.suspended = reliability.suspended
        i.push.lastReregisterAt = reliability.lastReregisterAt
        i.push.notOperational = reliability.conditions?.whyNotOperational?.words
        i.gate.lastCatchUpAt = gate.lastFinishedAt
        i.gate.lastFullSyncAt = gate.lastFullSyncAt
        i.gate.debounceEndsAt = gate.debounceRemaining(pushState: reliability.state, now: now).map { now + $0 }
        i.gate.running = runs.all.map {
            .init(kind: $0.kind, trigger: $0.trigger, forced: $0.forced, startedAt: $0.startedAt, outstanding: $0.outstanding,
                  stored: $0.stored, joined: $0.joined)
        }
        i.gate.trailingAt = gate.trailingDue
        i.gate.owed = gate.owed
        i.gate.retryAt = gate.retryDue
        i.gate.retriesInARow = gate.retriesInARow
        i.cursors = fullSyncObjects().map { .init(object: $0, at: cursor(of: $0).lastFetchedBlockTime) }
        i.timers.polling = poller.active
        i.timers.nextPollAt = poller.nextDeadline
        i.timers.refreshRequested = refresh.requested
        i.timers.refreshEarliest = refresh.requested ? refreshEarliest : nil
        i.timers.refreshBudgetEndsAt = refresh.budgetEndsAt
        i.timers.connection = connection.timers
        i.timers.storeRetryAt = storeRetryAt
        return i
    }

    /// What a status bar says, as of now (sent as `.status` whenever it changes).
    public var status: EngineStatus {
        var s = EngineStatus()
        s.lifecycle = connection.lifecycle
        s.realtime = EngineStatus.Realtime(connection.realtime, polling: poller.active)
        s.push = reliability.state
        s.misses = reliability.consecutiveMisses
        s.missThreshold = settings.missesToUnreliable
        s.token = tokenStatus
        s.mode = mode
        s.preview = notifier.preview
        s.lastCatchUpAt = gate.lastFinishedAt
        s.debounceEndsAt = gate.debounceRemaining(pushState: reliability.state, now: now).map { now + $0 }
        s.requests = counters.requests
        s.badge = badge
        s.storeTrouble = unsaved.trouble
        s.unsaved = unsaved.count
        s.unsent = outbox.count
        return s
    }

    /// A deadline came: every timer, in the table's order, acts on what is due (a machine
    /// whose deadline is later does nothing).
    func deadlineFired() {
        for timer in EngineTimer.allCases { fire(timer) }
    }

    /// When `timer` is next due, if it is set.
    func deadline(_ timer: EngineTimer) -> Instant? {
        switch timer {
        case .indexerLag: return pending.nextHeld
        case .pushGrace: return reliability.nextDeadline
        case .connection: return connection.nextDeadline
        case .poll: return poller.nextDeadline
        case .pushCheck: return verifier.nextDeadline
        case .closingLook: return closing.nextDeadline
        case .pushWatch: return watch.nextDeadline
        case .refresh: return refresh.nextDeadline
        case .gate: return gate.nextDeadline
        case .storeRetry: return storeRetryAt
        case .sendRetry: return sends.nextDeadline
        }
    }

    private func fire(_ timer: EngineTimer) {
        switch timer {
        case .indexerLag: for ask in pending.due(by: now) { perform(ask) }
        case .pushGrace: handle(reliability.deadlineReached(now: now))
        case .connection: handleConnection { $0.deadlineReached(now: now) }
        case .poll: handle(poller.deadlineReached(now: now, syncRunning: !runs.isEmpty))
        case .pushCheck: handle(verifier.deadlineReached(now: now))
        case .closingLook: closingLookDue()
        case .pushWatch: handle(watch.deadlineReached(now: now))
        case .refresh: handle(refresh.deadlineReached(now: now))
        case .gate: for t in gate.deadlineReached(now: now) { trigger(t, forced: false) }  // a retry, (c)
        case .storeRetry: if let at = storeRetryAt, at <= now { retryStore() }
        case .sendRetry: for m in sends.due(now: now) { publish(m) }
        }
    }

    /// Saves the learned state when it changed. While the store is in trouble only the
    /// retry writes (a full disk is not asked again at every event).
    func persist() {
        guard unsaved.trouble == nil else { return }
        saveState()
    }

    func saveState() {
        let state = PersistedEngineState(reliability: reliability.persisted, gate: gate.persisted(running: runs.all.map(\.running)), mode: mode,
                                         preview: notifier.preview, tokenStatus: tokenStatus)
        guard writes.needsSaving(state) else { return }
        write(.state(state))
    }

    func emit(_ event: SyncEvent) {
        events.append(TimedEvent(at: now, event: event))
    }
}

/// The engine's timers, one table: the machine or part of the engine that owns each deadline,
/// in the order they act at one instant — the asks the indexer's lag held first, so that a sync
/// is asking before the machines look at it.
enum EngineTimer: CaseIterable {
    /// Asks held until the indexer caught up with a young subscription (`PendingRequests`).
    case indexerLag
    /// A push's grace, rules 2 and 12 (`PushReliability`).
    case pushGrace
    /// The forced reconnect's fallback, reconnects, the keepalive: rules 10 and 11 (`ConnectionLifecycle`).
    case connection
    /// Rule 13's next poll (`FallbackPoller`).
    case poll
    /// (e)'s next check of push (`PushVerifier`).
    case pushCheck
    /// (h)'s look at a realtime outage push was trusted to cover (`ClosingLook`).
    case closingLook
    /// (f): push's record of what it lost, judged in the background (`PushWatch`).
    case pushWatch
    /// Rule 14's refresh budget (`BackgroundRefresh`).
    case refresh
    /// A catch-up owed and retried (rule 14), (c)'s trailing one (`CatchUpGate`).
    case gate
    /// A store in trouble, tried again.
    case storeRetry
    /// The outbox's next try (`SendQueue`).
    case sendRetry
}
