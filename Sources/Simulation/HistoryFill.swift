import SimulatedWorld
import SyncCore
import SyncEngine

/// Fills a store with a large past history, for benchmarks: `count` messages spread over
/// `conversations` contacts (added to the world and the store), one every 10 s, ending just
/// before the run starts. Deterministic.
public enum HistoryFill {
    public static func fill(_ run: AppSession, messages count: Int, conversations: Int) throws {
        var contacts: [Contact] = run.world.contacts
        var n = contacts.count
        while contacts.count < conversations {
            n += 1
            contacts.append(run.world.addContact(handle: "contact\(n)", displayName: "Contact \(n)"))  // the app learns it
        }
        var batch: [StoredMessage] = []
        batch.reserveCapacity(10_000)
        let words = ["lorem", "ipsum", "dolor", "sit", "amet", "漢字", "🎉", "consectetur", "adipiscing", "elit"]
        for i in 0..<count {
            let contact = contacts[i % contacts.count]
            let t = Instant(milliseconds: Int64(i - count) * 10_000)
            let body = (0..<(3 + i % 12)).map { words[($0 + i) % words.count] }.joined(separator: " ")
            let m = NetworkMessage(txId: "history-\(i)", conversation: contact.address, direction: i % 3 == 0 ? .outgoing : .incoming,
                                   kind: .contextual, body: body, blockTime: t)
            batch.append(StoredMessage(message: m, receivedAt: t, via: .fetch))
            if batch.count == 10_000 {
                _ = try run.storage.commit(batch, cursor: nil)
                batch.removeAll(keepingCapacity: true)
            }
        }
        _ = try run.storage.commit(batch, cursor: nil)
    }
}
