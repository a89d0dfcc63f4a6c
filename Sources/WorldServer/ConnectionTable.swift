import Foundation

/// The connections open at once, by peer: what `--max-connections` and `--peer-connections`
/// count, and whom to shed when the server is full.
///
/// A peer is an IPv4 address, or an IPv6 /64: one host is routinely given a whole /64 and may
/// take any address in it, so a per-address count of IPv6 would be no limit at all.
///
/// At the cap, a newcomer is let in by closing the oldest connection of the peer that holds the
/// most, when that peer holds at least two more than the newcomer's would: otherwise a crowd
/// of addresses, each within its own per-peer limit, fills the server and keeps everyone else
/// out for as long as it likes. A newcomer who would hold as many as the largest holder is
/// refused (shedding would only swap one connection for another).
///
/// A connection waits for its first request head until the head is whole; a peer may hold at
/// most `maxWaitingPerPeer` such connections, and its newest closes its oldest: a connection in
/// the middle of a head costs the server 6.6 KB (NIO's channel, pipeline and HTTP parser) and
/// needs no user, so without this a crowd of addresses fills the cap with them (55–58 MB).
public struct ConnectionTable {
    public var maxConnections: Int
    public var maxPerPeer: Int
    public var maxWaitingPerPeer: Int
    public private(set) var count = 0
    /// Each peer's connections, oldest first: an id, when it came, how to close it, and whether
    /// it still waits for its first request head.
    private var byPeer: [String: [(id: ObjectIdentifier, seq: UInt64, close: () -> Void, waiting: Bool)]] = [:]
    private var admitted: UInt64 = 0

    /// `--peer-heads`'s default.
    public static let defaultMaxWaitingPerPeer = 16

    public init(maxConnections: Int, maxPerPeer: Int, maxWaitingPerPeer: Int = defaultMaxWaitingPerPeer) {
        self.maxConnections = maxConnections
        self.maxPerPeer = maxPerPeer
        self.maxWaitingPerPeer = maxWaitingPerPeer
    }

    /// What became of a connection that came.
    public enum Admission: Equatable {
        case admitted
        /// Admitted, and the oldest connection of `peer` was closed to make room.
        case admittedShedding(peer: String)
        case refused
    }

    /// A connection from `peer` wants in; `close` ends it if it is shed later. A refused one is
    /// not counted (close it at once).
    public mutating func admit(_ id: ObjectIdentifier, peer: String, close: @escaping () -> Void) -> Admission {
        let held = byPeer[peer]?.count ?? 0
        guard held < maxPerPeer else { return .refused }
        var admission = Admission.admitted
        if count >= maxConnections {
            guard let (largest, most) = largestPeer(), most >= held + 2 else { return .refused }
            let shed = byPeer[largest]!.removeFirst()
            count -= 1
            shed.close()
            admission = .admittedShedding(peer: largest)
        }
        admitted += 1
        byPeer[peer, default: []].append((id, admitted, close, true))
        count += 1
        if waiting(by: peer) > maxWaitingPerPeer, let oldest = byPeer[peer]?.firstIndex(where: { $0.waiting }) {
            let shed = byPeer[peer]!.remove(at: oldest)
            count -= 1
            shed.close()
        }
        return admission
    }

    /// A connection's first request head is whole: it no longer counts as waiting. Idempotent.
    public mutating func headRead(_ id: ObjectIdentifier, peer: String) {
        guard let i = byPeer[peer]?.firstIndex(where: { $0.id == id }) else { return }
        byPeer[peer]![i].waiting = false
    }

    /// Connections of `peer` still waiting for their first request head.
    public func waiting(by peer: String) -> Int { byPeer[peer]?.reduce(0) { $0 + ($1.waiting ? 1 : 0) } ?? 0 }

    /// A connection ended (closed by either side, or shed): no longer counted. Idempotent.
    public mutating func remove(_ id: ObjectIdentifier, peer: String) {
        guard var list = byPeer[peer], let i = list.firstIndex(where: { $0.id == id }) else { return }
        list.remove(at: i)
        byPeer[peer] = list.isEmpty ? nil : list
        count -= 1
    }

    /// Connections `peer` holds now.
    public func held(by peer: String) -> Int { byPeer[peer]?.count ?? 0 }

    /// The peer holding the most connections, and how many; of equals, the one whose oldest
    /// connection came first.
    private func largestPeer() -> (String, Int)? {
        var best: (peer: String, count: Int, since: UInt64)?
        for (peer, list) in byPeer {
            let since = list[0].seq
            if let b = best, list.count < b.count || (list.count == b.count && since > b.since) { continue }
            best = (peer, list.count, since)
        }
        return best.map { ($0.peer, $0.count) }
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
