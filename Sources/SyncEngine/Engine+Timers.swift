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
        if current != reports.lastStatus {
            reports.lastStatus = current
            emit(.status(current))
        }
        if reports.inspecting {
            let detail = inspection
            if detail != reports.lastInspection {
                reports.lastInspection = detail
                emit(.inspection(detail))
            }
        }
    }

    func inspect(_ on: Bool) {
        reports.inspecting = on
        reports.lastInspection = nil  // the first look gets the state at once
    }

    /// What an inspector shows, as of now (sent as `.inspection` while inspecting).
    public var inspection: EngineInspection {
        var i = EngineInspection()
        i.push.state = machines.reliability.state
        i.push.misses = machines.reliability.consecutiveMisses
        i.push.missThreshold = settings.missesToUnreliable
        i.push.pending = machines.reliability.sightings
        i.push.unmatchedPushes = machines.reliability.unmatchedPushes
        i.push.suspended = machines.reliability.suspended
        i.push.lastReregisterAt = machines.reliability.lastReregisterAt
        i.push.notOperational = machines.reliability.conditions?.whyNotOperational?.words
        i.gate.lastCatchUpAt = machines.gate.lastFinishedAt
        i.gate.lastFullSyncAt = machines.gate.lastFullSyncAt
        i.gate.debounceEndsAt = machines.gate.debounceRemaining(pushState: machines.reliability.state, now: now).map { now + $0 }
        i.gate.running = runs.all.map {
            .init(kind: $0.kind, trigger: $0.trigger, forced: $0.forced, startedAt: $0.startedAt, outstanding: $0.outstanding,
                  stored: $0.stored, joined: $0.joined)
        }
        i.gate.trailingAt = machines.gate.trailingDue
        i.gate.owed = machines.gate.owed
        i.gate.retryAt = machines.gate.retryDue
        i.gate.retriesInARow = machines.gate.retriesInARow
        i.cursors = fullSyncObjects().map { .init(object: $0, at: cursor(of: $0).lastFetchedBlockTime) }
        i.timers.polling = machines.poller.active
        i.timers.nextPollAt = machines.poller.nextDeadline
        i.timers.refreshRequested = machines.refresh.requested
        i.timers.refreshEarliest = machines.refresh.requested ? osRefresh.earliest : nil
        i.timers.refreshBudgetEndsAt = machines.refresh.budgetEndsAt
        i.timers.connection = machines.connection.timers
        i.timers.storeRetryAt = storeView.retryAt
        return i
    }

    /// What a status bar says, as of now (sent as `.status` whenever it changes).
    public var status: EngineStatus {
        var s = EngineStatus()
        s.lifecycle = machines.connection.lifecycle
        s.realtime = EngineStatus.Realtime(machines.connection.realtime, polling: machines.poller.active)
        s.push = machines.reliability.state
        s.misses = machines.reliability.consecutiveMisses
        s.missThreshold = settings.missesToUnreliable
        s.token = pushChannel.tokenStatus
        s.mode = pushChannel.mode
        s.preview = machines.notifier.preview
        s.lastCatchUpAt = machines.gate.lastFinishedAt
        s.debounceEndsAt = machines.gate.debounceRemaining(pushState: machines.reliability.state, now: now).map { now + $0 }
        s.requests = counters.requests
        s.badge = badge
        s.storeTrouble = storeView.unsaved.trouble
        s.unsaved = storeView.unsaved.count
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
        case .pushGrace: return machines.reliability.nextDeadline
        case .connection: return machines.connection.nextDeadline
        case .poll: return machines.poller.nextDeadline
        case .pushCheck: return machines.verifier.nextDeadline
        case .closingLook: return machines.closing.nextDeadline
        case .pushWatch: return machines.watch.nextDeadline
        case .refresh: return machines.refresh.nextDeadline
        case .gate: return machines.gate.nextDeadline
        case .storeRetry: return storeView.retryAt
        case .sendRetry: return sends.nextDeadline
        }
    }

    private func fire(_ timer: EngineTimer) {
        switch timer {
        case .indexerLag: for ask in pending.due(by: now) { perform(ask) }
        case .pushGrace: handle(machines.reliability.deadlineReached(now: now))
        case .connection: handleConnection { $0.deadlineReached(now: now) }
        case .poll: handle(machines.poller.deadlineReached(now: now, syncRunning: !runs.isEmpty))
        case .pushCheck: handle(machines.verifier.deadlineReached(now: now))
        case .closingLook: closingLookDue()
        case .pushWatch: handle(machines.watch.deadlineReached(now: now))
        case .refresh: handle(machines.refresh.deadlineReached(now: now))
        case .gate: for t in machines.gate.deadlineReached(now: now) { trigger(t, forced: false) }  // a retry, (c)
        case .storeRetry: if let at = storeView.retryAt, at <= now { retryStore() }
        case .sendRetry: for m in sends.due(now: now) { publish(m) }
        }
    }

    /// Saves the learned state when it changed. While the store is in trouble only the
    /// retry writes (a full disk is not asked again at every event).
    func persist() {
        guard storeView.unsaved.trouble == nil else { return }
        saveState()
    }

    func saveState() {
        let state = PersistedEngineState(reliability: machines.reliability.persisted, gate: machines.gate.persisted(running: runs.all.map(\.running)), mode: pushChannel.mode,
                                         preview: machines.notifier.preview, tokenStatus: pushChannel.tokenStatus)
        guard storeView.writes.needsSaving(state) else { return }
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
