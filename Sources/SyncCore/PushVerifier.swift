// Improvement (e), "verify push when realtime cannot", paced by (g) (docs/spec.md#policies).
//
// Rule 2's evidence needs the realtime channel: with realtime down in the foreground, a push
// service that drops everything is never caught, push stays believed `reliable`, and rule 13
// does not poll in `remote-push`. Nothing reaches the user. So while the app is in the
// foreground, realtime has not been live for `verifyInterval` (offline, stale found by the
// keepalive, or connecting that long) and push is not `unreliable`, the engine looks at the
// indexer's tips (one small request). What the tips reveal is fetched by the objects that
// moved; a message push did not bring within the grace is a miss (rule 3 through (a)), so a
// dead push falls to `unreliable`, and polling (rule 13, extended to `remote-push` while push
// is unreliable) takes over. Live realtime again ends it all.
//
// (e) alone looks every `verifyInterval`. (g) looks only when push may have failed: the first
// look `overdueAfter` after realtime stopped (push is overdue then for anything realtime
// missed: a push later than that is a miss whenever it comes); after a look that showed push
// keeping up, the next one twice as far (up to `longestInterval`, `longestLosingInterval` while
// push loses messages lately); after one that found what
// push had not brought, `verifyInterval` later; after one that left a young tip to push,
// once push is overdue for it, if that is sooner (`Watch.oldestOwed`), and as after pushes once
// its push comes (`Watch.pushPaidOwed`); and once push keeps up
// (`PushWatch`), when it has been silent for longer than the traffic makes likely, and once,
// `trustedLookFirst` into the trust: a push that loses 30 % can deliver twenty in a row by
// chance, and a look counts what landed over the whole outage, so the streak ends at that look.
//
//     idle ──foreground, realtime not live, push not unreliable──▶ waiting(due) ──due──▶ look ──answered──▶ waiting(next due)
//       ▲                                                             │
//       └──────────────── realtime live, background, push unreliable ─┘
//
// Timer: `nextDeadline` while waiting. Pure: the engine passes the conditions in.

public struct PushVerifier: Sendable {
    public enum Action: Equatable, Sendable {
        /// Verifying began (the first look is due).
        case started(reason: StartReason)
        /// Verifying ended.
        case stopped(reason: StopReason)
        /// Ask the indexer's tip now.
        case check
        /// (g): a look answered; the next one is due at `at` (nil: only a silence of push would call for one).
        case scheduled(at: Instant?, reason: ScheduleReason)
    }

    /// Why verifying began: realtime not live since `since`, push `pushState`; (g) `paced`
    /// looks, or (e) the tip every `every`.
    public struct StartReason: Equatable, Sendable {
        public var since: Instant
        public var pushState: PushState
        public var paced: Bool
        public var every: Interval
    }

    /// Why verifying ended.
    public enum StopReason: Equatable, Sendable {
        case notInForeground, realtimeLive, pushUnreliablePollingTakesOver, pollingCoversIt
    }

    /// (g): why the next look comes when it does; `next`: the wait after this look.
    public enum ScheduleReason: Equatable, Sendable {
        /// Push brought what the last look left to it.
        case pushPaidOwed(next: Interval)
        /// The tips showed what push had not brought.
        case unbrought(next: Interval)
        case pushKeptUp(next: Interval)
        /// Nothing landed since the last look.
        case quiet(next: Interval)
        case nothingNew(next: Interval)
        /// Push keeps up: a look only if it falls silent, or (not `confirmed`) in `firstLookIn`
        /// to count what it brought.
        case trusted(confirmed: Bool, firstLookIn: Interval)
        /// Push may still bring a message that landed at `landedAt`: the next look when it is overdue.
        case owed(landedAt: Instant)
    }

    /// (g): what a look showed.
    public enum Look: Equatable, Sendable {
        /// A message push had not brought, and is overdue for.
        case unbrought
        /// Nothing push is overdue for; `pushes` came since the last look.
        case clean(pushes: Int)
        /// Nothing landed since the last look (or since realtime stopped, for the first): no
        /// tip is newer than it. Push had nothing to bring, so it kept up with all there was.
        case quiet
    }

    /// What (g) needs of `PushWatch`: whether push keeps up, when its silence would be news,
    /// and the oldest tip a look left to push that the app does not have yet.
    public struct Watch: Equatable, Sendable {
        public var keepsUp: Bool
        public var silenceEndsAt: Instant?
        public var oldestOwed: Instant?
        /// Push lost a message lately (`PushWatch.losing`): trust earned after it is confirmed anew.
        public var losing: Bool
        /// Push paid a tip a look had left to it, since the last look.
        public var pushPaidOwed: Bool
        public init(keepsUp: Bool, silenceEndsAt: Instant?, oldestOwed: Instant? = nil, losing: Bool = false, pushPaidOwed: Bool = false) {
            self.keepsUp = keepsUp
            self.silenceEndsAt = silenceEndsAt
            self.oldestOwed = oldestOwed
            self.losing = losing
            self.pushPaidOwed = pushPaidOwed
        }
    }

    public let policy: SyncPolicy
    /// (e): how long realtime is not live before the first check, and the time between checks;
    /// (g): the time to the next look after one found what push had not brought.
    public var verifyInterval: Interval = .seconds(60)
    /// (g): the first look after realtime stopped: twice the grace, when push is overdue for
    /// anything realtime missed.
    public var overdueAfter: Interval = .seconds(120)
    /// (g): the longest wait between looks while push does not keep up yet.
    public var longestInterval: Interval = .minutes(8)
    /// (g): the longest wait while push loses messages lately (`PushWatch.losing`): a message it
    /// lost waits for the next look, which comes within the foreground's 5 min goal.
    public var longestLosingInterval: Interval = .minutes(4)
    /// (g): the longest a quiet look (nothing landed since the last) stretches the wait to:
    /// twice `overdueAfter`. A quiet world shows push had nothing to bring, not that it works,
    /// so it earns less than the pushes that earn `longestInterval`.
    public var longestQuietInterval: Interval = .minutes(4)
    /// (g): the longest wait before trying again a look that got no answer (the indexer down):
    /// long enough that a downtime is not asked every minute, short enough that the first look
    /// after it comes within a few minutes.
    public var longestRetryInterval: Interval = .minutes(4)
    /// (g): once push keeps up, how long it is trusted alone in an outage before one look counts
    /// what landed since realtime stopped (`trustConfirmed`). A push that loses 30 % delivers
    /// twenty in a row about once in a thousand tries, and a world gives it many tries; a look a
    /// quarter of an hour on ends such a streak (about 7 messages, each lost with 30 %: 0.7^7.5,
    /// one in fourteen passes it). One look per trust earned: within the price of looking, 4 an
    /// hour of realtime outage in the foreground (docs/spec.md §4).
    public var trustedLookFirst: Interval = .minutes(15)
    /// (g): a look since push came to keep up showed it keeping up (false once it loses one).
    private var trustConfirmed = false
    /// (g): the last look saw no push since the one before, and left a young tip to push: its
    /// verdict waits for that push (`Watch.pushPaidOwed`, in `conditionsChanged`).
    private var awaitingOwedPush = false
    /// Checks are running (the first look was due).
    public private(set) var active = false
    /// The next check (or, before the first, when it will be due).
    public private(set) var dueAt: Instant?
    private var notLiveSince: Instant?
    private var pushState: PushState = .unknown
    /// (g): the wait after the last look (nil: `overdueAfter`, before any look answered), and when it was.
    private var wait: Interval?
    public var interval: Interval { wait ?? overdueAfter }
    public private(set) var lastLookAt: Instant?
    /// (g): what the look now out covers: the look before it, or, for the first, when realtime
    /// stopped being live (what landed before, realtime watched). A tip older than this is not news.
    public private(set) var lookCoversSince: Instant?
    /// (g): the last look got no answer (the indexer down): the next one is `verifyInterval`
    /// after it, twice as far after each more in a row (`failedLooks`), up to `longestRetryInterval`.
    private var failedLookAt: Instant?
    private var failedLooks = 0
    /// (g): the wait after a look that got no answer.
    public var retryWait: Interval {
        let doubled = verifyInterval.milliseconds << Int64(min(max(failedLooks - 1, 0), 16))
        return Interval(milliseconds: min(doubled, longestRetryInterval.milliseconds))
    }
    private var watch = Watch(keepsUp: false, silenceEndsAt: nil)

    public init(policy: SyncPolicy = .seed) {
        self.policy = policy
    }

    public var nextDeadline: Instant? { dueAt }

    /// Re-evaluates the conditions; called whenever lifecycle, realtime or push state change,
    /// and (g) whenever push's pace or record does (`watch`).
    /// `notLiveSince`: since when realtime has not been live in this foreground (nil: live).
    /// `polling`: rule 13 polls now (another mode than `remote-push`, or push unreliable):
    /// the polls already fetch what push would have brought.
    /// `pushFailing`: push is unreliable and, under (g), losing messages (`PushWatch.losing`),
    /// not only late: polling makes up for it (nil: `pushState` is unreliable).
    public mutating func conditionsChanged(foreground: Bool, notLiveSince since: Instant?, pushState: PushState, pushFailing: Bool? = nil,
                                           polling: Bool, watch: Watch? = nil, now: Instant) -> [Action] {
        self.pushState = pushState
        if let watch {
            self.watch = watch
            if watch.losing { trustConfirmed = false }
        }
        let failing = pushFailing ?? (pushState == .unreliable)
        guard policy.verifyPushWithoutRealtime, foreground, let since, !failing, !polling else {
            notLiveSince = nil
            dueAt = nil
            guard active else { return [] }
            active = false
            let why: StopReason = !foreground ? .notInForeground : since == nil ? .realtimeLive
                : failing ? .pushUnreliablePollingTakesOver : .pollingCoversIt
            return [.stopped(reason: why)]
        }
        if policy.pacedLooks {
            notLiveSince = since
            // After a look that saw no push but a young tip, the push that comes for it in time
            // is what the look could not see yet: push kept up, so the wait grows as after a look
            // that counted pushes.
            if awaitingOwedPush, self.watch.pushPaidOwed, !self.watch.losing, active {
                awaitingOwedPush = false
                wait = min(interval * 2, longestInterval)
                dueAt = pacedDue(since: since, now: now)
                return [.scheduled(at: dueAt, reason: .pushPaidOwed(next: interval))]
            }
            dueAt = pacedDue(since: since, now: now)
        } else if dueAt == nil || notLiveSince != since {
            notLiveSince = since
            if !active { dueAt = max(now, since + verifyInterval) }
        }
        return []
    }

    /// (g): when the next look is due: not before push is overdue for what realtime missed;
    /// once push keeps up, only when its silence would be news; before, `interval` after the
    /// last look, or sooner if push falls silent.
    private func pacedDue(since: Instant, now: Instant) -> Instant? {
        // Without push (disabled) nothing is overdue: the look comes as (e)'s would.
        let earliest = since + (pushState == .disabled ? verifyInterval : overdueAfter)
        var due: Instant?
        if watch.keepsUp {
            due = watch.silenceEndsAt
            // Trust earned is confirmed once, by a look that counts the outage's messages.
            if !trustConfirmed {
                let confirm = max(lastLookAt ?? since, since) + trustedLookFirst
                due = min(due ?? confirm, confirm)
            }
        } else {
            due = lastLookAt.map { $0 + interval } ?? earliest
            // A silence counts once: after a look that followed it, the interval rules.
            if let silence = watch.silenceEndsAt, silence > (lastLookAt ?? .zero) { due = min(due!, silence) }
            // A tip a look left to push is worth a look once push is overdue for it (once: a
            // look after that counted it).
            if let owed = watch.oldestOwed, owed + overdueAfter > (lastLookAt ?? .zero) { due = min(due!, owed + overdueAfter) }
        }
        // While the indexer does not answer, its retries set the time, whatever the pace.
        if let failed = failedLookAt { due = failed + retryWait }
        return due.map { max($0, earliest, now) }
    }

    /// The deadline passed: check now (the first check starts the checks). (e) alone checks
    /// again `verifyInterval` later; (g) waits for the answer (`lookAnswered`), with
    /// `verifyInterval` as the next check should none come. A spurious wake-up returns nothing.
    public mutating func deadlineReached(now: Instant) -> [Action] {
        guard let due = dueAt, due <= now, let since = notLiveSince else { return [] }
        dueAt = now + verifyInterval
        lookCoversSince = lastLookAt.map { max($0, since) } ?? since
        lastLookAt = now
        guard !active else { return [.check] }
        active = true
        return [.started(reason: StartReason(since: since, pushState: pushState, paced: policy.pacedLooks, every: verifyInterval)), .check]
    }

    /// (g): a look got no answer (the indexer down, a broken reply): the next one is
    /// `verifyInterval` later, whatever the pace, and twice as far after each more failed in a
    /// row, up to `longestRetryInterval` (a down indexer is not asked every minute of its downtime).
    public mutating func lookFailed(now: Instant) {
        guard policy.pacedLooks, active, let since = notLiveSince else { return }
        failedLookAt = now
        failedLooks += 1
        dueAt = pacedDue(since: since, now: now)
    }

    /// (g): a look answered. After a look that found what push had not brought, the next one
    /// comes `verifyInterval` later; after one that showed push keeping up (pushes came, and
    /// nothing push is overdue for), or that showed nothing landed since the last look (a quiet
    /// world: push had nothing to bring, and a look finds nothing there), twice as far as the
    /// last; after one with no push since the last look while messages landed (a dead push whose
    /// messages are still young), as far.
    /// `watch`: push's pace and record after it.
    public mutating func lookAnswered(_ look: Look, watch: Watch, now: Instant) -> [Action] {
        guard policy.pacedLooks, active, let since = notLiveSince else { return [] }
        // A look that showed push keeping up, trusted before it too, confirms the trust.
        if watch.losing || look == .unbrought { trustConfirmed = false } else if watch.keepsUp, self.watch.keepsUp { trustConfirmed = true }
        self.watch = watch
        awaitingOwedPush = false
        failedLookAt = nil
        failedLooks = 0
        let reason: ScheduleReason
        switch look {
        case .unbrought:
            wait = verifyInterval
            reason = .unbrought(next: verifyInterval)
        case .clean(let pushes) where pushes > 0:
            wait = min(interval * 2, watch.losing ? longestLosingInterval : longestInterval)
            reason = watch.keepsUp ? trustedReason : .pushKeptUp(next: interval)
        case .quiet:
            wait = max(interval, min(interval * 2, longestQuietInterval))
            reason = watch.keepsUp ? trustedReason : .quiet(next: interval)
        case .clean:
            awaitingOwedPush = watch.oldestOwed != nil
            reason = .nothingNew(next: interval)
        }
        dueAt = pacedDue(since: since, now: now)
        if let owed = watch.oldestOwed, let due = dueAt, due == owed + overdueAfter, look != .unbrought {
            return [.scheduled(at: dueAt, reason: .owed(landedAt: owed))]
        }
        return [.scheduled(at: dueAt, reason: reason)]
    }

    private var trustedReason: ScheduleReason { .trusted(confirmed: trustConfirmed, firstLookIn: trustedLookFirst) }
}
