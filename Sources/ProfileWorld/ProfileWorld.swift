import ChatStore
import SimWorld

// A profile keeps the simulated world beside the chat, so that a relaunch resumes it. The
// store knows only rows of domain values; the world knows only `WorldPersistence`. This is
// where the two meet, so that neither imports the other.

extension SQLiteChatStorage: WorldPersistence {
    public func loadWorld() throws -> SavedWorld? {
        try loadWorldRecord().map {
            SavedWorld(seed: $0.seed, clock: $0.clock, tokenStatus: $0.tokenStatus, contacts: $0.contacts, ledger: $0.ledger)
        }
    }
}
