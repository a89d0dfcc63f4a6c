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
        #expect(c.advanced(coveringUpTo: at(400)).lastFetchedBlockTime == at(500))
        #expect(c.advanced(coveringUpTo: nil) == c)
        #expect(c.advanced(coveringUpTo: at(900)).lastFetchedBlockTime == at(900))
    }
}
