import NIOCore
import SyncCore

/// Every limit of what a server promises (docs/server.md), each with its default: the one
/// owner of those defaults, which the server starts from and `synchat server`'s flags and
/// help read.
public struct ServerLimits: Equatable, Sendable {
    /// Connections one peer address may hold that have shown no user's secret (`--peer-connections`).
    public var peerConnections = 64
    /// Connections one user may hold, from any address (`--user-connections`): a client's pool
    /// of keep-alive connections (6), its node and push sockets, for a user who runs a TUI and a
    /// bot at once, with room to spare.
    public var userConnections = 32
    /// Connections one peer address may hold that have not sent a whole first head (`--peer-heads`).
    public var peerHeads = 16
    /// New connections one address may open a second (`--peer-rate`), in bursts of
    /// `ConnectionTable.peerRateBurst` times as many: fifty clients behind one address starting
    /// at once open about 400 (a pool of up to 6 each, its node and push sockets) over a few
    /// seconds, and a ClientHello-and-close flood from one address would hold the event loop
    /// with the server's signature and key exchange for each.
    public var peerRate = 100
    /// Users the server holds at most (`--max-users`).
    public var maxUsers = 10_000
    /// A user with no request and no socket this long is away: its simulated contacts stop
    /// writing until it is back (`--away-after`): contacts writing forever to users who never
    /// come back would grow an idle server until it stopped answering.
    public var awayAfter = Interval.minutes(1)
    /// A request's head must arrive whole this long after the connection opened, or after the
    /// answer before it (`--head-timeout`).
    public var headTimeout = Interval.seconds(10)
    /// An idle keep-alive connection, or a declared body that does not come, is closed after
    /// this (`--idle-timeout`).
    public var idleTimeout = Interval.seconds(30)
    /// Joins one peer address may make a minute, in a burst as large (`--peer-joins`).
    public var peerJoins = 60
    /// Connections open at once, all peers together (`--max-connections`).
    public var maxConnections = 8_192
    /// A node or push socket silent this long is pinged (`--ping-after`)…
    public var pingAfter = Interval.seconds(60)
    /// …and closed when nothing answers within this (`--pong-timeout`).
    public var pongTimeout = Interval.seconds(15)
    /// Indexer answers one user may have pending at once (`--pending-answers`): as many as one
    /// burst of the request rate, so a client's full sync is never refused by it.
    public var pendingAnswers = Int(WorldServer.burst)
    /// The longest delay or latency a user's own fault may set (`--fault-max`).
    public var faultMax = Interval.minutes(10)
    /// Bytes of message text one user may have the server keep (`--user-quota`).
    public var userQuotaBytes = 8 << 20
    /// Wrong invites a minute, all addresses together (`--failed-invites`).
    public var failedInvites = 30

    public init() {}

    public static let defaults = ServerLimits()

    /// A size as `--user-quota` reads it: `8MiB`, `512KiB`, `1GiB`, or bytes.
    public static func sizeWords(_ bytes: Int) -> String {
        for (unit, scale) in [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] where bytes >= scale && bytes % scale == 0 {
            return "\(bytes / scale)\(unit)"
        }
        return String(bytes)
    }
}

extension WorldServer {
    /// Sets every limit (`synchat server`'s flags).
    public func apply(_ limits: ServerLimits) {
        maxConnectionsPerPeer = limits.peerConnections
        maxConnectionsPerUser = limits.userConnections
        maxWaitingPerPeer = limits.peerHeads
        connectionsPerSecondPerPeer = limits.peerRate
        host.maxUsers = limits.maxUsers
        host.awayAfterMs = limits.awayAfter.milliseconds
        headTimeout = .milliseconds(limits.headTimeout.milliseconds)
        idleTimeout = .milliseconds(limits.idleTimeout.milliseconds)
        joinsPerMinute = limits.peerJoins
        maxConnections = limits.maxConnections
        pingAfter = .milliseconds(limits.pingAfter.milliseconds)
        pongTimeout = .milliseconds(limits.pongTimeout.milliseconds)
        maxPendingAnswers = limits.pendingAnswers
        maxUserFaultDuration = limits.faultMax
        userQuotaBytes = limits.userQuotaBytes
        failedInvitesPerMinute = limits.failedInvites
    }
}
