import Simulation
import SyncCore

/// Adaptive's promises against the other policies (docs/spec.md#policies, docs/matrix.md), one
/// place for the figures that the matrix's verdict lines and `synchat-bench policies` judge by.
public enum PolicyGoals {
    /// A background world where push is dead: adaptive's p95 at most this…
    public static let deadPushInBackgroundP95 = 1800.0
    /// …at no more than this share of naive's requests.
    public static let deadPushRequestsShareOfNaive = 0.5
    /// Goal 1 is out of every client's reach in a world where naive, which syncs at every grant
    /// the OS gives, misses `deadPushInBackgroundP95` too: there adaptive is judged against
    /// naive's p95 + `slowerSlack` (docs/matrix.md, "The goals").
    public static func beyondEveryGrant(adaptive a: RunSummary, naive n: RunSummary) -> Bool {
        guard let np = n.latencyP95, np > deadPushInBackgroundP95 else { return false }
        return (a.latencyP95 ?? 0) <= np + slowerSlack
            && Double(a.backendRequests) <= Double(n.backendRequests) * deadPushRequestsShareOfNaive
    }

    /// Never slower than seed: adaptive's p95 ≤ seed's × this + `slowerSlack`.
    public static let slowerFactor = 1.1
    public static let slowerSlack = 60.0
    /// Never dearer than seed where seed is not blind (its p95 within `seedNotBlindP95`), but for
    /// the price of looking: requests and bytes for each hour of realtime outage in the foreground.
    public static let seedNotBlindP95 = 300.0
    public static let lookingRequestsPerHour = 4.0
    public static let lookingBytesPerHour = 2000.0
    /// …and for each realtime outage that ended in the foreground, its closing look ((h)).
    public static let closingLookRequests = 1.0
    public static let closingLookBytes = 1000.0
    /// …and for each hour in the background, its look while push alone is trusted ((h)).
    public static let backgroundLookRequestsPerHour = 1.0
    public static let backgroundLookBytesPerHour = 1000.0
    /// The foreground: adaptive's p95 at most this with the indexer up and the device online,
    /// and a dead push believed `unreliable` within `foregroundPushLag`.
    public static let foregroundP95 = 300.0
    public static let foregroundPushLag = Interval.minutes(15)
    /// The most often a client looks at the indexer while realtime cannot vouch for push:
    /// (e)'s `PushVerifier.verifyInterval`. Goal 3's push lag counts a message a fetch could
    /// reach only if it could for this long: one it could reach for a few seconds (the indexer
    /// going down just after it landed) no client looking at that pace is sure to see.
    public static let fastestLook = PushVerifier(policy: .adaptive).verifyInterval
    /// Never lost, at worst late: adaptive delivers every message within its time in the
    /// background plus this, where the device is online and the indexer up some time after the
    /// message landed. The rules give it: a message younger than push's 2 min when a look counted
    /// (`PushVerifier.overdueAfter`), hidden behind a newer tip push brought, waits for the next
    /// look, at most the trust's 15 min on (`trustedLookFirst`); a catch-up fetches it within the
    /// last minute. (The grid's longest downtime of the indexer or the network, 10 min, with the
    /// first look 2 min after it, fits within it.)
    public static let latestBeyondBackground: Interval = {
        let v = PushVerifier(policy: .adaptive)
        return v.trustedLookFirst + v.overdueAfter + .minutes(1)
    }()
    /// Where adaptive's p95 is more than this many times the floor's, docs/matrix.md says why.
    public static let floorFactor = 3.0

    /// Adaptive's p95 ≤ seed's × 1.1 + 60 s (a run that delivered nothing has no p95 and passes).
    public static func neverSlower(adaptive a: RunSummary, seed s: RunSummary) -> Bool {
        guard let ap = a.latencyP95 else { return true }
        guard let sp = s.latencyP95 else { return false }
        return ap <= sp * slowerFactor + slowerSlack
    }

    /// Whether seed is not blind in this run: its p95 within `seedNotBlindP95`.
    public static func seedNotBlind(_ s: RunSummary) -> Bool { (s.latencyP95 ?? 0) <= seedNotBlindP95 }

    /// What adaptive may spend beyond seed's: the price of looking, for the hours of realtime
    /// outage in the foreground, a closing look at the end of each, and a look an hour of
    /// background (seed's run and adaptive's see the same world, so either's).
    public static func lookingAllowance(_ a: RunSummary) -> (requests: Double, bytes: Double) {
        let hours = a.realtimeOutageForeground / 3600, outages = Double(a.realtimeOutagesForeground), background = a.backgroundSeconds / 3600
        return (lookingRequestsPerHour * hours + closingLookRequests * outages + backgroundLookRequestsPerHour * background,
                lookingBytesPerHour * hours + closingLookBytes * outages + backgroundLookBytesPerHour * background)
    }

    /// Adaptive's requests and bytes within seed's plus the price of looking; nil when they are,
    /// else what is over, in words (`req 158/30+9.3`).
    public static func dearer(adaptive a: RunSummary, seed s: RunSummary) -> String? {
        let allowed = lookingAllowance(a)
        var over: [String] = []
        if Double(a.backendRequests) > Double(s.backendRequests) + allowed.requests {
            over.append("req \(a.backendRequests)/\(s.backendRequests)+\(fmt(allowed.requests))")
        }
        if Double(a.backendBytes) > Double(s.backendBytes) + allowed.bytes {
            over.append("bytes \(a.backendBytes)/\(s.backendBytes)+\(Int(allowed.bytes.rounded()))")
        }
        return over.isEmpty ? nil : over.joined(separator: " ")
    }

    /// The line `synchat-bench policies` prints under a scenario's comparison: adaptive against
    /// seed by the goals above.
    public static func verdict(_ runs: [RunSummary]) -> String? {
        guard let a = runs.first(where: { $0.policy == SyncPolicy.adaptive.name }),
              let s = runs.first(where: { $0.policy == SyncPolicy.seed.name }) else { return nil }
        let allowed = lookingAllowance(a)
        let slower = neverSlower(adaptive: a, seed: s) ? "met" : "NOT met"
        let cost: String
        if !seedNotBlind(s) {
            cost = "seed is blind here (p95 \(fmt(s.latencyP95 ?? 0)) s): no cost goal"
        } else if let over = dearer(adaptive: a, seed: s) {
            cost = "NOT met (\(over))"
        } else {
            cost = "met"
        }
        return "adaptive against seed: p95 ≤ 1.1 × seed's + 60 s: \(slower); requests ≤ seed's + \(fmt(allowed.requests)) "
            + "and bytes ≤ seed's + \(Int(allowed.bytes.rounded())) (\(fmt(a.realtimeOutageForeground / 60)) min of realtime outage in the foreground, \(Words.count(a.realtimeOutagesForeground, "outage")) ended there, \(fmt(a.backgroundSeconds / 3600)) h in the background): \(cost)"
    }
}
