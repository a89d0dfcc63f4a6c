import Foundation
import SimulatedWorld
import Simulation
import SyncCore
import SyncEngine
import Testing

/// (b)'s proof of a gap must not read O(history) per catch-up. A proof asks the
/// node for the outputs since the last complete proof (less the reorg buffer), and a complete
/// proof moves the incoming objects' cursors, so the 6-hourly full sync reads hours, not days.
@Suite("Adaptive (b): a proof reads what is new")
struct ProvenGapBytesTests {
    /// Ten hours of an hourly commute at 400 messages an hour: the address's unspent set grows
    /// to thousands; each proof covers about an hour and ten minutes.
    static let commute: String = {
        var lines = ["seed 8", "duration 10h", "contacts 12", "traffic 400/h", "at 0m foreground"]
        for h in 0..<10 { lines += ["at \(h * 60 + 20)m background", "at \(h * 60 + 50)m foreground"] }
        return lines.joined(separator: "\n")
    }()

    @Test("each UTXO reply holds the outputs since the last proof, never the address's whole history")
    func repliesStaySmall() throws {
        let (run, s) = try measure(Self.commute, .adaptive)
        #expect(s.messagesLost == 0 && s.duplicates == 0)
        #expect(s.catchUpTargeted >= 8)
        let unspent = run.world.utxos.count
        #expect(unspent > 3000)
        // 400/h over 70 min is about 470; a reply of the whole set would be thousands.
        #expect(run.world.node.largestUtxoReply < 700, "largest reply \(run.world.node.largestUtxoReply) of \(unspent) unspent")
        #expect(run.world.node.largestUtxoReply > 200)
    }

    @Test("a complete proof moves every incoming object's cursor to when the set was asked; the next full sync reads little")
    func proofMovesCursors() throws {
        let (run, s) = try measure(Self.commute, .adaptive)
        let proofs = run.log.filter { if case .catchUpFinished(_, .targeted, _, _, 0, _, nil) = $0.event { true } else { false } }
        let lastProof = try #require(proofs.last)
        let incoming = run.driver.contacts.map { SyncObject.contextual($0.address, .incoming) } + [.handshakes(.incoming)]
        for object in incoming {
            let cursor = try #require(run.storage.cursor(object).lastFetchedBlockTime, "\(object)")
            #expect(cursor >= lastProof.at - .seconds(10), "\(object): cursor \(cursor), last proof \(lastProof.at)")
        }
        // Ground truth: every message the indexer served was carried at most about once more
        // than it was sent (realtime and push brought them; the fetches re-read little).
        #expect(run.world.indexer.messagesServed < s.messagesSent / 2, "served \(run.world.indexer.messagesServed) for \(s.messagesSent)")
    }
}
