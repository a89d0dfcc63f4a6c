import SyncCore

/// The people of a `synchat server`: its users, in the order they joined, as
/// each user's world sees them — contacts who are people, not simulated. One list shared by
/// every world of the server: a join adds one entry, and no world's contacts are rewritten
/// (with a copy in every world, written to disk, a join would take 355 ms at 900 users).
/// Lookups by address and by handle are O(1). Confined to the server's one event loop.
public final class People {
    public private(set) var all: [Contact] = []
    private var byAddress: [Address: Int] = [:]
    private var byHandle: [String: Int] = [:]

    public init() {}

    public var count: Int { all.count }

    /// Adds a person; one already known (by address) is left as it is.
    public func add(_ contact: Contact) {
        guard byAddress[contact.address] == nil else { return }
        byAddress[contact.address] = all.count
        byHandle[contact.handle] = all.count
        all.append(contact)
    }

    public func contains(_ address: Address) -> Bool { byAddress[address] != nil }
    public func contact(address: Address) -> Contact? { byAddress[address].map { all[$0] } }
    public func contact(handle: String) -> Contact? { byHandle[handle].map { all[$0] } }
    /// Where a person stands in `all`.
    public func index(of address: Address) -> Int? { byAddress[address] }
}
