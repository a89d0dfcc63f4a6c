// Catch-up sync gate — docs/spec.md rules 6–8.
//
// Decides whether a trigger starts a catch-up, joins the one running, or is skipped.
//
//     idle ──trigger (allowed)──▶ running(full | light) ──finished──▶ idle
//       │                            │ ▲
//       └─trigger (debounced)─▶ skip │ └── trigger while running: join (rule 8)
//
// The debounce is a comparison with `lastFinishedAt`. Timers: (c)'s trailing catch-up, and
// the retry of a catch-up that did not complete (rule 14: an indexer error stores nothing
// and moves no cursor, rule 9; without a retry nothing would ask again until the next
// foreground). A catch-up that did not complete is *owed* until one of the same kind
// completes: its retries are never debounced, the retry of a forced one is forced, and an
// owed full one is not replaced by a proven gap. Retries back off 30 s, 60 s, 2 min, then
// every 5 min; the backoff starts over whenever a failed catch-up still got some answers
// (the indexer is up and only some replies were bad), so a few broken documents cost 30 s,
// not 5 min. In the background the app is suspended: the retry timer stops, the debt stays,
// and the next foreground's trigger pays it.
// Persisted (rule 5): the time the last catch-up finished, and the catch-up owed.

public struct CatchUpGate: Sendable {
    public struct Persisted: Hashable, Sendable {
        public var lastFinishedAt: Instant?
        public var owed: Owed?
        public init(lastFinishedAt: Instant? = nil, owed: Owed? = nil) {
            self.lastFinishedAt = lastFinishedAt
            self.owed = owed
        }
    }

    /// A catch-up that did not complete, owed until one of the same kind completes (rule 14).
    public struct Owed: Hashable, Sendable {
        public var kind: SyncKind
        /// The catch-up was forced (entering `unreliable`, a manual sync): so are its retries.
        public var forced: Bool
        public init(kind: SyncKind, forced: Bool) {
            self.kind = kind
            self.forced = forced
        }
    }

    public enum SyncKind: String, Sendable {
        /// Rule 9: handshakes, every conversation in and out, payments.
        case full
        /// Improvement (b): the UTXO set's gap, fetched by id.
        case targeted
        /// Rule 14: contextual messages of the most recent conversations, on a time budget.
        case light
    }

    /// A sync running, as the gate and the log speak of it (`SyncRuns` owns the runs).
    public struct Running: Hashable, Sendable {
        public var kind: SyncKind
        public var trigger: CatchUpTrigger
        public var startedAt: Instant
        public var forced = false
        public init(kind: SyncKind, trigger: CatchUpTrigger, startedAt: Instant, forced: Bool = false) {
            self.kind = kind
            self.trigger = trigger
            self.startedAt = startedAt
            self.forced = forced
        }
    }

    public enum Action: Equatable, Sendable {
        /// Start a catch-up of that kind now.
        case start(trigger: CatchUpTrigger, forced: Bool, kind: SyncKind)
        /// A sync is already running: this trigger rides on it (rule 8).
        case join(trigger: CatchUpTrigger, running: Running)
        /// Rule 6: push is reliable and the last catch-up is too recent.
        case skip(trigger: CatchUpTrigger, lastFinishedAgo: Interval, nextAllowedIn: Interval)
    }

    public enum LightAction: Equatable, Sendable {
        /// Start a light sync now.
        case start
        /// A sync is already running; the refresh has nothing to add.
        case busy(running: Running)
    }

    public let settings: SyncSettings
    public let policy: SyncPolicy
    public private(set) var lastFinishedAt: Instant?
    /// Improvement (c): when the trailing catch-up is due.
    public private(set) var trailingDue: Instant?
    /// When the owed catch-up is tried again.
    public private(set) var retryDue: Instant?
    /// The catch-up that did not complete and must still run (rule 14).
    public private(set) var owed: Owed?
    /// (b): when the last complete full catch-up finished.
    public private(set) var lastFullSyncAt: Instant?
    private var failuresInARow = 0
    /// Failed catch-ups in a row: the retry backoff's step.
    public var retriesInARow: Int { failuresInARow }
    /// Delays before retrying a failed foreground catch-up (not in the constants table of docs/spec.md).
    public var retryBackoff: [Interval] = [.seconds(30), .seconds(60), .minutes(2), .minutes(5)]

    public init(settings: SyncSettings = .default, policy: SyncPolicy = .seed, restoring persisted: Persisted = Persisted()) {
        self.settings = settings
        self.policy = policy
        self.lastFinishedAt = persisted.lastFinishedAt
        self.owed = persisted.owed
    }

    public var nextDeadline: Instant? { [trailingDue, retryDue].compactMap { $0 }.min() }

    /// Rule 5's state as a relaunch must find it. `lastFinishedAt` is the last catch-up that
    /// *completed*; a catch-up still running is saved as owed (rule 14), so that if the app
    /// quits (or is killed) before it completes, the next launch runs it again, not debounced.
    /// Once it completes the debt is gone, and the next save says so.
    /// `running`: every sync running now (`SyncRuns.all`): one under a gated policy, maybe
    /// several under `naive`.
    public func persisted(running: [Running]) -> Persisted { Persisted(lastFinishedAt: lastFinishedAt, owed: owedIfInterrupted(running: running)) }

    /// The debt a quit now would leave: what is owed, with every catch-up running (not a
    /// light sync) added to it. Under `naive` a full sync may overlap a light one that started
    /// first: the full one is owed all the same (the gate once kept only the first run, and a
    /// quit then left nothing owed).
    public func owedIfInterrupted(running: [Running]) -> Owed? {
        var debt = owed
        for run in running where run.kind != .light {
            debt = Owed(kind: debt?.kind == .full || run.kind == .full ? .full : run.kind,
                        forced: run.forced || (debt?.forced ?? false))
        }
        return debt
    }

    /// Rules 6–8 for one trigger. `forced` triggers (entering `unreliable`, a manual sync)
    /// ignore the debounce but still never start a second sync. While a catch-up is owed
    /// (rule 14) no trigger is debounced, and the one that starts is forced if the debt is.
    /// A start is of the kind `kindToStart` says. `running`: the sync running now
    /// (`SyncRuns.first`), if any: no default, so no caller can forget it and start a second
    /// sync beside one (rule 8). `tipsProved`: (d)'s tips named the objects that moved, so
    /// the gap is proven without the node. `pushInDoubt`: push missed a message since it was
    /// last found reliable (`PushWatch.inDoubt`), which (c) under (g) asks of a foreground outage.
    public mutating func triggered(_ trigger: CatchUpTrigger, forced: Bool, pushState: PushState, now: Instant, running: Running?,
                                   foreground: Bool = true, realtimeLive: Bool = false, tipsProved: Bool = false,
                                   pushInDoubt: Bool = true, realtimeSinceProof: Bool = false) -> Action {
        guard policy.gated else {
            // naive: every trigger starts its own sync, whatever is running.
            return .start(trigger: trigger, forced: forced, kind: .full)
        }
        if let running {
            return .join(trigger: trigger, running: running)  // rule 8: single flight
        }
        let forced = forced || (owed?.forced ?? false)
        // The tips proved what moved ((d), (e)): a targeted fetch of it, which the debounce,
        // made for catch-ups that fetch everything, does not hold back.
        if !forced, owed == nil, !tipsProved, pushState == .reliable, let left = debounceRemaining(pushState: pushState, now: now) {
            // (g): a reconnect while push loses now and then closes a gap push may not have
            // covered; the UTXO set proves it, and a targeted sync is not what the debounce holds back.
            if policy.pacedLooks, trigger == .rpcRestored, pushInDoubt,
               kindToStart(forced: false, pushState: pushState, foreground: foreground, realtimeLive: realtimeLive, trigger: trigger, now: now) == .targeted {
                return .start(trigger: trigger, forced: false, kind: .targeted)
            }
            // (c): remember to catch up when the debounce ends, if still in the foreground.
            if policy.trailingCatchUp, foreground, trails(trigger, pushInDoubt: pushInDoubt) { trailingDue = now + left }
            return .skip(trigger: trigger, lastFinishedAgo: now - lastFinishedAt!, nextAllowedIn: left)  // rule 6
        }
        let kind = kindToStart(forced: forced, pushState: pushState, foreground: foreground, realtimeLive: realtimeLive,
                               tipsProved: tipsProved, realtimeSinceProof: realtimeSinceProof, trigger: trigger, now: now)
        return .start(trigger: trigger, forced: forced, kind: kind)  // rules 6–7
    }

    /// (g): rule 4's forced catch-up on entering `unreliable` is already done when a complete
    /// full catch-up finished within `within` (the grace): the misses came from what it fetched,
    /// and it fetched everything. Nothing owed, under (g) only.
    public func justCaughtUp(now: Instant, within: Interval) -> Bool {
        guard policy.pacedLooks, owed == nil, let last = lastFullSyncAt else { return false }
        return now - last <= within
    }

    /// (g): rule 4's forced catch-up called for as the app resumes (the pending pushes judged,
    /// rule 12) is owed to the foreground's recovery rather than run before it: the reconnect's
    /// catch-up (or rule 11's fallback) then runs full and forced, so one foreground gives one
    /// full sync (rule 8), not one whose requests go before realtime is live and a second one at
    /// live. Under (g) only; returns whether the catch-up is deferred so.
    public mutating func deferForcedToRecovery() -> Bool {
        guard policy.pacedLooks, policy.deferAppActive else { return false }
        owed = Owed(kind: .full, forced: true)
        return true
    }

    /// (c) trails the gap push alone covered. After a background it always does. (g): a
    /// reconnect in the foreground (`rpc-restored`) closes a realtime outage, which (e) watches
    /// once push is overdue; its skip trails only while push is in doubt — a push that has not
    /// missed since it was found reliable is what rule 6 trusts, and the trailing catch-up would
    /// cost a request where seed, which trusts it, pays none.
    func trails(_ trigger: CatchUpTrigger, pushInDoubt: Bool) -> Bool {
        !(policy.pacedLooks && trigger == .rpcRestored && !pushInDoubt)
    }

    /// The kind of catch-up a start runs. (b): while push is reliable, realtime is live in
    /// the foreground and a full sync ran within `fullSyncMaxAge`, the gap can be proven from
    /// the node's UTXO set: a targeted sync. Otherwise, or when forced, or while a full one is
    /// owed (rule 14: only a full one pays for it), a full sync. (d): when the indexer's tips
    /// named the objects that moved past their cursors, a targeted sync of those, on the same
    /// terms (not forced, no full one owed, a full sync within `fullSyncMaxAge`).
    /// (g): a reconnect in the foreground (`rpc-restored`) is proven so with push unreliable
    /// too: its gap is the realtime outage it closes, which (e)'s looks or the polls of an
    /// unreliable push covered up to its last minutes, and the UTXO set proves it as well with
    /// push unreliable as reliable (a full sync at every flaky reconnect fetched everything).
    /// Not without push (another mode, no token): rule 13's polls are all there is then, and
    /// they stop with realtime back, so a message that landed after the proof's UTXO set was
    /// asked, while a later reconnect joined it, would wait for no one.
    public func kindToStart(forced: Bool, pushState: PushState, foreground: Bool, realtimeLive: Bool, tipsProved: Bool = false,
                            realtimeSinceProof: Bool = false, trigger: CatchUpTrigger? = nil, now: Instant) -> SyncKind {
        // (g): rule 4's forced catch-up while realtime has been live in the foreground since
        // before the app's last proof: what push failed to bring, realtime brought; the UTXO
        // set proves it, as (b) does for any foreground gap. Its retry (rule 14: one of the same
        // kind pays the debt) proves again, on the same terms: the proof fails when a message
        // realtime brought a minute ago is not indexed yet, and a full sync fetches every object.
        let retriedProof = trigger == .retry && owed?.kind == .targeted
        if policy.pacedLooks, policy.provenGap, forced, trigger == .pushUnreliable || retriedProof, realtimeSinceProof, foreground, realtimeLive,
           owed == nil || retriedProof, let last = lastFullSyncAt, now - last < policy.fullSyncMaxAge {
            return .targeted
        }
        if tipsProved, policy.checkTipBeforePoll || policy.verifyPushWithoutRealtime, !forced, owed?.kind != .full, let last = lastFullSyncAt, now - last < policy.fullSyncMaxAge {
            return .targeted
        }
        let provable = pushState == .reliable || (policy.pacedLooks && trigger == .rpcRestored && pushState == .unreliable)
        guard policy.provenGap, !forced, owed?.kind != .full, provable, foreground, realtimeLive,
              let last = lastFullSyncAt, now - last < policy.fullSyncMaxAge else { return .full }
        return .targeted
    }

    /// The triggers now due: a retry, (c)'s trailing catch-up. A spurious wake-up returns none.
    public mutating func deadlineReached(now: Instant) -> [CatchUpTrigger] {
        var due: [CatchUpTrigger] = []
        if let at = retryDue, at <= now {
            retryDue = nil
            due.append(.retry)
        }
        if let at = trailingDue, at <= now {
            trailingDue = nil
            due.append(.trailing)
        }
        return due
    }

    /// (c) is for the foreground. The app is suspended in the background, so the retry timer
    /// stops; the debt stays (`owed`), and the next foreground's trigger is not debounced.
    public mutating func enteredBackground() {
        trailingDue = nil
        retryDue = nil
    }

    /// Rule 14's light sync shares the single flight with catch-ups. `running`: the sync
    /// running now, if any.
    public func lightSyncRequested(now: Instant, running: Running?) -> LightAction {
        if policy.gated, let running { return .busy(running: running) }
        return .start
    }

    /// A running sync ended. Only a complete catch-up (full, or a proven gap) restarts the
    /// debounce: a light sync covers a few conversations, and a failed one covered nothing.
    /// Rule 14: a catch-up that did not complete is owed, and retried with backoff in the
    /// foreground, until one of the same kind completes (a complete full one pays any debt).
    /// `forced`: the run was forced. `progressed`: some of its requests were answered.
    /// `coversAll`: it fetched or proved every object (a full sync, a proof from the UTXO set),
    /// not only the objects a look named: only such a one leaves (c) nothing to trail.
    public mutating func finished(kind: SyncKind, succeeded: Bool, now: Instant, foreground: Bool = true, forced: Bool = false,
                                  progressed: Bool = false, coversAll: Bool = true) {
        guard kind != .light else { return }
        if succeeded {
            lastFinishedAt = now
            if kind == .full { lastFullSyncAt = now }
            if coversAll { trailingDue = nil }  // (c): caught up, nothing left to trail
            if let debt = owed, debt.kind != kind, kind != .full { return }  // a targeted sync does not pay for a full one
            owed = nil
            retryDue = nil
            failuresInARow = 0
            return
        }
        owed = Owed(kind: owed?.kind == .full ? .full : kind, forced: forced || (owed?.forced ?? false))
        guard foreground else { return }  // suspended: the next foreground pays the debt
        if progressed { failuresInARow = 0 }
        retryDue = now + retryBackoff[min(failuresInARow, retryBackoff.count - 1)]
        failuresInARow += 1
    }

    /// Rule 6's time left before a non-forced trigger may run, or nil when it may run now.
    /// Only meaningful while push is reliable; nil otherwise (rule 7).
    public func debounceRemaining(pushState: PushState, now: Instant) -> Interval? {
        guard pushState == .reliable, let last = lastFinishedAt else { return nil }
        let elapsed = now - last
        return elapsed < settings.catchUpDebounce ? settings.catchUpDebounce - elapsed : nil
    }
}
