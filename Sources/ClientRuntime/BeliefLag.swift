import SyncCore
import SyncEngine

/// Belief lag (docs/simulate.md): how long the engine takes to believe what the world knows — from a
/// channel breaking to the engine saying so — per fault kind, and the engine's false alarms.
/// The one owner of the measure: `simulate`, the matrix and the chart read it from here, and
/// the screen shows its disagreements as they last (truth beside belief: the status bar's
/// `truth:` segment, the inspector's `truth` section).
/// Fed as the run goes, by the session that owns it, from the world's faults (ground truth) and
/// the engine's events, so a run that keeps no log has it too.
///
/// | kind | the world breaks | the engine believes it |
/// | --- | --- | --- |
/// | push | `push drop 100%`, `push down` | push `unreliable` |
/// | realtime | `realtime down`, `realtime stale` | realtime not `live` |
/// | token | `token expired`, `token invalid` | the token `expired` or `invalid` |
/// | network | `network off` | realtime not `live` |
public struct BeliefLag: Equatable, Sendable {
    public enum Kind: String, CaseIterable, Sendable {
        case push, realtime, token, network
    }

    /// Per kind: the lag of each break the engine noticed, and the breaks that ended unnoticed.
    public struct Record: Equatable, Sendable {
        public var lags: [Interval] = []
        public var unnoticed = 0
        public var worst: Interval? { lags.max() }
    }

    public private(set) var records: [Kind: Record] = [:]
    /// Times push was believed `unreliable` although no fault of push (its service, the
    /// token, the device's network) was in force at any time since push was last believed
    /// `reliable` (or since the run began): evidence of a real outage can come long after it,
    /// from a catch-up in the next foreground, and that is no false alarm. A fault counts as
    /// in force until its last effects can show: its delay and rule 2's grace after it ended
    /// (a push it delayed lands after it, and is a miss then).
    public private(set) var falseUnreliable = 0
    /// Each span the world had a channel broken and the engine did not believe it, closed
    /// (noticed, or the break over unnoticed): what a chart draws.
    public private(set) var spans: [Span] = []

    public struct Span: Equatable, Sendable {
        public var kind: Kind
        public var from: Instant
        public var to: Instant
    }

    /// Per kind: since when the world has been broken and the engine has not said so.
    private var brokenSince: [Kind: Instant] = [:]
    /// Per kind broken now: the world's fault, in the words of the line that makes it (`push drop 100%`).
    public private(set) var faultWords: [Kind: String] = [:]
    private var broken: Set<Kind> = []
    private var believed: Set<Kind> = [.realtime, .network]  // not live until the first subscription
    /// A fault of push is in force now; one was at some time since push was last reliable.
    private var pushFaultNow = false
    private var pushFaultSinceReliable = false
    /// A fault of push that ended still shows until then: its pushes delayed in flight, and
    /// rule 2's grace for the messages that landed while it was in force.
    private var pushFaultShowsUntil: Instant?
    private var pushFaultDelay = Interval.zero
    /// Rule 2's grace, the engine's (`SyncSettings.pushGrace`): a miss is judged that long
    /// after its message.
    public let grace: Interval

    /// Whether lags, spans and unnoticed breaks are kept (a run's measure); a screen, which
    /// shows only the disagreements now, keeps none, so its copy does not grow over a session.
    public let keepsRecords: Bool

    public init(keepsRecords: Bool = true, grace: Interval = SyncSettings.default.pushGrace) {
        self.keepsRecords = keepsRecords
        self.grace = grace
    }

    /// The world's faults changed (the world tells its session).
    public mutating func faultsChanged(_ faults: WorldFaults, at t: Instant) {
        var now: Set<Kind> = []
        faultWords = [:]
        if faults.pushBroken {
            now.insert(.push)
            faultWords[.push] = faults.pushBrokenWords
        }
        if faults.realtimeBroken {
            now.insert(.realtime)
            faultWords[.realtime] = faults.realtimeBrokenWords
        }
        if let token = faults.token {
            now.insert(.token)
            faultWords[.token] = WorldFaults.words(of: token)
        }
        if faults.networkOff {
            now.insert(.network)
            faultWords[.network] = WorldFaults.Change.networkOff.words
        }
        if pushFaultNow, !faults.pushImpaired { pushFaultShowsUntil = t + pushFaultDelay + grace }
        pushFaultNow = faults.pushImpaired
        pushFaultDelay = faults.push.extraDelay
        if pushFaultNow { pushFaultSinceReliable = true }
        for kind in Kind.allCases {
            switch (broken.contains(kind), now.contains(kind)) {
            case (false, true):
                broken.insert(kind)
                if believed.contains(kind) {
                    if keepsRecords { records[kind, default: Record()].lags.append(.zero) }
                } else {
                    brokenSince[kind] = t
                }
            case (true, false):
                broken.remove(kind)
                if let since = brokenSince.removeValue(forKey: kind), keepsRecords {
                    records[kind, default: Record()].unnoticed += 1
                    spans.append(Span(kind: kind, from: since, to: t))
                }
            default:
                break
            }
        }
    }

    /// One of the engine's events.
    public mutating func observe(_ e: TimedEvent) {
        switch e.event {
        case .pushState(_, let to, _):
            let faultShows = pushFaultNow || pushFaultShowsUntil.map { e.at < $0 } ?? false
            if to == .unreliable, !pushFaultSinceReliable, !faultShows { falseUnreliable += 1 }
            if to == .reliable { pushFaultSinceReliable = faultShows }
            believe(.push, Self.broken(to), at: e.at)
        case .realtime(let state, _):
            believe(.realtime, Self.broken(state), at: e.at)
            believe(.network, Self.broken(state), at: e.at)
        case .tokenStatus(let status):
            believe(.token, Self.broken(status), at: e.at)
        default:
            break
        }
    }

    /// What a state the engine says means it believes of its channel: push it does not count on (`unreliable`, or `disabled`: another mode, no
    /// permission or token, where a dropping push service is no news to it), realtime not
    /// `live`, a token `expired` or `invalid`.
    static func broken(_ push: PushState) -> Bool { push == .unreliable || push == .disabled }
    static func broken(_ realtime: RealtimeState) -> Bool { realtime != .live }
    static func broken(_ token: TokenStatus) -> Bool { token == .expired || token == .invalid }

    private mutating func believe(_ kind: Kind, _ holds: Bool, at t: Instant) {
        if holds { believed.insert(kind) } else { believed.remove(kind) }
        // The engine stops believing a break that lasts (push counted on again, a mode back to
        // remote-push): they differ again, from now.
        if !holds, broken.contains(kind), brokenSince[kind] == nil { brokenSince[kind] = t }
        guard holds, let since = brokenSince.removeValue(forKey: kind), keepsRecords else { return }
        records[kind, default: Record()].lags.append(t - since)
        spans.append(Span(kind: kind, from: since, to: t))
    }

    /// What the world has broken that the engine does not believe yet, in `Kind` order: the
    /// world's words for it and since when they have differed. Empty as soon as they agree.
    public var disagreements: [(kind: Kind, fault: String, since: Instant)] {
        Kind.allCases.compactMap { kind in brokenSince[kind].map { (kind, faultWords[kind] ?? kind.rawValue, $0) } }
    }

    /// What a screen shows of it beside the world's faults.
    public func truth(_ faults: WorldFaults) -> WorldTruth {
        WorldTruth(faults: faults, broken: faultWords, unnoticed: brokenSince)
    }

    /// Whether the world has a kind's channel broken now.
    public func isBroken(_ kind: Kind) -> Bool { broken.contains(kind) }

    /// Breaks still unnoticed at the end of a run count as unnoticed.
    public var final: BeliefLag {
        var copy = self
        for kind in copy.brokenSince.keys { copy.records[kind, default: Record()].unnoticed += 1 }
        copy.brokenSince = [:]
        return copy
    }

    /// Every span, the open ones closed at `end` (a run's end), in time order.
    public func spans(closingAt end: Instant) -> [Span] {
        (spans + Kind.allCases.compactMap { k in brokenSince[k].map { Span(kind: k, from: $0, to: end) } }).sorted { ($0.from, $0.kind.rawValue) < ($1.from, $1.kind.rawValue) }
    }

    /// The worst lag of each kind that broke, in seconds (nil: it broke and was never noticed).
    public var worstSeconds: [(Kind, Double?)] {
        Kind.allCases.compactMap { kind in
            guard let r = records[kind] else { return nil }
            return (kind, r.worst.map { Double($0.milliseconds) / 1000 })
        }
    }
}
