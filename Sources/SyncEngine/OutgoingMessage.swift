import SyncCore

/// A message the user wrote, from Enter until the network takes it.
///
///     sending ──published──▶ sent (stored as a message; leaves the outbox)
///        │ ▲
///  failed│ │retry (backoff, or "retry now")
///        ▼ │
///      failed(reason, retryAt)     refused(reason): refused for good, tried again only when asked (R)
///
/// The outbox is kept in the store, so that a message written while the network cannot take
/// it survives a quit or a crash and goes out at the next launch.
public struct OutgoingMessage: Equatable, Sendable {
    public enum State: Equatable, Sendable {
        /// Handed to the network; no answer yet.
        case sending
        /// The network refused it; it is tried again at `retryAt`.
        case failed(reason: String, retryAt: Instant)
        /// The network refused it for good (a server that no longer knows the user): not tried
        /// again unless the user asks (`R`).
        case refused(reason: String)
        /// The network took it: it is the stored message `txId` now.
        case sent(txId: String)
    }

    /// The app's own id, until the network gives the message its txId.
    public var localId: String
    public var to: Address
    public var body: String
    /// When the user pressed Enter.
    public var createdAt: Instant
    /// Attempts that failed so far.
    public var failures: Int
    public var state: State

    public init(localId: String, to: Address, body: String, createdAt: Instant, failures: Int = 0, state: State = .sending) {
        self.localId = localId
        self.to = to
        self.body = body
        self.createdAt = createdAt
        self.failures = failures
        self.state = state
    }

    /// Waits between attempts: 5 s, 15 s, 30 s, then every minute.
    public static let retryBackoff: [Interval] = [.seconds(5), .seconds(15), .seconds(30), .seconds(60)]

    public static func retryDelay(afterFailures n: Int) -> Interval {
        retryBackoff[min(max(n, 1), retryBackoff.count) - 1]
    }
}
