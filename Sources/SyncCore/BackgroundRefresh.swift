// Background refresh — docs/spec.md rule 14.
//
// When the app goes to the background it asks the OS for a refresh every
// `backgroundRefreshInterval` (mode `background-fetch`, or `remote-push` while push is not
// reliable, as a safety net). A granted refresh runs a light sync — contextual messages of
// the most recent conversations — until its budget or the OS's expiry, unless reliable push
// already covers it. Realtime never covers the background: the OS kills the socket there
// without a word (rule 10), so it is not an input here.
//
//     idle ──background, needed──▶ requested ──granted──▶ running ──budget / expiry / done──▶ requested
//       ▲                              │                     │
//       └──────── foreground ──────────┴─────────────────────┘
//
// Any change of push state or mode while backgrounded re-decides the request: push that
// breaks in the background (token expired, mode changed) asks for the safety net at once;
// push that becomes reliable, or mode `off`, withdraws it.
//
// Adaptive (f) watches push beyond the foreground: in `remote-push` the refresh is asked for
// while push is reliable too, since only a look can tell a push that died in the background
// from a quiet one. A grant is let go without a request while push keeps up (`PushWatch`:
// reliable, vouched for since its last miss, not silent for longer than the traffic makes
// likely). Otherwise the refresh looks first — the indexer's tips, one request — and syncs
// the objects that moved past their cursors (any kind: payments and handshakes too, at most
// `lightSyncConversations`, the most recently moved first): all of them while push is not
// reliable (the safety net), and while it is only if the tips show a message push had not
// brought. The light sync's budget holds for the look and the sync together.
//
//     granted ──keeps up──▶ skip
//        └──▶ look ──moved, push not reliable or missing one──▶ sync those ──▶ requested
//               └──────── nothing push had not brought ────────▶ skip ─────────▶ requested
//
// Timer: the budget deadline of a running light sync (or of a look).

public struct BackgroundRefresh: Sendable {
    public enum Action: Equatable, Sendable {
        /// Ask the OS for a refresh no earlier than `earliest`.
        case request(earliest: Instant, reason: RequestReason)
        /// Withdraw any request (foreground, or no longer needed).
        case cancelRequest(reason: CancelReason)
        /// Run a light sync of at most `conversations` conversations until `budgetEndsAt`.
        case runLightSync(conversations: Int, budgetEndsAt: Instant)
        /// naive: run a full sync until the OS expires the task.
        case runFullSync
        /// The grant is not used: something else covers it.
        case skip(reason: SkipReason)
        /// (f): ask the indexer's tips first, within the budget ending at `budgetEndsAt`
        /// (`lookAnswered` then says what to sync).
        case look(budgetEndsAt: Instant)
        /// (f): a light sync of exactly these objects, within the budget already running.
        case syncMoved(objects: [SyncObject], reason: MovedReason)
        /// Stop the running light sync now.
        case stopLightSync(reason: StopReason)
    }

    /// Why a refresh is asked of the OS.
    public enum RequestReason: Equatable, Sendable {
        /// naive: every `interval`.
        case every(Interval)
        case modeBackgroundFetch
        /// (f): push reliable, watched: only a look tells a push that died from a quiet one.
        case watchingPush
        /// Rule 14's safety net while push is not reliable.
        case safetyNet(PushState)
        case nextRefresh
        /// (f): the next one, later while push keeps up.
        case nextRefreshKeepsUp(after: Interval)
    }

    /// Why a request is withdrawn.
    public enum CancelReason: Equatable, Sendable {
        case modeOff, reliablePushCoversBackground, appInForeground
    }

    /// Why a grant or a look's answer is let go.
    public enum SkipReason: Equatable, Sendable {
        case modeOff
        case reliablePushCoversIt
        /// (f): push keeps up, as `PushWatch` says (nil: not said).
        case pushKeepsUp(PushWatch.Standing?)
        case tipsShowNothingNew
        case tipsShowNothingUnbrought
    }

    /// (f): why a look's answer syncs what moved.
    public enum MovedReason: Equatable, Sendable {
        /// Rule 14's safety net: everything that moved (`pushLosing`: push lost messages lately).
        case safetyNet(moved: Int, pushLosing: Bool)
        /// Objects holding a message push has not brought; the `moved` that moved are synced.
        case unbrought([SyncObject], moved: Int)
    }

    /// Why a running light sync stops.
    public enum StopReason: Equatable, Sendable {
        case cameToForeground, expiredByOS
        case budgetUsedUp(Interval)
    }

    /// Where the refresh machinery is: idle in the foreground; in the background with a
    /// refresh asked of the OS or not; or running a granted refresh's light sync.
    private enum Phase: Sendable, Equatable {
        case foreground
        case background(requested: Bool)
        case lightSync(budgetEndsAt: Instant)
    }

    public let settings: SyncSettings
    public let policy: SyncPolicy
    /// (f): the wait asked for after a grant let go because push keeps up: slower than the
    /// safety net's, as a refresh costs the phone a wake-up even when it makes no request.
    public var keepUpInterval: Interval = .minutes(30)
    /// (h): while push keeps up in the background, a grant looks anyway once this long has
    /// passed since the background began or the last look: push alone is trusted with the
    /// night, and a push that loses some of what it should bring keeps up by its pace (the
    /// 70 % it brings); one look an hour, counted (`IndexerCall.tipCounting`), finds the rest.
    /// The price of looking's background term (docs/spec.md §4): a request an hour. A trust
    /// resting on pushes alone (`PushWatch.recordCounted` false) is looked at by the first
    /// grant that finds it, whatever the hour: a push losing 30 % delivers twenty in a row now
    /// and then, and would be trusted an hour with what it lost.
    public var trustedLookEvery: Interval = .hours(1)
    /// (h): since when push alone has been trusted in this background (its start, or the last look).
    public private(set) var trustedSince: Instant?
    private var phase: Phase = .foreground

    /// A refresh is asked of the OS.
    public var requested: Bool { phase == .background(requested: true) }

    /// When the running light sync's budget ends.
    public var budgetEndsAt: Instant? {
        if case .lightSync(let end) = phase { return end }
        return nil
    }

    private var inBackground: Bool { phase != .foreground }

    public init(settings: SyncSettings = .default, policy: SyncPolicy = .seed) {
        self.settings = settings
        self.policy = policy
    }

    /// naive asks every 60 s (the OS grants no more than every 15 min anyway).
    var interval: Interval { policy.naiveBackgroundRefresh ? .seconds(60) : settings.backgroundRefreshInterval }

    func needed(mode: NotificationMode, pushState: PushState) -> Bool {
        if policy.naiveBackgroundRefresh { return mode != .off }
        if policy.watchPushInBackground, mode == .remotePush { return true }  // (f): reliable push is watched too
        return Self.needed(mode: mode, pushState: pushState)
    }

    public var nextDeadline: Instant? { budgetEndsAt }

    /// Rule 14's condition for asking at all.
    public static func needed(mode: NotificationMode, pushState: PushState) -> Bool {
        switch mode {
        case .backgroundFetch: return true
        case .remotePush: return pushState != .reliable
        case .off: return false
        }
    }

    public mutating func enteredBackground(mode: NotificationMode, pushState: PushState, now: Instant) -> [Action] {
        trustedSince = now
        guard needed(mode: mode, pushState: pushState) else {
            phase = .background(requested: false)
            return []
        }
        phase = .background(requested: true)
        return [.request(earliest: now + interval, reason: why(mode: mode, pushState: pushState))]
    }

    /// Rule 14: push state or mode changed. In the background this re-decides the request:
    /// asked for when it became needed, withdrawn when it no longer is. A running light sync
    /// finishes; the request after it follows the new conditions.
    public mutating func conditionsChanged(mode: NotificationMode, pushState: PushState, now: Instant) -> [Action] {
        guard case .background(let requested) = phase else { return [] }
        let need = needed(mode: mode, pushState: pushState)
        if need, !requested {
            phase = .background(requested: true)
            return [.request(earliest: now + interval, reason: why(mode: mode, pushState: pushState))]
        }
        if !need, requested {
            phase = .background(requested: false)
            return [.cancelRequest(reason: mode == .off ? .modeOff : .reliablePushCoversBackground)]
        }
        return []
    }

    private func why(mode: NotificationMode, pushState: PushState) -> RequestReason {
        if policy.naiveBackgroundRefresh { return .every(interval) }
        if mode == .backgroundFetch { return .modeBackgroundFetch }
        if pushState == .reliable { return .watchingPush }
        return .safetyNet(pushState)
    }

    public mutating func enteredForeground(now: Instant) -> [Action] {
        let was = phase
        phase = .foreground
        switch was {
        case .lightSync: return [.stopLightSync(reason: .cameToForeground)]
        case .background(requested: true): return [.cancelRequest(reason: .appInForeground)]
        case .background(requested: false), .foreground: return []
        }
    }

    /// The OS granted a refresh. (f): `keepsUp` and `standing` are `PushWatch`'s say on push now;
    /// (h): `recordCounted`, whether what push keeps up on was counted by a look or realtime.
    public mutating func refreshGranted(mode: NotificationMode, pushState: PushState, keepsUp: Bool = false, recordCounted: Bool = true,
                                        standing: PushWatch.Standing? = nil, now: Instant) -> [Action] {
        if case .background = phase { phase = .background(requested: false) }
        if policy.naiveBackgroundRefresh {
            guard mode != .off else { return [.skip(reason: .modeOff)] }
            return [.runFullSync]  // the engine tracks the sync; the OS expires the task
        }
        if policy.watchPushInBackground, mode != .off {
            // (h): push alone is trusted an hour at most, and not on pushes no look has counted.
            let trustedTooLong = policy.closingLook && (!recordCounted || trustedSince.map { now - $0 >= trustedLookEvery } ?? false)
            if mode == .remotePush, keepsUp, !trustedTooLong {
                return [.skip(reason: .pushKeepsUp(standing))] + rerequest(mode: mode, pushState: pushState, now: now, after: keepUpInterval)
            }
            trustedSince = now
            let end = now + settings.lightSyncBudget
            if inBackground { phase = .lightSync(budgetEndsAt: end) }
            return [.look(budgetEndsAt: end)]
        }
        if mode == .remotePush && pushState == .reliable {
            return [.skip(reason: .reliablePushCoversIt)] + rerequest(mode: mode, pushState: pushState, now: now)
        }
        if mode == .off {
            return [.skip(reason: .modeOff)]
        }
        let end = now + settings.lightSyncBudget
        if inBackground { phase = .lightSync(budgetEndsAt: end) }
        return [.runLightSync(conversations: settings.lightSyncConversations, budgetEndsAt: end)]
    }

    /// (f): the look's tips answered. `moved`: the objects whose tip is past their cursor, the
    /// most recently moved first; `unbrought`: those whose tip is past everything the app has,
    /// push included, and overdue (a message push had not brought). While nothing is known of
    /// push (`unknown`), the mode is not `remote-push`, or push is losing messages
    /// (`PushWatch.losing`: a loss can hide behind a later push, as the tips show only each
    /// object's newest message), everything that moved is synced, as rule 14's safety net;
    /// otherwise — push delivering, if late — only when something push had not brought shows.
    /// A look stopped meanwhile (budget, expiry, foreground) gets nothing.
    public mutating func lookAnswered(moved: [SyncObject], unbrought: [SyncObject], mode: NotificationMode, pushState: PushState,
                                      pushLosing: Bool = false, now: Instant) -> [Action] {
        guard case .lightSync = phase else { return [] }
        let safetyNet = mode != .remotePush || pushState == .unknown || pushState == .disabled || pushLosing
        if !moved.isEmpty, safetyNet || !unbrought.isEmpty {
            let objects = Array(moved.prefix(settings.lightSyncConversations))
            let why: MovedReason = safetyNet ? .safetyNet(moved: moved.count, pushLosing: pushLosing) : .unbrought(unbrought, moved: moved.count)
            return [.syncMoved(objects: objects, reason: why)]
        }
        phase = .background(requested: false)
        return [.skip(reason: moved.isEmpty ? .tipsShowNothingNew : .tipsShowNothingUnbrought)] + rerequest(mode: mode, pushState: pushState, now: now)
    }

    /// The OS expires the refresh task (30 s after the grant).
    public mutating func refreshExpired(now: Instant) -> [Action] {
        guard budgetEndsAt != nil || policy.naiveBackgroundRefresh else { return [] }  // the sync ended first
        if case .lightSync = phase { phase = .background(requested: false) }
        return [.stopLightSync(reason: .expiredByOS)]
    }

    /// The light sync ended (complete, stopped or failed); ask for the next refresh.
    public mutating func lightSyncEnded(mode: NotificationMode, pushState: PushState, now: Instant) -> [Action] {
        if case .lightSync = phase { phase = .background(requested: false) }
        return rerequest(mode: mode, pushState: pushState, now: now)
    }

    /// The grant could not run because another sync holds the single flight.
    public mutating func grantUnused(mode: NotificationMode, pushState: PushState, now: Instant) -> [Action] {
        if case .lightSync = phase { phase = .background(requested: false) }
        return rerequest(mode: mode, pushState: pushState, now: now)
    }

    public mutating func deadlineReached(now: Instant) -> [Action] {
        guard case .lightSync(let end) = phase, end <= now else { return [] }  // spurious wake-up
        phase = .background(requested: false)
        return [.stopLightSync(reason: .budgetUsedUp(settings.lightSyncBudget))]
    }

    private mutating func rerequest(mode: NotificationMode, pushState: PushState, now: Instant, after wait: Interval? = nil) -> [Action] {
        guard inBackground, needed(mode: mode, pushState: pushState) else { return [] }
        phase = .background(requested: true)
        let wait = wait ?? interval
        return [.request(earliest: now + wait, reason: wait == interval ? .nextRefresh : .nextRefreshKeepsUp(after: wait))]
    }
}
