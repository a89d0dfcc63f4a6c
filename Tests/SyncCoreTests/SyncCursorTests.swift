import Testing
@testable import SyncCore

@Suite("Sync cursors (rule 9)")
struct SyncCursorTests {
    @Test("rule 9: within 600 s of now a request starts at cursor − 600 s")
    func rewindWhenRecent() {
        let c = SyncCursor(lastFetchedBlockTime: at(10_000))
        #expect(c.requestStart(now: at(10_300), rewind: .seconds(600)) == at(9_400))
        #expect(c.requestStart(now: at(10_600), rewind: .seconds(600)) == at(9_400))
    }

    @Test("rule 9: an older cursor starts just after itself")
    func afterCursorWhenOld() {
        let c = SyncCursor(lastFetchedBlockTime: at(10_000))
        #expect(c.requestStart(now: at(10_601), rewind: .seconds(600)) == at(10_000) + .milliseconds(1))
    }

    @Test("rule 9: no cursor fetches from the beginning; a rewind never goes below zero")
    func edges() {
        #expect(SyncCursor().requestStart(now: at(50), rewind: .seconds(600)) == .zero)
        #expect(SyncCursor(lastFetchedBlockTime: at(100)).requestStart(now: at(200), rewind: .seconds(600)) == .zero)
    }

    @Test("rule 9: a cursor never moves backwards, and an empty page leaves it")
    func monotonic() {
        let c = SyncCursor(lastFetchedBlockTime: at(500))
        #expect(c.advanced(coveringUpTo: at(400), requestedAt: at(1_000), indexingLag: .seconds(3)).lastFetchedBlockTime == at(500))
        #expect(c.advanced(coveringUpTo: nil, requestedAt: at(1_000), indexingLag: .seconds(3)) == c)
        #expect(c.advanced(coveringUpTo: at(900), requestedAt: at(1_000), indexingLag: .seconds(3)).lastFetchedBlockTime == at(900))
    }

    @Test("rule 9: a cursor covers no more than the indexer had surely indexed when it was asked")
    func notPastTheIndexingLag() {
        // Two messages landed at 1000 s; the request left at 1001 s and the reply holds one of
        // them. The other may still be indexing: the cursor stops 3 s before the request.
        let c = SyncCursor(lastFetchedBlockTime: at(500))
        let after = c.advanced(coveringUpTo: at(1_000), requestedAt: at(1_001), indexingLag: .seconds(3))
        #expect(after.lastFetchedBlockTime == at(998))
        // So a request long after still asks for block time 1000.
        #expect(after.requestStart(now: at(5_000), rewind: .seconds(600)) <= at(1_000))
        // A message older than the lag is covered in full.
        #expect(c.advanced(coveringUpTo: at(900), requestedAt: at(1_001), indexingLag: .seconds(3)).lastFetchedBlockTime == at(900))
    }
}
