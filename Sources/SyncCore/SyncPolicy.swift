// The policies compared (docs/spec.md#policies). One value, read by the machines, so that each rule stays
// in one place and every difference between policies is a named switch.

public struct SyncPolicy: Hashable, Sendable, CustomStringConvertible {
    public var name: String

    // MARK: naive versus the gated engine (rules 6–8, 10–11, 13–14)

    /// Rules 6–8: debounce while push is reliable, and single flight. `naive` has neither:
    /// every trigger starts its own full sync, and they may overlap.
    public var gated: Bool
    /// Rule 11: `app-active` waits for the reconnect (or the 3 s fallback) and joins the
    /// subscription restart. `naive` syncs at once on app-active and again on the restart.
    public var deferAppActive: Bool
    /// Rule 4: entering `unreliable` forces a catch-up and re-registers the token.
    public var reactsToUnreliable: Bool
    /// Rule 13: `nil` polls 60 s after each completed sync; `naive` polls on a fixed timer.
    public var fixedPollInterval: Interval?
    /// Rule 14: `naive` asks for a refresh every 60 s in any mode but `off`, and runs a full sync.
    public var naiveBackgroundRefresh: Bool

    // MARK: adaptive's improvements (a)–(h) (docs/spec.md#policies), each switchable for the ablation

    /// (a) A push-eligible incoming message first found by a catch-up, older than the grace and
    /// with no push, is a miss: the engine learns while backgrounded.
    public var fetchEvidence: Bool
    /// (b) While push is reliable, a foreground catch-up asks the node for the UTXO set and
    /// fetches by id only what is missing; a full sync runs when the gap cannot be proven or
    /// the last full sync is older than `fullSyncMaxAge`.
    public var provenGap: Bool
    public var fullSyncMaxAge: Interval
    /// (c) A trigger skipped by the debounce in the foreground schedules one trailing
    /// catch-up when the debounce ends.
    public var trailingCatchUp: Bool
    /// (d) With realtime down and push not reliable, a fallback poll first asks the indexer
    /// for the address's tip and syncs only when it moved past what the last complete full
    /// sync covered; a full sync still runs at least every `fullSyncMaxAge`.
    public var checkTipBeforePoll: Bool
    /// (e) In the foreground with realtime not live and push not unreliable, the indexer's tip
    /// every 60 s: what push has not brought is fetched, and a message push did not bring
    /// within the grace is a miss, so a silent push is found out (`PushVerifier`). While push
    /// is unreliable, rule 13 polls in `remote-push` too.
    public var verifyPushWithoutRealtime: Bool
    /// (f) Beyond the foreground: in `remote-push` a background refresh is asked for while push
    /// is reliable too; a grant is let go without a request while push keeps up (`PushWatch`),
    /// and otherwise looks at the indexer's tips first and syncs only the objects that moved
    /// (every kind, not only conversations), so that a push that dies in the background is found
    /// at the next refresh the OS grants.
    public var watchPushInBackground: Bool
    /// (g) Looks only when push may have failed: (e) looks once push is overdue for what realtime
    /// missed, then less often while the tips show push keeping up, and only on a silence the
    /// traffic makes unlikely once push keeps up; rule 13's polls for an unreliable push wait
    /// until realtime has been gone for `PushVerifier.verifyInterval`; (c) trails a foreground
    /// realtime outage only while push is in doubt.
    public var pacedLooks: Bool
    /// (h) The closing look: a foreground realtime outage that push was trusted to cover ends with
    /// the reconnect's catch-up skipped; once push is overdue for the gap's last message, the
    /// indexer's tips counted over the gap (one request), and a targeted sync of what push did
    /// not bring (`ClosingLook`).
    public var closingLook: Bool

    public init(name: String, gated: Bool, deferAppActive: Bool, reactsToUnreliable: Bool, fixedPollInterval: Interval?,
                naiveBackgroundRefresh: Bool, fetchEvidence: Bool, provenGap: Bool, fullSyncMaxAge: Interval = .hours(6),
                trailingCatchUp: Bool, checkTipBeforePoll: Bool = false, verifyPushWithoutRealtime: Bool = false,
                watchPushInBackground: Bool = false, pacedLooks: Bool = false, closingLook: Bool = false) {
        self.name = name
        self.gated = gated
        self.deferAppActive = deferAppActive
        self.reactsToUnreliable = reactsToUnreliable
        self.fixedPollInterval = fixedPollInterval
        self.naiveBackgroundRefresh = naiveBackgroundRefresh
        self.fetchEvidence = fetchEvidence
        self.provenGap = provenGap
        self.fullSyncMaxAge = fullSyncMaxAge
        self.trailingCatchUp = trailingCatchUp
        self.checkTipBeforePoll = checkTipBeforePoll
        self.verifyPushWithoutRealtime = verifyPushWithoutRealtime
        self.watchPushInBackground = watchPushInBackground
        self.pacedLooks = pacedLooks
        self.closingLook = closingLook
    }

    /// The behaviour before these optimisations.
    public static let naive = SyncPolicy(name: "naive", gated: false, deferAppActive: false, reactsToUnreliable: false,
                                         fixedPollInterval: .seconds(10), naiveBackgroundRefresh: true,
                                         fetchEvidence: false, provenGap: false, trailingCatchUp: false)
    /// Rules 1–15 exactly.
    public static let seed = SyncPolicy(name: "seed", gated: true, deferAppActive: true, reactsToUnreliable: true,
                                        fixedPollInterval: nil, naiveBackgroundRefresh: false,
                                        fetchEvidence: false, provenGap: false, trailingCatchUp: false)
    /// `seed` plus (a) to (h). The default.
    public static let adaptive = SyncPolicy(name: "adaptive", gated: true, deferAppActive: true, reactsToUnreliable: true,
                                            fixedPollInterval: nil, naiveBackgroundRefresh: false,
                                            fetchEvidence: true, provenGap: true, trailingCatchUp: true, checkTipBeforePoll: true,
                                            verifyPushWithoutRealtime: true, watchPushInBackground: true, pacedLooks: true,
                                            closingLook: true)

    public static let all: [SyncPolicy] = [.naive, .seed, .adaptive]

    public static func named(_ name: String) -> SyncPolicy? { all.first { $0.name == name } }

    /// `adaptive` with one improvement off, for the ablation.
    public func without(_ improvement: String) -> SyncPolicy {
        var p = self
        switch improvement {
        case "a": p.fetchEvidence = false
        case "b": p.provenGap = false
        case "c": p.trailingCatchUp = false
        case "d": p.checkTipBeforePoll = false
        case "e": p.verifyPushWithoutRealtime = false
        case "f": p.watchPushInBackground = false
        case "g": p.pacedLooks = false
        case "h": p.closingLook = false
        default: preconditionFailure("no improvement \(improvement)")
        }
        p.name = "\(name)-\(improvement)"
        return p
    }

    /// This policy with one improvement on (`seed.with("a")`: seed plus (a) only).
    public func with(_ improvement: String) -> SyncPolicy {
        var p = self
        switch improvement {
        case "a": p.fetchEvidence = true
        case "b": p.provenGap = true
        case "c": p.trailingCatchUp = true
        case "d": p.checkTipBeforePoll = true
        case "e": p.verifyPushWithoutRealtime = true
        case "f": p.watchPushInBackground = true
        case "g": p.pacedLooks = true
        case "h": p.closingLook = true
        default: preconditionFailure("no improvement \(improvement)")
        }
        p.name = "\(name)+\(improvement)"
        return p
    }

    public var description: String { name }
}
