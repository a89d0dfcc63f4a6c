import SyncCore
import SyncEngine

/// The simulated world as a profile keeps it, so that relaunching the profile resumes the
/// same world: its contacts, every message, the token, the wallet, and the clock.
public struct SavedWorld: Equatable, Sendable {
    public var seed: UInt64
    public var clock: Instant
    public var tokenStatus: TokenStatus
    public var contacts: [Contact]
    public var ledger: [NetworkMessage]

    public init(seed: UInt64, clock: Instant, tokenStatus: TokenStatus, contacts: [Contact], ledger: [NetworkMessage]) {
        self.seed = seed
        self.clock = clock
        self.tokenStatus = tokenStatus
        self.contacts = contacts
        self.ledger = ledger
    }
}

/// Where a world is kept between runs (the profile's store implements it).
public protocol WorldPersistence: AnyObject {
    func loadWorld() throws -> SavedWorld?
    func saveWorldClock(seed: UInt64, clock: Instant, tokenStatus: TokenStatus) throws
    func saveWorldMessage(_ message: NetworkMessage) throws
    func saveWorldContact(_ contact: Contact) throws
}

extension SimulatedWorld {
    /// Puts back a saved world: contacts, the ledger (every message is indexed by now), the
    /// wallet's outputs and the token. Call before anything runs.
    /// `noting`: outgoing txIds whose publications are wanted back: each one's message and the
    /// outputs it spent, as the restored wallet has them.
    @discardableResult
    public func restore(_ saved: SavedWorld, noting wanted: Set<String> = []) -> [String: Publication] {
        for c in saved.contacts {
            let restored = addContact(handle: c.handle, displayName: c.displayName, address: c.address)
            if c.muted { push.setMuted(restored.address, true) }  // the push service's list outlives a restart
        }
        let spentBy = restoreLedger(saved.ledger, noting: wanted)
        push.restoreToken(saved.tokenStatus)
        var publications: [String: Publication] = [:]
        for m in saved.ledger where m.direction == .outgoing {
            if let spent = spentBy[m.txId] { publications[m.txId] = Publication(message: m, spent: spent) }
        }
        return publications
    }
}
