import Foundation
import ServerProtocol
import SyncCore
import Wire

/// Ground truth (`GET /admin/truth`): what a test needs to count lost and duplicated messages.
extension WorldHost {
    /// Ground truth of one user (`GET /admin/truth?user=NAME`): the ledger, requests by kind,
    /// pushes sent and dropped; what a test needs to count lost and duplicated messages as
    /// `simulate` does.
    public func truth(of user: User) -> JSONValue {
        let world = user.world
        return .object([
            ("user", .string(user.name)),
            ("address", .string(world.me.value)),
            ("contacts", .array(world.allContacts.map { c in
                .object([("handle", .string(c.handle)), ("address", .string(c.address.value)), ("person", .int(world.isPerson(c.address) ? 1 : 0))])
            })),
            ("ledger", .array(world.ledger.map { m in
                .object([("txId", .string(m.txId)), ("conversation", .string(m.conversation.value)),
                         ("direction", .string(m.direction.rawValue)), ("kind", .string(m.kind.rawValue)),
                         ("blockTime", .int(m.blockTime.milliseconds))])
            })),
            ("requests", .object(world.indexer.requestsByKind.sorted { $0.key < $1.key }.map { ($0.key, .int(Int64($0.value))) })),
            ("pushes", .object([("sent", .int(Int64(world.push.sent))), ("dropped", .int(Int64(world.push.dropped)))])),
            ("realtimeDelivered", .int(Int64(world.node.deliveredCount))),
            // Node subscriptions the server holds for the user's sockets (one a socket at most).
            ("nodeSubscriptions", .int(Int64(user.link.subscriptions.count))),
            // The faults the user's world has now, by field (the truth a client given the
            // operator's token sets beside its engine's beliefs), and in words for people.
            ("faults", FaultsDocument.encode(world.faults)),
            ("faultWords", .array(world.faults.words.map { .string($0) })),
        ])
    }

    /// Users a page of the whole server's truth holds (`GET /admin/truth?page=N`): one
    /// request for every user's ledger at once took a server of 5 000 users to 6.2 GB.
    public static let truthPageSize = 100

    /// Ground truth of the whole server (`GET /admin/truth`), a page of users at a time, in
    /// the order they joined: `userCount`, this `page`, and `nextPage` while there are more.
    public func truth(page: Int = 0) -> JSONValue {
        let from = min(users.count, page * Self.truthPageSize)
        let to = min(users.count, from + Self.truthPageSize)
        var fields: [(String, JSONValue)] = [
            ("clock", .int(virtualNow.milliseconds)),
            ("speed", .string(speed.formatted())),
            ("seed", .int(Int64(bitPattern: seed))),
            ("userCount", .int(Int64(users.count))),
            ("page", .int(Int64(page))),
            ("users", .array(users[from..<to].map { truth(of: $0) })),
            ("played", .array(played.map { .object([("at", .int($0.at.milliseconds)), ("line", .string($0.line))]) })),
        ]
        if to < users.count { fields.append(("nextPage", .int(Int64(page + 1)))) }
        return .object(fields)
    }
}
