// Push's pace and record — the judgement behind adaptive (f) and (g) (docs/spec.md#policies).
//
// Where realtime cannot vouch for push (the foreground with realtime down, the background),
// looking at the indexer is the only way to find a push gone silent, and looking costs a
// request. This machine says when looking, and paying for what looking finds, is worth it,
// from what the app already knows:
//
// - the traffic: the block times of the last `trafficSamples` incoming push-eligible messages,
//   from any channel. Their rate makes a silence likely or not: between two messages of a
//   steady traffic, a gap of `unlikelyGapInMeanGaps` mean gaps (6.9, ln 1000) comes once in
//   a thousand — 13m48s at 30 an hour; in the background, where looks come only at the
//   refreshes the OS grants and a night holds hundreds of gaps, once in ten thousand
//   (9.2, 18m24s). Push silent longer than that (`likelyGap`) is news.
// - push's record, message by message: a push-eligible message push *delivered* (its push
//   came, in time or late), or *lost* (the app has it from realtime or a fetch, and no push
//   came within `lossAfter` of its landing). Rule 2 calls a push past its 60 s grace a miss;
//   here a late push still delivered its message, so a slow push is not a failing one, and
//   only a loss makes adaptive pay to make up for push.
//
// Push *keeps up* while it is operational, has delivered `keepUpEvidence` messages since its
// last loss, and has not been silent for longer than `likelyGap`: nothing needs to look. It
// is *losing* from a loss until it has delivered `keepUpEvidence` messages again: adaptive
// makes up for it then (the background's safety net syncs what moved, rule 13 polls in
// `remote-push`, (c) trails a foreground outage).
//
//     delivering ──delivered keepUpEvidence, not silent──▶ keeping up
//        ▲    ▲                                                │
//        │    └─────────── silent past likelyGap ──────────────┤
//        └── delivered keepUpEvidence ── losing ◀── a loss ─────┘
//
// Timer: `nextDeadline`, when the oldest message without its push becomes a loss; none while
// the app is suspended (judged when it next runs: `judge(now:)`). Pure: the engine tells it
// what arrived.

public struct PushWatch: Sendable {
    public enum Action: Equatable, Sendable {
        /// Push lost this message: no push came within `lossAfter` of its landing.
        case lost(txId: String, landedAt: Instant)
    }

    public let policy: SyncPolicy
    /// How many messages push must deliver since its last loss before it keeps up.
    public var keepUpEvidence = 20
    /// How late a push may come and still have delivered its message: after that long the
    /// message waits for a look as long as if push had lost it.
    public var lossAfter: Interval = .minutes(5)
    /// How many of the latest incoming messages the traffic's rate is taken from.
    public var trafficSamples = 64
    /// A gap of this many mean gaps comes once in a thousand (e^-6.9 ≈ 1/1000): in the
    /// foreground, where a push dead for 15 minutes must be found.
    public var unlikelyGapInMeanGaps = 6.9
    /// In the background, once in ten thousand (e^-9.2): a look there comes at a refresh
    /// the OS grants, and a night holds hundreds of gaps; a dead push costs a grant or two more.
    public var unlikelyGapInBackground = 9.2

    /// Block times of the latest incoming push-eligible messages, oldest first: each counted
    /// once, by the first channel that brought it.
    private var traffic: [Instant] = []
    /// Messages the app has without their push yet, by txId, with when they landed, and the
    /// same earliest first (entries whose push came since are skipped as they reach the top).
    private var waiting: [String: Instant] = [:]
    private var waitingByLanding = ExpiryHeap()
    /// Pushes that came for messages the app had not seen otherwise yet, by txId, with when
    /// they came (forgotten after `lossAfter` twice over: their messages are older than any wait).
    private var pushed: [String: Instant] = [:]
    /// When the last push reached the app or its notification extension.
    public private(set) var lastPushAt: Instant?
    /// When a look last showed push had brought everything: a silence is counted from then too.
    public private(set) var lastQuietLookAt: Instant?
    /// Messages push delivered since its last loss.
    public private(set) var vouched = 0
    /// Push lost a message and has not delivered `keepUpEvidence` since.
    public private(set) var lossSeen = false
    /// (c)'s doubt is made of these: when the latest message push lost had landed; when the
    /// latest deliveries' messages landed (the last `trafficSamples`, oldest first); whether a
    /// delivery landed between two losses (push loses now and then, not in one outage); since
    /// when push has been found reliable (rule 3).
    private var lastLossLandedAt: Instant?
    private var deliveriesLanded: [Instant] = []
    private var lossesInterleaved = false
    private var reliableSince: Instant?
    /// Pushes that came since the last look (`looked()`).
    private var pushesSinceLook = 0
    /// Of `vouched`, the deliveries nothing could have shown a loss beside yet: neither
    /// realtime watching when they came, nor a look since that found nothing missing.
    private var unwatched = 0
    /// Tips a look saw past what the app had of their object and left to push, being young, by
    /// object, oldest first. Push owes each until the app has its message (a tip is the block
    /// time of the object's newest message) or a fetch covered it; a newer tip of the same
    /// object does not pay it (the tips show only each object's newest message), nor does a
    /// newer message push brought (push may have brought that one and lost this).
    private var owed: [SyncObject: [Instant]] = [:]
    /// Push paid a tip a look had left to it, since the last look.
    public private(set) var pushPaidSinceLook = false
    /// The app is suspended: no loss is judged until it runs again.
    public private(set) var suspended = true
    /// (g): the misses (rule 2) of the current streak recorded in this launch, and those of
    /// them whose push has not come since (a push that comes after its grace still brings it).
    private var streakMisses = 0
    private var streakUnpushed: Set<String> = []

    public init(policy: SyncPolicy = .seed) {
        self.policy = policy
    }

    // MARK: inputs

    /// An incoming push-eligible message reached the app by realtime or a fetch (its push, if
    /// it came, is `pushArrived`), which landed at `blockTime`.
    public mutating func messageSeen(txId: String, blockTime: Instant) {
        guard pushed[txId] == nil, waiting[txId] == nil else { return }
        sample(blockTime)
        waiting[txId] = blockTime
        waitingByLanding.insert(blockTime, txId)
    }

    /// One message of the traffic, which landed at `blockTime`.
    private mutating func sample(_ blockTime: Instant) {
        if traffic.count == trafficSamples, blockTime < traffic[0] { return }  // older than what is kept
        let i = traffic.lastIndex { $0 <= blockTime }.map { $0 + 1 } ?? 0
        traffic.insert(blockTime, at: i)
        if traffic.count > trafficSamples { traffic.removeFirst() }
    }

    /// Drops from the top of `waitingByLanding` the messages no longer waiting.
    private mutating func skipDelivered() {
        while let top = waitingByLanding.min, waiting[top.txId] != top.at { waitingByLanding.removeMin() }
    }

    /// A push for `txId`, which landed at `blockTime`, reached the app (foreground) or its
    /// notification extension (background).
    /// `watched`: realtime was live in the foreground, so a loss beside it would be judged.
    public mutating func pushArrived(txId: String, blockTime: Instant, at: Instant, watched: Bool = true) {
        lastPushAt = max(lastPushAt ?? at, at)
        let i = deliveriesLanded.lastIndex { $0 <= blockTime }.map { $0 + 1 } ?? 0
        deliveriesLanded.insert(blockTime, at: i)
        if deliveriesLanded.count > trafficSamples { deliveriesLanded.removeFirst() }
        if waiting.removeValue(forKey: txId) == nil {
            if pushed.updateValue(at, forKey: txId) == nil { sample(blockTime) }
        } else {
            skipDelivered()
        }
        streakUnpushed.remove(txId)
        pushesSinceLook += 1
        if !watched { unwatched += 1 }
        delivered()
        if pushed.count > 256 { pushed = pushed.filter { at - $0.value < lossAfter * 2 } }
    }

    private mutating func delivered() {
        vouched += 1
        forgiveIfEarned()
    }

    /// Push's record rests on `keepUpEvidence` deliveries a loss beside would have shown
    /// (realtime watching, or a look since that found nothing missing), not on pushes alone:
    /// a push that loses 30 % delivers twenty in a row now and then, and only a look tells.
    public var recordCounted: Bool { vouched - unwatched >= keepUpEvidence }

    /// Of the deliveries push's record rests on, those nothing has counted yet (for the log).
    public var uncounted: Int { unwatched }

    /// A loss is forgiven once push's record is counted again (`recordCounted`): pushes alone,
    /// in the background or with realtime down, say nothing of the messages push lost between them.
    private mutating func forgiveIfEarned() {
        guard recordCounted else { return }
        lossSeen = false
        lossesInterleaved = false
    }

    /// Rule 2 counted a miss of `txId` (`startsStreak`: the first of a run of misses).
    public mutating func missed(txId: String, startsStreak: Bool) {
        if startsStreak {
            streakMisses = 0
            streakUnpushed = []
        }
        streakMisses += 1
        streakUnpushed.insert(txId)
    }

    /// (g): of the `consecutiveMisses` push has just had (rule 3), one has not had its push
    /// since, or was counted before this launch: push may have lost it, not only be slow.
    public func missedUnpushed(_ consecutiveMisses: Int) -> Bool {
        consecutiveMisses > 0 && (consecutiveMisses > streakMisses || !streakUnpushed.isEmpty)
    }

    /// A look at the indexer's tips was made (`foundNothingMissing`: it showed push had
    /// brought everything indexed, so push's silence counts from it): how many pushes came
    /// since the last one (a look that shows push keeping up while pushes come can wait
    /// longer for the next).
    public mutating func looked(foundNothingMissing: Bool, at now: Instant) -> Int {
        if foundNothingMissing {
            lastQuietLookAt = now
            unwatched = 0
            forgiveIfEarned()
        }
        defer { pushesSinceLook = 0; pushPaidSinceLook = false }
        return pushesSinceLook
    }

    /// A look saw `object`'s tip at `tip`, past what the app has of it, and left it to push
    /// (young): push owes it from now on.
    public mutating func leftToPush(_ object: SyncObject, tip: Instant) {
        var tips = owed[object] ?? []
        guard !tips.contains(tip) else { return }
        tips.insert(tip, at: tips.firstIndex { $0 > tip } ?? tips.count)
        owed[object] = tips
    }

    /// A message of `object` that landed at `landedAt` reached the app, by any channel: if a
    /// look left it to push, it is paid (`byPush`: by its push).
    public mutating func brought(_ object: SyncObject, landedAt: Instant, byPush: Bool) {
        guard var tips = owed[object], let i = tips.firstIndex(of: landedAt) else { return }
        tips.remove(at: i)
        owed[object] = tips.isEmpty ? nil : tips
        if byPush { pushPaidSinceLook = true }
    }

    /// The oldest tip of `object` push still owes, given its cursor (a fetch stored everything
    /// up to it: what it covers is paid).
    public mutating func owedTip(_ object: SyncObject, cursor: Instant?) -> Instant? {
        guard var tips = owed[object] else { return nil }
        if let cursor { tips.removeAll { $0 <= cursor } }
        owed[object] = tips.isEmpty ? nil : tips
        return tips.first
    }

    /// The oldest tip push still owes, of any object.
    public var oldestOwed: Instant? { owed.values.compactMap(\.first).min() }

    /// Push's state changed (rules 1–3).
    public mutating func stateChanged(to state: PushState, now: Instant) {
        reliableSince = state == .reliable ? now : nil
    }

    /// The app went to the background: no loss is judged while it is suspended.
    public mutating func appSuspended() { suspended = true }
    /// The app runs again (foreground, or a background refresh): `judge` what came due.
    public mutating func appResumed() { suspended = false }

    /// The oldest message without its push becomes a loss then; none while suspended.
    public var nextDeadline: Instant? {
        guard !suspended else { return nil }
        return waitingByLanding.min.map { $0.at + lossAfter }
    }

    /// Messages whose push has not come within `lossAfter` of their landing are losses. Called
    /// at the deadline, and whenever the app runs and decides (a grant, a look's answer).
    public mutating func judge(now: Instant) -> [Action] {
        var due: [(txId: String, landed: Instant)] = []
        while let top = waitingByLanding.min, top.at + lossAfter <= now {
            waitingByLanding.removeMin()
            if waiting[top.txId] == top.at { due.append((top.txId, top.at)) }
            skipDelivered()
        }
        guard !due.isEmpty else { return [] }
        for (txId, landed) in due {
            waiting[txId] = nil
            if let previous = lastLossLandedAt, deliveriesLanded.contains(where: { previous < $0 && $0 < landed }) {
                lossesInterleaved = true
            }
            lastLossLandedAt = max(lastLossLandedAt ?? landed, landed)
        }
        vouched = 0
        unwatched = 0
        lossSeen = true
        return due.map { .lost(txId: $0.txId, landedAt: $0.landed) }
    }

    /// The deadline passed (a spurious wake-up, or one while suspended, judges nothing).
    public mutating func deadlineReached(now: Instant) -> [Action] {
        guard !suspended else { return [] }
        return judge(now: now)
    }

    // MARK: what it says

    /// The traffic's mean gap between messages, once a few are known.
    public var meanGap: Interval? {
        guard traffic.count >= 4, let first = traffic.first, let last = traffic.last, last > first else { return nil }
        return Interval(milliseconds: (last - first).milliseconds / Int64(traffic.count - 1))
    }

    /// A silence of push longer than this is unlikely at the traffic's rate (in the foreground,
    /// or in the `background`).
    public func likelyGap(background: Bool = false) -> Interval? {
        let k = background ? unlikelyGapInBackground : unlikelyGapInMeanGaps
        return meanGap.map { Interval(milliseconds: Int64((Double($0.milliseconds) * k).rounded())) }
    }

    /// The messages an hour the traffic's rate says, for the log.
    public var perHour: Int? { meanGap.map { Int((3_600_000 / Double(max(1, $0.milliseconds))).rounded()) } }

    /// When push's silence becomes news (its last push, or the last look that showed nothing
    /// missing, plus `likelyGap`); nil while unknown.
    public func silenceEndsAt(background: Bool = false) -> Instant? {
        guard let last = [lastPushAt, lastQuietLookAt].compactMap({ $0 }).max(), let gap = likelyGap(background: background) else { return nil }
        return last + gap
    }

    /// Push has been silent for longer than the traffic makes likely.
    public func silentTooLong(now: Instant, background: Bool = false) -> Bool {
        silenceEndsAt(background: background).map { $0 <= now } ?? false
    }

    /// Push lost a message lately (it has not delivered `keepUpEvidence` since): adaptive makes
    /// up for it, and a look that shows nothing missing may still hide a loss behind a later
    /// push (the tips show only each object's newest message).
    public var losing: Bool { lossSeen }

    /// A gap push alone covered may hold a loss, which (c) trails: push is not reliable, or lost
    /// a message that landed after it was last found reliable (rule 3), or loses now and then (a
    /// delivery landed between two of its recent losses). A push that came back whole from an
    /// outage, and has lost nothing since, is what rule 6 trusts.
    public var inDoubt: Bool {
        guard let since = reliableSince else { return true }
        return (lossSeen && lossesInterleaved) || (lastLossLandedAt.map { $0 >= since } ?? false)
    }

    /// Push keeps up: operational, delivered `keepUpEvidence` messages since its last loss, and
    /// not silent for longer than the traffic makes likely. Nothing needs to look.
    public func keepsUp(_ state: PushState, now: Instant, background: Bool = false) -> Bool {
        state != .disabled && !lossSeen && vouched >= keepUpEvidence && !silentTooLong(now: now, background: background)
    }

    /// Where push stands, for the log: why it keeps up or not.
    public enum Standing: Equatable, Sendable {
        case disabled
        /// A loss seen lately; `vouched` of `needed` delivered since.
        case lostLately(vouched: Int, needed: Int)
        /// Silent for longer than `likelyGap`; the last push `lastPushAgo` ago (nil: none yet), at
        /// about `perHour` messages an hour (nil: not known yet).
        case silent(likelyGap: Interval, lastPushAgo: Interval?, perHour: Int?)
        /// `vouched` of the `needed` deliveries so far.
        case delivering(vouched: Int, needed: Int)
        /// Keeps up: `vouched` delivered since its last loss; a silence of `likelyGap` would be news.
        case keepsUp(vouched: Int, lastPushAgo: Interval?, likelyGap: Interval?, perHour: Int?)
    }

    /// Why push keeps up or not, for the log.
    public func standing(_ state: PushState, now: Instant, background: Bool = false) -> Standing {
        let last = lastPushAt.map { now - $0 }
        let gap = likelyGap(background: background)
        if state == .disabled { return .disabled }
        if lossSeen { return .lostLately(vouched: vouched, needed: keepUpEvidence) }
        if silentTooLong(now: now, background: background) { return .silent(likelyGap: gap!, lastPushAgo: last, perHour: perHour) }
        if vouched < keepUpEvidence { return .delivering(vouched: vouched, needed: keepUpEvidence) }
        return .keepsUp(vouched: vouched, lastPushAgo: last, likelyGap: gap, perHour: perHour)
    }
}
