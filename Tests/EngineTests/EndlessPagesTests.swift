import Foundation
import SyncCore
import SyncEngine
import Testing

/// An indexer that says "more" forever does not keep a sync going forever. A page
/// is followed only by page + 1, after a page that held something, and never past
/// `Engine.mostPagesASync`; else the catch-up stops, incomplete, and is retried.
@Suite("An indexer's pages: never followed forever")
struct EndlessPagesTests {
    typealias Harness = SansIOEngineTests.Harness

    static func payment(_ txId: String, at ms: Int) -> String {
        #"{"txId": "\#(txId)", "sender": "kaspa:qalice", "recipient": "kaspa:qme", "kind": "payment", "blockTime": \#(ms), "payload": "1 KAS"}"#
    }

    /// The payments call in flight (its id and page), if any.
    static func paymentsCall(_ h: Harness) -> (id: Int, page: Int)? {
        for (id, call) in h.requests.sorted(by: { $0.key < $1.key }) {
            if case .payments(_, let page) = call { return (id, page) }
        }
        return nil
    }

    /// Answers the payments pages with `reply(page)` until none is asked; the pages asked.
    static func serve(_ h: Harness, _ reply: (Int) -> String) -> Int {
        var asked = 0
        while let (id, page) = paymentsCall(h), asked < 5000 {
            h.requests[id] = nil
            asked += 1
            h.send(.indexerReplied(id: id, .success(Data(reply(page).utf8))))
        }
        return asked
    }

    @Test("\"nextPage\": n + 1 forever, each page new: followed up to the most a sync follows, then the catch-up stops, incomplete, saying why")
    func forever() {
        let h = Harness()
        h.launchedAndLive(answering: false)
        let asked = Self.serve(h) { page in #"{"messages": [\#(Self.payment("p\(page)", at: 1000 + page))], "nextPage": \#(page + 1)}"# }
        #expect(asked == Engine.mostPagesASync)
        let errors = h.events().filter { if case .error = $0 { true } else { false } }.map(\.line)
        #expect(errors.contains { $0.contains("says page \(Engine.mostPagesASync) follows, past the \(Engine.mostPagesASync) pages a sync follows; the catch-up is incomplete") }, "\(errors.suffix(3))")
    }

    @Test("a page that says more follows after holding nothing, or names a page other than the next, ends the sync there")
    func badNext() {
        // An empty page that says more follows; a second page that names itself again.
        let cases: [(pages: Int, reply: (Int) -> String)] = [
            (1, { page in #"{"messages": [], "nextPage": \#(page + 1)}"# }),
            (2, { page in #"{"messages": [\#(Self.payment("q\(page)", at: 1000 + page))], "nextPage": \#(max(1, page))}"# }),
        ]
        for (pages, reply) in cases {
            let h = Harness()
            h.launchedAndLive(answering: false)
            #expect(Self.serve(h, reply) == pages)
            let lines = h.events().map(\.line)
            #expect(lines.contains { $0.contains("follows, ") && $0.contains("the catch-up is incomplete") }, "\(lines.suffix(4))")
        }
    }
}

/// A conversation's messages come a page at a time (docs/server.md#the-indexer-over-http), so
/// that an answer stays under the most a client reads (`MessageLimits.maxAnswerBytes`).
@Suite("A conversation's catch-up, a page at a time")
struct ConversationPagesTests {
    @Test("150 messages missed while every live channel was down: three pages of contextual_in (64, 64, 22), every message stored once, the cursor at the last")
    func threePages() throws {
        let lines = (0..<150).map { "at \(60 + $0)s receive alice \"missed \($0)\"" }.joined(separator: "\n")
        let run = try simulate("""
            duration 30m
            at 30s realtime down
            at 30s push drop 100%
            \(lines)
            at 10m realtime up
            at 10m push drop 0%
            at 11m sync
            """)
        let pages = run.world.indexer.calls.compactMap { entry -> Int? in
            if case .contextual(let a, .incoming, _, let page) = entry.call, run.world.contacts.first(where: { $0.handle == "alice" })?.address == a {
                return entry.at >= .zero + .minutes(11) ? page : nil
            }
            return nil
        }
        #expect(pages == [0, 1, 2], "\(pages)")
        let missed = run.storage.allMessages().filter { $0.message.body.hasPrefix("missed ") }
        #expect(missed.count == 150 && Set(missed.map(\.txId)).count == 150)
        run.checkInvariants()
        run.checkNothingLost()
    }
}
