import SyncCore
import SyncEngine

/// Belief lag (SPEC §5): how long the engine takes to believe what the world knows — from a
/// channel breaking to the engine saying so — per fault kind, and the engine's false alarms.
/// The one owner of the measure: `simulate`, the matrix and the chart read it from here.
/// Fed as the run goes (`AppSession`), from the world's active faults (ground truth, in the
/// words of their directives) and the engine's events, so a run that keeps no log has it too.
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
    /// Times push was believed `unreliable` while no fault of push (its service, the token,
    /// the device's network) had been in force within `falseAlarmWindow` before.
    public private(set) var falseUnreliable = 0
    /// How far back a push fault still explains an `unreliable` (the observation retention
    /// and the grace, with room).
    public var falseAlarmWindow = Interval.minutes(15)

    /// Per kind: since when the world has been broken and the engine has not said so.
    private var brokenSince: [Kind: Instant] = [:]
    private var broken: Set<Kind> = []
    private var believed: Set<Kind> = [.realtime, .network]  // not live until the first subscription
    /// When a fault of push was last in force (nil: never).
    private var pushFaultLastSeen: Instant?
    private var pushFaultNow = false

    public init() {}

    /// The world's active faults changed (`AppSession.activeFaults`).
    public mutating func faultsChanged(_ faults: [String], at t: Instant) {
        var now: Set<Kind> = []
        for f in faults {
            if f == "push drop 100%" || f == "push down" { now.insert(.push) }
            if f == "realtime down" || f == "realtime stale" { now.insert(.realtime) }
            if f == "token expired" || f == "token invalid" { now.insert(.token) }
            if f == "network off" { now.insert(.network) }
        }
        let pushFault = faults.contains { $0.hasPrefix("push ") || $0.hasPrefix("token ") || $0 == "network off" }
        if pushFault || pushFaultNow { pushFaultLastSeen = t }
        pushFaultNow = pushFault
        for kind in Kind.allCases {
            switch (broken.contains(kind), now.contains(kind)) {
            case (false, true):
                broken.insert(kind)
                if believed.contains(kind) {
                    records[kind, default: Record()].lags.append(.zero)
                } else {
                    brokenSince[kind] = t
                }
            case (true, false):
                broken.remove(kind)
                if brokenSince.removeValue(forKey: kind) != nil { records[kind, default: Record()].unnoticed += 1 }
            default:
                break
            }
        }
    }

    /// One of the engine's events.
    public mutating func observe(_ e: TimedEvent) {
        switch e.event {
        case .pushState(_, let to, _):
            if to == .unreliable {
                let explained = pushFaultNow || pushFaultLastSeen.map { e.at - $0 <= falseAlarmWindow } ?? false
                if !explained { falseUnreliable += 1 }
            }
            believe(.push, to == .unreliable, at: e.at)
        case .realtime(let state, _):
            believe(.realtime, state != .live, at: e.at)
            believe(.network, state != .live, at: e.at)
        case .tokenStatus(let status):
            believe(.token, status == .expired || status == .invalid, at: e.at)
        default:
            break
        }
    }

    private mutating func believe(_ kind: Kind, _ holds: Bool, at t: Instant) {
        if holds { believed.insert(kind) } else { believed.remove(kind) }
        guard holds, let since = brokenSince.removeValue(forKey: kind) else { return }
        records[kind, default: Record()].lags.append(t - since)
    }

    /// Breaks still unnoticed at the end of a run count as unnoticed.
    public var final: BeliefLag {
        var copy = self
        for kind in copy.brokenSince.keys { copy.records[kind, default: Record()].unnoticed += 1 }
        copy.brokenSince = [:]
        return copy
    }

    /// The worst lag of each kind that broke, in seconds (nil: it broke and was never noticed).
    public var worstSeconds: [(Kind, Double?)] {
        Kind.allCases.compactMap { kind in
            guard let r = records[kind] else { return nil }
            return (kind, r.worst.map { Double($0.milliseconds) / 1000 })
        }
    }
}
