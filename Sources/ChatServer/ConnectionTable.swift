import Foundation

/// The connections open at once, by holder: what `--max-connections`, `--peer-connections`,
/// `--peer-heads` and `--user-connections` count, and whom to shed when the server is full.
///
/// A connection is its peer's while it has shown no user's secret, and the user's from the
/// first request head that carries one: per-address limits guard the unauthenticated, and a
/// user's connections are that user's, so fifty people behind one address (an office NAT, one
/// machine) are fifty users, each within its own limit, and a stranger at that address cannot
/// spend theirs.
///
/// A peer is an IPv4 address, or an IPv6 /64: one host is routinely given a whole /64 and may
/// take any address in it, so a per-address count of IPv6 would be no limit at all.
///
/// At the cap, a newcomer is let in by closing the oldest connection of the holder (a peer or
/// a user) that holds the most, when it holds at least two more than the newcomer's peer would:
/// otherwise a crowd of addresses, each within its own per-peer limit, fills the server and
/// keeps everyone else out for as long as it likes. A newcomer who would hold as many as the
/// largest holder is refused (shedding would only swap one connection for another).
///
/// A connection waits for its first request head until the head is whole; a peer may hold at
/// most `maxWaitingPerPeer` such connections, and its newest closes its oldest: a connection in
/// the middle of a head costs the server 6.6 KB (NIO's channel, pipeline and HTTP parser) and
/// needs no user, so without this a crowd of addresses fills the cap with them (55–58 MB).
/// A user holds at most `maxPerUser`; its newest closes its oldest.
public struct ConnectionTable {
    public var maxConnections: Int
    public var maxPerPeer: Int
    public var maxWaitingPerPeer: Int
    public var maxPerUser: Int
    public private(set) var count = 0

    /// Whose a connection is: its address's, until a request head shows a user's secret.
    public enum Holder: Hashable, Sendable {
        case peer(String)
        case user(String)
    }

    /// The limit that refused or closed a connection, with its value: the server says it to
    /// the client in words that name the flag.
    public enum Limit: Equatable, Sendable {
        /// `--max-connections`: the server is full, and nobody holds more than the newcomer would.
        case maxConnections(Int)
        /// `--peer-connections`: connections of one address that have shown no user's secret.
        case peerConnections(peer: String, limit: Int)
        /// `--peer-heads`: connections of one address still waiting for their first head.
        case peerHeads(peer: String, limit: Int)
        /// `--user-connections`: connections of one user.
        case userConnections(user: String, limit: Int)
        /// `--peer-rate`: new connections of one address a second (TLS handshakes among them).
        case peerRate(peer: String, perSecond: Int)
    }

    private struct Entry {
        let id: ObjectIdentifier
        let seq: UInt64
        let close: (Limit) -> Void
        var waiting: Bool
    }

    /// Each holder's connections, oldest first.
    private var byHolder: [Holder: [Entry]] = [:]
    private var holderOf: [ObjectIdentifier: Holder] = [:]
    private var admitted: UInt64 = 0

    public static let peerRateBurst = 4

    public init(maxConnections: Int = ServerLimits.defaults.maxConnections, maxPerPeer: Int = ServerLimits.defaults.peerConnections,
                maxWaitingPerPeer: Int = ServerLimits.defaults.peerHeads, maxPerUser: Int = ServerLimits.defaults.userConnections) {
        self.maxConnections = maxConnections
        self.maxPerPeer = maxPerPeer
        self.maxWaitingPerPeer = maxWaitingPerPeer
        self.maxPerUser = maxPerUser
    }

    /// What became of a connection that came.
    public enum Admission: Equatable {
        case admitted
        /// Admitted, and the oldest connection of `holder` was closed to make room.
        case admittedShedding(Holder)
        /// Refused by `limit`: not counted (close it at once).
        case refused(Limit)
    }

    /// A connection from `peer` wants in; `close` ends it if it is shed later, saying by which
    /// limit. A refused one is not counted.
    /// `waiting`: it may send its first request now (false over TLS until the handshake is done,
    /// `mayRequest`: a handshake's time is bounded by the head timeout and `--peer-connections`,
    /// and a connection shed by `--peer-heads` after it can be told why).
    public mutating func admit(_ id: ObjectIdentifier, peer: String, waiting: Bool = true, close: @escaping (Limit) -> Void) -> Admission {
        let mine = Holder.peer(peer)
        let held = byHolder[mine]?.count ?? 0
        guard held < maxPerPeer else { return .refused(.peerConnections(peer: peer, limit: maxPerPeer)) }
        var admission = Admission.admitted
        if count >= maxConnections {
            guard let (largest, most) = largestHolder(), most >= held + 2 else { return .refused(.maxConnections(maxConnections)) }
            shedOldest(of: largest, by: .maxConnections(maxConnections))
            admission = .admittedShedding(largest)
        }
        admitted += 1
        byHolder[mine, default: []].append(Entry(id: id, seq: admitted, close: close, waiting: waiting))
        holderOf[id] = mine
        count += 1
        if waiting { keepHeads(of: peer) }
        return admission
    }

    /// A TLS connection's handshake is done: from now it waits for its first request head.
    public mutating func mayRequest(_ id: ObjectIdentifier, peer: String) {
        let from = Holder.peer(peer)
        guard holderOf[id] == from, let i = byHolder[from]?.firstIndex(where: { $0.id == id }), !byHolder[from]![i].waiting else { return }
        byHolder[from]![i].waiting = true
        keepHeads(of: peer)
    }

    /// `--peer-heads`: past it, the oldest connection of `peer` still waiting for its head closes.
    private mutating func keepHeads(of peer: String) {
        if waiting(by: peer) > maxWaitingPerPeer {
            shedOldest(of: .peer(peer), by: .peerHeads(peer: peer, limit: maxWaitingPerPeer)) { $0.waiting }
        }
    }

    /// A connection's first request head is whole: it no longer counts as waiting, and when
    /// the head carried a user's secret the connection is that user's from now on (the user's
    /// oldest closes when it holds more than `maxPerUser`). Idempotent.
    public mutating func headRead(_ id: ObjectIdentifier, peer: String, user: String? = nil) {
        let from = Holder.peer(peer)
        guard holderOf[id] == from, let i = byHolder[from]?.firstIndex(where: { $0.id == id }) else { return }
        byHolder[from]![i].waiting = false
        guard let user else { return }
        let entry = byHolder[from]!.remove(at: i)
        if byHolder[from]!.isEmpty { byHolder[from] = nil }
        let to = Holder.user(user)
        byHolder[to, default: []].append(entry)
        holderOf[id] = to
        if byHolder[to]!.count > maxPerUser { shedOldest(of: to, by: .userConnections(user: user, limit: maxPerUser)) }
    }

    /// Connections of `peer` still waiting for their first request head.
    public func waiting(by peer: String) -> Int { byHolder[.peer(peer)]?.reduce(0) { $0 + ($1.waiting ? 1 : 0) } ?? 0 }

    /// A connection ended (closed by either side, or shed): no longer counted. Idempotent.
    public mutating func remove(_ id: ObjectIdentifier) {
        guard let holder = holderOf.removeValue(forKey: id), var list = byHolder[holder],
              let i = list.firstIndex(where: { $0.id == id }) else { return }
        list.remove(at: i)
        byHolder[holder] = list.isEmpty ? nil : list
        count -= 1
    }

    /// Connections `peer` holds now that have shown no user's secret.
    public func held(by peer: String) -> Int { byHolder[.peer(peer)]?.count ?? 0 }

    /// Connections `user` holds now.
    public func held(byUser user: String) -> Int { byHolder[.user(user)]?.count ?? 0 }

    /// Closes the oldest connection of `holder` (of those `matching`), saying `limit`.
    private mutating func shedOldest(of holder: Holder, by limit: Limit, matching: (Entry) -> Bool = { _ in true }) {
        guard let i = byHolder[holder]?.firstIndex(where: matching) else { return }
        let shed = byHolder[holder]!.remove(at: i)
        if byHolder[holder]!.isEmpty { byHolder[holder] = nil }
        holderOf[shed.id] = nil
        count -= 1
        shed.close(limit)
    }

    /// The holder of the most connections, and how many; of equals, the one whose oldest
    /// connection came first.
    private func largestHolder() -> (Holder, Int)? {
        var best: (holder: Holder, count: Int, since: UInt64)?
        for (holder, list) in byHolder {
            let since = list[0].seq
            if let b = best, list.count < b.count || (list.count == b.count && since > b.since) { continue }
            best = (holder, list.count, since)
        }
        return best.map { ($0.holder, $0.count) }
    }

    /// The peer an address belongs to: an IPv4 address as it is (an IPv4-mapped IPv6 address
    /// too), an IPv6 address as its /64 (`2001:db8:0:1::/64`); anything else as given.
    public static func peer(ofAddress address: String) -> String {
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, address, &v6) == 1 else { return address }
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            return bytes[12..<16].map(String.init).joined(separator: ".")
        }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }
}
