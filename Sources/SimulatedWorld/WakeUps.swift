import SyncCore

/// What a phone pays in battery, counted by the world (docs/simulate.md, wake-ups): the OS
/// running the app for a background refresh, the notification extension processing a push
/// while the app is suspended, and the radio waking for a backend request (the indexer's, or
/// the node's UTXO set) after `radioTail` without traffic. Any traffic keeps the radio awake:
/// a request, a reply, a push, a realtime notification, a keepalive, a connect.
public final class WakeUps {
    /// How long a phone's radio stays up after its last traffic (a cellular tail).
    public static let radioTail = Interval.seconds(10)
    /// Background refreshes the OS ran the app for.
    public private(set) var refreshRuns = 0
    /// Pushes the notification extension processed while the app was suspended.
    public private(set) var pushesWhileSuspended = 0
    /// Backend requests that woke the radio.
    public private(set) var radioWakeUps = 0
    public var total: Int { refreshRuns + pushesWhileSuspended + radioWakeUps }
    private var lastTraffic: Instant?

    public init() {}

    /// Traffic on the radio at `at` (anything received, or a message that is not a request).
    func traffic(at: Instant) {
        lastTraffic = max(lastTraffic ?? at, at)
    }

    /// A backend request leaves at `at`: it wakes the radio unless traffic kept it up.
    func requestSent(at: Instant) {
        if lastTraffic.map({ at - $0 >= Self.radioTail }) ?? true { radioWakeUps += 1 }
        traffic(at: at)
    }

    func refreshRun() { refreshRuns += 1 }

    func pushProcessedWhileSuspended(at: Instant) {
        pushesWhileSuspended += 1
        traffic(at: at)
    }
}
