// Push reliability — docs/spec.md rules 1–5.
//
// Scores the remote-push channel per message: every push-eligible incoming tx seen on the
// realtime channel is an *observation*; it is a hit when the push with the same txId arrived
// up to `pushLeadTolerance` before or within `pushGrace` after, else a miss once the grace
// has run out.
//
//                     first hit                    3 consecutive misses
//     ┌─────────┐ ───────────────▶ ┌──────────┐ ─────────────────────▶ ┌────────────┐
//     │ unknown │                  │ reliable │ ◀───────────────────── │ unreliable │
//     └─────────┘ ─────────────────┼──────────┼──── first hit ──────── └────────────┘
//          ▲        3 misses ──────┼──────────┼───────────────────────────▲
//          │ conditions met                                     (entering: forced catch-up,
//     ┌──────────┐ ◀── mode not remote-push / no permission /    re-register unless cooled down)
//     │ disabled │     token not active (from any state)
//     └──────────┘
//
// Evidence (rule 2) is only what push could have carried: an incoming tx of a contact that
// was not muted, which landed while push was operational (remote-push mode, permission,
// active token). The machine keeps when push was operational and when each contact was
// muted, so that a tx is judged by the moment it landed, not by the moment it was seen —
// a message that landed while the token was expired and is fetched an hour later is no
// evidence, whatever push does now.
//
// Timers: one grace deadline per pending observation; `nextDeadline` is the earliest. The
// app is suspended until its first foreground and while backgrounded: graces wait for the
// foreground, where pending pushes are processed first (rule 12) and each judged by the
// time it really arrived.
// Persisted (rule 5): state, miss count, last re-register time — see `Persisted`.

public struct PushReliability: Sendable {
    /// What survives a restart (rule 5). The last catch-up time lives in `CatchUpGate.Persisted`.
    public struct Persisted: Hashable, Sendable {
        public var state: PushState
        public var consecutiveMisses: Int
        public var lastReregisterAt: Instant?

        public init(state: PushState = .unknown, consecutiveMisses: Int = 0, lastReregisterAt: Instant? = nil) {
            self.state = state
            self.consecutiveMisses = consecutiveMisses
            self.lastReregisterAt = lastReregisterAt
        }
    }

    /// Why push's state changed (rules 1–4).
    public enum StateReason: Equatable, Sendable {
        /// Rule 1: no longer operational.
        case notOperational(PushConditions.NotOperational)
        /// Rule 1: remote-push, permission granted, token active again.
        case operationalAgain
        /// Rule 3: the push for `txId` arrived `offset` after its message landed (negative:
        /// before), seen `via` realtime or a catch-up.
        case pushArrived(txId: String, offset: Interval, via: EvidenceChannel)
        /// Rule 4: `count` consecutive push-eligible messages without a push within `within`:
        /// `fetched` of the streak found by catch-ups, `seenOnRealtime` on realtime.
        case misses(Int, within: Interval, fetched: Int, seenOnRealtime: Int)
    }

    public enum Action: Equatable, Sendable {
        /// The reliability state changed; `reason` is the human explanation for the log.
        case stateChanged(from: PushState, to: PushState, reason: StateReason)
        /// An observation matched its push. `pushOffset` is push arrival minus realtime
        /// sighting (or, for a fetched tx, its block time): negative when the push led.
        case observedHit(txId: String, pushOffset: Interval, via: EvidenceChannel)
        /// An observation's grace ran out without its push.
        case observedMiss(txId: String, consecutiveMisses: Int, via: EvidenceChannel)
        /// (a): a fetched tx's grace ran out without its push, judged only after a hit on a tx
        /// that landed later: evidence counts in the order it was seen, so it is no miss in a row.
        case observedSuperseded(txId: String, via: EvidenceChannel)
        /// (a): a hit judged late on a tx seen before a miss already counted: it resets nothing.
        case observedHitSuperseded(txId: String, via: EvidenceChannel)
        /// Rule 4: run a catch-up now, ignoring the debounce.
        case startForcedCatchUp
        /// Rule 4: re-register the push token.
        case reregisterToken
        /// Rule 4: a re-register was due but the last one is too recent.
        case reregisterSkipped(lastAgo: Interval, nextAllowedIn: Interval)
        /// The push path closed while these sightings waited for their push: no evidence.
        case sightingsLetGo(txIds: [String])
    }

    public let settings: SyncSettings
    /// Reads `reactsToUnreliable` (rule 4) and `fetchEvidence` (improvement (a)).
    public let policy: SyncPolicy
    public private(set) var state: PushState
    public private(set) var consecutiveMisses: Int
    public private(set) var lastReregisterAt: Instant?
    public private(set) var conditions: PushConditions?

    /// Sightings waiting for their push, oldest first (sightings arrive in time order).
    private var pending: [(txId: String, seenAt: Instant, via: EvidenceChannel)] = []
    /// (a): when the latest hit's tx was seen (a fetched tx: when it landed).
    private var lastHitSeenAt: Instant?
    /// When the tx of the latest miss counted was seen (`hit`'s order of evidence).
    private var lastMissSeenAt: Instant?
    /// The channels of the current run of consecutive misses, for the log.
    private var missStreak: [EvidenceChannel] = []
    /// When push turned operational or not (rule 1's conditions), oldest first; before the
    /// first entry nothing is known, and nothing is evidence.
    private var operationalChanges: [(at: Instant, operational: Bool)] = []
    /// Contacts muted now, and when each contact's mute changed, oldest first.
    private var muted: Set<Address>
    private var muteChanges: [Address: [(at: Instant, muted: Bool)]] = [:]
    /// Spans in which no push could reach the app whatever push did (the networked client's
    /// relay socket closed: its server went away, or the client's network did), oldest first;
    /// the last may still be open (`to` nil).
    private var unheard: [(from: Instant, to: Instant?)] = []
    /// How many changes of each kind are kept: far more than a day of fault keys.
    private let historyLimit = 512
    /// The app is suspended (launched, or backgrounded): no grace runs out until it is active.
    public private(set) var suspended = true
    /// Pushes received and not yet matched, by txId, with their arrival time.
    private var recentPushes: [String: Instant] = [:]
    /// txIds already decided, so a realtime redelivery is not observed twice.
    private var decided: [String: Instant] = [:]
    /// What `prune` forgets, in the order it forgets it, so that a prune costs what it drops
    /// rather than a scan of everything kept (a scan would make a busy day quadratic):
    /// pushes by arrival (not in order: a heap), decisions in the order they were made.
    private var pushExpiry = ExpiryHeap()
    private var decidedOrder: [(at: Instant, txId: String)] = []
    private var decidedHead = 0
    /// The txIds of `pending`, for a membership test that does not walk it.
    private var pendingIds: Set<String> = []

    /// `muted`: the contacts muted when the machine starts.
    public init(settings: SyncSettings = .default, policy: SyncPolicy = .seed, restoring persisted: Persisted = Persisted(),
                muted: Set<Address> = []) {
        self.settings = settings
        self.policy = policy
        self.muted = muted
        self.state = persisted.state
        self.consecutiveMisses = persisted.consecutiveMisses
        self.lastReregisterAt = persisted.lastReregisterAt
    }

    public var persisted: Persisted {
        Persisted(state: state, consecutiveMisses: consecutiveMisses, lastReregisterAt: lastReregisterAt)
    }

    public var pendingObservations: Int { pending.count }

    /// A realtime (or fetched) sighting waiting for its push, as an inspector shows it.
    public struct Sighting: Equatable, Sendable {
        public var txId: String
        public var seenAt: Instant
        /// When it becomes a miss unless its push comes (rule 2's grace).
        public var graceEndsAt: Instant
        public var via: EvidenceChannel

        public init(txId: String, seenAt: Instant, graceEndsAt: Instant, via: EvidenceChannel) {
            self.txId = txId
            self.seenAt = seenAt
            self.graceEndsAt = graceEndsAt
            self.via = via
        }
    }

    /// The observations waiting for their push, oldest first (rule 2).
    public var sightings: [Sighting] {
        pending.map { Sighting(txId: $0.txId, seenAt: $0.seenAt, graceEndsAt: $0.seenAt + settings.pushGrace, via: $0.via) }
    }

    /// Pushes received that no sighting has matched yet (a push may lead by up to 30 s).
    public var unmatchedPushes: Int { recentPushes.count }

    /// The earliest grace deadline among pending observations; none while suspended.
    public var nextDeadline: Instant? {
        guard !suspended else { return nil }
        return pending.first.map { $0.seenAt + settings.pushGrace }
    }

    /// The app went to the background: graces wait (see the overview).
    public mutating func appSuspended() { suspended = true }

    /// The app is active: graces run again. Call `deadlineReached` after the pending pushes
    /// were processed (rule 12), for the graces that ran out meanwhile.
    public mutating func appResumed() { suspended = false }

    /// Rule 1: mode, permission or token status changed (also called once at launch).
    public mutating func conditionsChanged(_ new: PushConditions, now: Instant) -> [Action] {
        conditions = new
        if operationalChanges.last?.operational != new.operational {
            operationalChanges.append((now, new.operational))
            if operationalChanges.count > historyLimit { operationalChanges.removeFirst() }
        }
        if let why = new.whyNotOperational {
            pending.removeAll()
            pendingIds.removeAll()
            guard state != .disabled else { return [] }
            return [transition(to: .disabled, reason: .notOperational(why))]
        }
        guard state == .disabled else { return [] }
        return [transition(to: .unknown, reason: .operationalAgain)]
    }

    /// A push for `txId` arrived at `arrivedAt` (rule 2). `arrivedAt` can be earlier than `now`
    /// when pending pushes stored by the notification extension are processed on foreground
    /// (rule 12): they count with the time they really arrived.
    public mutating func pushReceived(txId: String, arrivedAt: Instant, now: Instant) -> [Action] {
        prune(now: now)
        if pendingIds.contains(txId), let index = pending.firstIndex(where: { $0.txId == txId }) {
            let seen = pending.remove(at: index)
            pendingIds.remove(txId)
            decide(txId, now)
            let offset = arrivedAt - seen.seenAt
            // The app may have been suspended past the grace deadline; judge by arrival time.
            if offset <= settings.pushGrace {
                return hit(txId: txId, offset: offset, via: seen.via, seenAt: seen.seenAt, judgedLate: now - arrivedAt >= settings.pushGrace)
            }
            return miss(txId: txId, via: seen.via, seenAt: seen.seenAt, now: now)
        }
        if decided[txId] == nil {
            recentPushes[txId] = arrivedAt
            pushExpiry.insert(arrivedAt, txId)
        }
        return []
    }

    /// The path that brings pushes to the app closed (`open` false) or opened again. A gap in
    /// it blames no channel: a tx whose push was due while it was closed — it landed within
    /// the grace before the path closed, or while it was closed — is no evidence (rule 2), and
    /// the sightings still waiting for a push due in the gap are let go. What landed in the
    /// gap is the reconnect's catch-up to find (`pushPathWasClosed`), as in any realtime gap.
    public mutating func pushPathChanged(open: Bool, now: Instant) -> [Action] {
        if open {
            if let last = unheard.last, last.to == nil { unheard[unheard.count - 1].to = now }
            return []
        }
        guard unheard.last.map({ $0.to != nil }) ?? true else { return [] }  // closed already
        unheard.append((now, nil))
        if unheard.count > historyLimit { unheard.removeFirst() }
        let letGo = pending.filter { $0.seenAt + settings.pushGrace > now }.map(\.txId)
        guard !letGo.isEmpty else { return [] }
        pending.removeAll { $0.seenAt + settings.pushGrace > now }
        for txId in letGo {
            pendingIds.remove(txId)
            decide(txId, now)
        }
        return [.sightingsLetGo(txIds: letGo)]
    }

    /// Whether the push path was closed at some time from `from` on (through now).
    public func pushPathWasClosed(since from: Instant) -> Bool {
        unheard.contains { $0.to.map { $0 >= from } ?? true }
    }

    /// A contact was muted or unmuted: its txs that land from now on are no evidence (rule 2).
    public mutating func contactMuteChanged(_ contact: Address, muted isMuted: Bool, now: Instant) {
        guard muted.contains(contact) != isMuted else { return }
        if isMuted { muted.insert(contact) } else { muted.remove(contact) }
        muteChanges[contact, default: []].append((now, isMuted))
        if muteChanges[contact]!.count > historyLimit { muteChanges[contact]!.removeFirst() }
    }

    /// Rule 2: a tx is push evidence only if push could have carried it: it landed while push
    /// was operational, its sender was not muted then, and the push path to the app was open
    /// from its landing to the end of its grace (`pushPathChanged`).
    public func pushEligible(from sender: Address, landedAt: Instant) -> Bool {
        guard let change = operationalChanges.last(where: { $0.at <= landedAt }), change.operational else { return false }
        let due = landedAt + settings.pushGrace
        if unheard.contains(where: { $0.from <= due && ($0.to.map { $0 >= landedAt } ?? true) }) { return false }
        return !wasMuted(sender, at: landedAt)
    }

    private func wasMuted(_ contact: Address, at time: Instant) -> Bool {
        guard let changes = muteChanges[contact], let first = changes.first else { return muted.contains(contact) }
        if let change = changes.last(where: { $0.at <= time }) { return change.muted }
        return !first.muted  // before its first change, the opposite of it
    }

    /// An incoming tx from `sender`, which landed at `landedAt`, was seen on the realtime
    /// channel (rule 2). Only push-eligible txs count (see `pushEligible`).
    public mutating func realtimeTxSeen(txId: String, from sender: Address, landedAt: Instant, now: Instant) -> [Action] {
        prune(now: now)
        guard state != .disabled, conditions?.operational ?? false, pushEligible(from: sender, landedAt: landedAt) else { return [] }
        guard decided[txId] == nil, !pendingIds.contains(txId) else {
            return []  // a redelivery of a tx already observed: one observation per tx
        }
        if let pushedAt = recentPushes.removeValue(forKey: txId) {
            let offset = pushedAt - now
            if -offset.milliseconds <= settings.pushLeadTolerance.milliseconds {
                decide(txId, now)
                return hit(txId: txId, offset: offset, via: .realtime, seenAt: now)
            }
            // The push came too long before the sighting to be its match: observe as usual,
            // it will be a miss unless the push comes again.
        }
        pending.append((txId, now, .realtime))
        pendingIds.insert(txId)
        return []
    }

    /// Improvement (a): a push-eligible incoming tx first found by a catch-up is evidence
    /// too. Its push, if one came, is a hit; none, and older than the grace, a miss; younger,
    /// it waits for its push like a realtime sighting (judged from its block time). This is
    /// how the engine learns while backgrounded, where realtime is dead.
    ///
    /// `pushArrivedAt`: its push already reached the notification extension then (a refresh
    /// in the background fetched it before the foreground processed the pending pushes).
    public mutating func fetchedTx(txId: String, from sender: Address, blockTime: Instant, pushArrivedAt: Instant? = nil,
                                   now: Instant) -> [Action] {
        guard policy.fetchEvidence else { return [] }  // (a) is adaptive's
        prune(now: now)
        guard state != .disabled, conditions?.operational ?? false, pushEligible(from: sender, landedAt: blockTime) else { return [] }
        guard decided[txId] == nil, !pendingIds.contains(txId) else { return [] }
        if let pushedAt = pushArrivedAt ?? recentPushes.removeValue(forKey: txId) {
            decide(txId, now)
            let offset = pushedAt - blockTime
            return offset <= settings.pushGrace ? hit(txId: txId, offset: offset, via: .fetch, seenAt: blockTime)
                : miss(txId: txId, via: .fetch, seenAt: blockTime, now: now)
        }
        if now - blockTime >= settings.pushGrace {
            decide(txId, now)
            return miss(txId: txId, via: .fetch, seenAt: blockTime, now: now)
        }
        let i = pending.firstIndex { $0.seenAt > blockTime } ?? pending.count
        pending.insert((txId, blockTime, .fetch), at: i)
        pendingIds.insert(txId)
        return []
    }

    /// Grace deadlines that have passed become misses. A spurious wake-up, or one while
    /// suspended, does nothing.
    public mutating func deadlineReached(now: Instant) -> [Action] {
        guard !suspended else { return [] }
        prune(now: now)
        var actions: [Action] = []
        while let first = pending.first, first.seenAt + settings.pushGrace <= now {
            pending.removeFirst()
            pendingIds.remove(first.txId)
            decide(first.txId, now)
            // A grace that ran out a grace or more ago ran out while the app was suspended.
            let late = now - (first.seenAt + settings.pushGrace) >= settings.pushGrace
            actions += miss(txId: first.txId, via: first.via, seenAt: first.seenAt, judgedLate: late, now: now)
        }
        return actions
    }

    // MARK: - Transitions

    /// Rule 3: a hit resets the miss count and makes `unknown` / `unreliable` reliable at once.
    /// (a): judged late (a push the extension held while suspended), a hit on a tx seen before
    /// the latest miss counted resets nothing: evidence counts in the order it was seen.
    private mutating func hit(txId: String, offset: Interval, via channel: EvidenceChannel, seenAt: Instant, judgedLate: Bool = false) -> [Action] {
        if policy.fetchEvidence, judgedLate, let lastMiss = lastMissSeenAt, seenAt < lastMiss, consecutiveMisses > 0 {
            return [.observedHitSuperseded(txId: txId, via: channel)]
        }
        lastHitSeenAt = max(lastHitSeenAt ?? seenAt, seenAt)
        consecutiveMisses = 0
        missStreak = []
        var actions: [Action] = [.observedHit(txId: txId, pushOffset: offset, via: channel)]
        if state == .unknown || state == .unreliable {
            actions.append(transition(to: .reliable, reason: .pushArrived(txId: txId, offset: offset, via: channel)))
        }
        return actions
    }

    /// Rules 3–4: the third consecutive miss makes any state unreliable; entering it forces a
    /// catch-up and re-registers the token unless that was done less than the cooldown ago.
    /// (a): a fetched tx is often judged late — its grace waits while the app is suspended,
    /// and a refresh fetches what landed long ago — so a miss whose tx was seen before the
    /// latest hit's is no miss in a row: in the order they were seen, that hit came after it.
    /// So is a realtime sighting judged late (`judgedLate`: its grace ran out while the app was
    /// suspended), when a refresh's fetch found a hit meanwhile.
    private mutating func miss(txId: String, via channel: EvidenceChannel, seenAt: Instant, judgedLate: Bool = false,
                               now: Instant) -> [Action] {
        if policy.fetchEvidence, channel == .fetch || judgedLate, let last = lastHitSeenAt, seenAt < last {
            return [.observedSuperseded(txId: txId, via: channel)]
        }
        consecutiveMisses += 1
        lastMissSeenAt = max(lastMissSeenAt ?? seenAt, seenAt)
        missStreak.append(channel)
        if missStreak.count > settings.missesToUnreliable { missStreak.removeFirst() }
        var actions: [Action] = [.observedMiss(txId: txId, consecutiveMisses: consecutiveMisses, via: channel)]
        guard consecutiveMisses >= settings.missesToUnreliable, state != .unreliable else { return actions }
        let fetched = missStreak.filter { $0 == .fetch }.count
        let reason = StateReason.misses(consecutiveMisses, within: settings.pushGrace, fetched: fetched, seenOnRealtime: missStreak.count - fetched)
        actions.append(transition(to: .unreliable, reason: reason))
        guard policy.reactsToUnreliable else { return actions }  // naive does not react
        actions.append(.startForcedCatchUp)
        actions.append(reregisterIfCooledDown(now: now))
        return actions
    }

    private mutating func reregisterIfCooledDown(now: Instant) -> Action {
        if let last = lastReregisterAt, now - last < settings.reregisterCooldown {
            return .reregisterSkipped(lastAgo: now - last, nextAllowedIn: settings.reregisterCooldown - (now - last))
        }
        lastReregisterAt = now
        return .reregisterToken
    }

    private mutating func transition(to new: PushState, reason: StateReason) -> Action {
        let old = state
        state = new
        return .stateChanged(from: old, to: new, reason: reason)
    }

    /// Forgets pushes older than the retention, and (past 256 of them) decisions older than
    /// it: the same entries a filter of both would drop, found from the oldest up.
    private mutating func prune(now: Instant) {
        let horizon = now - settings.observationRetention
        while let oldest = pushExpiry.min, oldest.at < horizon {
            pushExpiry.removeMin()
            if recentPushes[oldest.txId] == oldest.at { recentPushes[oldest.txId] = nil }
        }
        guard decided.count > 256 else { return }
        while decidedHead < decidedOrder.count, decidedOrder[decidedHead].at < horizon {
            let (at, txId) = decidedOrder[decidedHead]
            decidedHead += 1
            if decided[txId] == at { decided[txId] = nil }
        }
        if decidedHead > 4096, decidedHead * 2 > decidedOrder.count {
            decidedOrder.removeFirst(decidedHead)
            decidedHead = 0
        }
    }

    private mutating func decide(_ txId: String, _ now: Instant) {
        decided[txId] = now
        decidedOrder.append((now, txId))
    }
}

