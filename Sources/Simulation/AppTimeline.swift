import SimulatedWorld
import SyncCore
import SyncEngine

/// Where the app was and what the device could reach, over a run, as the world knows it:
/// `AppSession` keeps it as the run goes, from the app's lifecycle and the world's faults.
/// Two measures read it (docs/simulate.md): the latency floor (`latencyFloor`), and the hours
/// of realtime outage in the foreground, against which the matrix prices adaptive's looking.
public struct AppTimeline: Equatable, Sendable {
    /// When the app came to the foreground or went to the background, in order.
    public private(set) var lifecycle: [(at: Instant, foreground: Bool)] = []
    /// When the device lost or found its network (`network off` / `network on`), in order.
    public private(set) var network: [(at: Instant, online: Bool)] = []
    /// When the indexer went down or came back (`indexer down` / `indexer up`), in order.
    public private(set) var indexer: [(at: Instant, up: Bool)] = []
    /// Time in the foreground while the world had realtime broken (`realtime down`, `stale`,
    /// `flaky`, or the device offline), up to the last change.
    public private(set) var realtimeOutageInForeground = Interval.zero
    /// Realtime outages that ended in the foreground (the world's realtime whole again): each
    /// may end with a closing look, one request of the price of looking (docs/spec.md §4).
    public private(set) var realtimeOutagesEndedInForeground = 0
    /// Time in the background (after the first launch), up to the last change: the hours push
    /// alone is trusted with, each priced one look (docs/spec.md §4).
    public private(set) var background = Interval.zero
    private var foreground = false
    private var realtimeBroken = false
    private var lastChange: Instant?

    public init() {}

    public static func == (a: AppTimeline, b: AppTimeline) -> Bool {
        a.lifecycle.elementsEqual(b.lifecycle) { $0.at == $1.at && $0.foreground == $1.foreground }
            && a.network.elementsEqual(b.network) { $0.at == $1.at && $0.online == $1.online }
            && a.indexer.elementsEqual(b.indexer) { $0.at == $1.at && $0.up == $1.up }
            && a.realtimeOutageInForeground == b.realtimeOutageInForeground
            && a.realtimeOutagesEndedInForeground == b.realtimeOutagesEndedInForeground
            && a.background == b.background
    }

    /// The app came to the foreground (true) or went to the background.
    public mutating func lifecycleChanged(foreground now: Bool, at t: Instant) {
        guard lifecycle.last?.foreground != now else { return }
        advance(to: t)
        foreground = now
        lifecycle.append((t, now))
    }

    /// The world's faults changed.
    public mutating func faultsChanged(_ faults: WorldFaults, at t: Instant) {
        advance(to: t)
        let offline = faults.networkOff
        if (network.last?.online ?? true) == offline { network.append((t, !offline)) }
        if (indexer.last?.up ?? true) == faults.indexer.down { indexer.append((t, !faults.indexer.down)) }
        let broken = offline || faults.realtimeBroken || faults.realtime.flakyPercent > 0
        if realtimeBroken, !broken, foreground { realtimeOutagesEndedInForeground += 1 }
        realtimeBroken = broken
    }

    private mutating func advance(to t: Instant) {
        if let last = lastChange, foreground, realtimeBroken, t > last { realtimeOutageInForeground = realtimeOutageInForeground + (t - last) }
        if let last = lastChange, !foreground, !lifecycle.isEmpty, t > last { background = background + (t - last) }
        lastChange = t
    }

    /// The timeline closed at `end` (the run's end): the outage counted up to it.
    public func closed(at end: Instant) -> AppTimeline {
        var copy = self
        copy.advance(to: end)
        return copy
    }

    /// Hours of realtime outage in the foreground.
    public var realtimeOutageHours: Double { Double(realtimeOutageInForeground.milliseconds) / 3_600_000 }

    // MARK: the latency floor

    func isForeground(at t: Instant) -> Bool { lifecycle.last { $0.at <= t }?.foreground ?? false }
    func isOnline(at t: Instant) -> Bool { network.last { $0.at <= t }?.online ?? true }

    func isIndexerUp(at t: Instant) -> Bool { indexer.last { $0.at <= t }?.up ?? true }

    /// Whether a fetch could reach the indexer from `from` through `through` for a stretch of at
    /// least `lasting` (zero: at some instant): the app in the foreground, the device online,
    /// the indexer up all that while.
    package func foregroundFetchPossible(from: Instant, through: Instant, lasting: Interval = .zero) -> Bool {
        guard from <= through else { return false }
        let changes = Array(Set(lifecycle.map(\.at) + network.map(\.at) + indexer.map(\.at))).filter { $0 > from && $0 <= through }.sorted()
        var stretchStart: Instant?
        for (at, next) in zip([from] + changes, changes + [through]) {
            guard isForeground(at: at) && isOnline(at: at) && isIndexerUp(at: at) else {
                stretchStart = nil
                continue
            }
            let start = stretchStart ?? at
            stretchStart = start
            if next - start >= lasting { return true }
        }
        return false
    }

    /// The instants after `t` where either fact changes, in order.
    private func changes(after t: Instant) -> [Instant] {
        (lifecycle.map(\.at) + network.map(\.at)).filter { $0 > t }.sorted()
    }

    /// When the background that `t` falls in began (nil in the foreground or before the first launch).
    private func backgroundStart(at t: Instant) -> Instant? {
        guard let last = lifecycle.last(where: { $0.at <= t }), !last.foreground else { return nil }
        return last.at
    }

    /// The first instant at or after `t` when an all-knowing client could fetch: the app in the
    /// foreground, or in the background at a refresh the OS would grant it (no sooner than
    /// `refreshMinimum` after the background began nor after the last grant), the device online.
    /// Returns the instant and whether it is a background grant.
    package func firstRun(from t: Instant, lastGrant: Instant?, refreshMinimum: Interval) -> (at: Instant, grant: Bool)? {
        var at = t
        let later = changes(after: t)
        var i = 0
        while true {
            let next = i < later.count ? later[i] : nil
            if isOnline(at: at) {
                if isForeground(at: at) { return (at, false) }
                if let start = backgroundStart(at: at) {
                    let grant = [at, start + refreshMinimum, lastGrant.map { $0 + refreshMinimum }].compactMap { $0 }.max()!
                    if next.map({ grant < $0 }) ?? true { return (grant, true) }
                }
            }
            guard let next else { return nil }
            at = next
            i += 1
        }
    }
}
