import SyncCore
@testable import SyncEngine
import Testing

/// `UnsavedChanges.contains` skips its tables while they are empty (the engine asks it for
/// every fetched message and every entry of a UTXO set): it must still find a message in
/// flight, one kept after a failed write, and forget them once stored.
@Suite("Unsaved changes: what is not stored yet is still known")
struct UnsavedChangesTests {
    static func message(_ id: String) -> StoredMessage {
        StoredMessage(message: NetworkMessage(txId: id, conversation: Address("kaspa:qa"), direction: .incoming, kind: .contextual,
                                              body: id, blockTime: .zero),
                      receivedAt: .zero, via: .fetch)
    }

    @Test("a message is known while its write is in flight, while kept after a failure, and not after it is stored")
    func containsFollowsTheWrites() {
        var u = UnsavedChanges()
        #expect(!u.contains(txId: "a"))
        u.writing(Self.message("a"))
        u.writing(Self.message("b"))
        #expect(u.contains(txId: "a") && u.contains(txId: "b") && !u.contains(txId: "c"))
        u.written(["a"], stored: true)
        u.written(["b"], stored: false)  // kept, to be written again
        #expect(!u.contains(txId: "a") && u.contains(txId: "b"))
        let kept = u.keep(Self.message("c"))
        #expect(kept)
        #expect(u.contains(txId: "c"))
        u.messagesStored()
        #expect(!u.contains(txId: "b") && !u.contains(txId: "c"))
    }
}
