/// Every constant of docs/spec.md#constants, in one value. Defaults are the spec's.
public struct SyncSettings: Hashable, Sendable {
    /// Rule 2: how long after a realtime tx its push may still arrive.
    public var pushGrace: Interval = .seconds(60)
    /// Rule 2: how long before its realtime tx a push may have arrived and still count.
    public var pushLeadTolerance: Interval = .seconds(30)
    /// How long received pushes are remembered for matching.
    public var observationRetention: Interval = .seconds(600)
    /// Rule 3.
    public var missesToUnreliable: Int = 3
    /// Rule 6.
    public var catchUpDebounce: Interval = .seconds(600)
    /// Rule 4.
    public var reregisterCooldown: Interval = .seconds(600)
    /// Rule 9.
    public var reorgRewind: Interval = .seconds(600)
    /// Rule 13.
    public var pollDelay: Interval = .seconds(60)
    /// Rule 14.
    public var backgroundRefreshInterval: Interval = .minutes(15)
    public var lightSyncConversations: Int = 8
    public var lightSyncBudget: Interval = .seconds(8)
    /// Rule 11.
    public var recoveryFallback: Interval = .seconds(3)
    /// Rule 15.
    public var notificationRateLimit: Interval = .seconds(1)

    // Not in the constants table of docs/spec.md: the keepalive that finds a socket gone stale in the foreground,
    // which no rule covers (rule 10 only distrusts it after a background).
    /// How long a live foreground subscription stays quiet before the client pings the node.
    public var keepaliveInterval: Interval = .seconds(30)
    /// How long the client waits for the answer before calling the socket stale.
    public var keepaliveTimeout: Interval = .seconds(10)
    /// How long the indexer may take to index a message. A catch-up right after subscribing
    /// waits until the subscription is this old, so that a message that landed just before
    /// the subscription (too early for realtime) is indexed when the indexer is asked.
    public var indexerLagAllowance: Interval = .seconds(3)
    /// How many replies in a row may reject the same item for the same reason before it is
    /// skipped for good (a body over the wire's 64 KiB limit would otherwise fail every
    /// later catch-up of its object, and its cursor would never move).
    public var rejectedItemAttempts = 3

    public init() {}

    public static let `default` = SyncSettings()
}
