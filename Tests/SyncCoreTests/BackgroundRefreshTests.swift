import Testing
@testable import SyncCore

@Suite("Background refresh (rule 14)")
struct BackgroundRefreshTests {
    /// What `PushWatch` says of a push that keeps up, as a grant is told it.
    static let keepsUp = PushWatch.Standing.keepsUp(vouched: 20, lastPushAgo: .minutes(3), likelyGap: .minutes(18), perHour: 12)

    @Test("rule 14: asks every 15 min in background-fetch, and in remote-push only while push is not reliable")
    func requestConditions() {
        var r = BackgroundRefresh()
        #expect(r.enteredBackground(mode: .backgroundFetch, pushState: .disabled, now: at(0))
                == [.request(earliest: at(900), reason: .modeBackgroundFetch)])
        var s = BackgroundRefresh()
        #expect(s.enteredBackground(mode: .remotePush, pushState: .unreliable, now: at(0)).count == 1)
        var t = BackgroundRefresh()
        #expect(t.enteredBackground(mode: .remotePush, pushState: .reliable, now: at(0)).isEmpty)
        var u = BackgroundRefresh()
        #expect(u.enteredBackground(mode: .off, pushState: .disabled, now: at(0)).isEmpty)
    }

    @Test("rule 14: a grant runs a light sync of 8 conversations with an 8 s budget")
    func lightSyncBudget() {
        var r = BackgroundRefresh()
        _ = r.enteredBackground(mode: .backgroundFetch, pushState: .disabled, now: at(0))
        #expect(r.refreshGranted(mode: .backgroundFetch, pushState: .disabled, now: at(1000))
                == [.runLightSync(conversations: 8, budgetEndsAt: at(1008))])
        #expect(r.deadlineReached(now: at(1007)).isEmpty)
        #expect(r.deadlineReached(now: at(1008)) == [.stopLightSync(reason: .budgetUsedUp(.seconds(8)))])
        #expect(r.lightSyncEnded(mode: .backgroundFetch, pushState: .disabled, now: at(1008))
                == [.request(earliest: at(1908), reason: .nextRefresh)])
    }

    @Test("rule 14: skipped when reliable push covers it (realtime never covers the background: rule 10)")
    func skippedWhenCovered() {
        var r = BackgroundRefresh()
        _ = r.enteredBackground(mode: .backgroundFetch, pushState: .disabled, now: at(0))
        let byPush = r.refreshGranted(mode: .remotePush, pushState: .reliable, now: at(0))
        #expect(byPush == [.skip(reason: .reliablePushCoversIt)])  // and no new request: not needed
        #expect(r.nextDeadline == nil)
    }

    @Test("rule 14: the OS expiring the task stops the light sync; foreground withdraws everything")
    func expiryAndForeground() {
        var r = BackgroundRefresh()
        _ = r.enteredBackground(mode: .backgroundFetch, pushState: .disabled, now: at(0))
        _ = r.refreshGranted(mode: .backgroundFetch, pushState: .disabled, now: at(900))
        #expect(r.refreshExpired(now: at(905)) == [.stopLightSync(reason: .expiredByOS)])
        #expect(r.refreshExpired(now: at(930)).isEmpty)
        _ = r.lightSyncEnded(mode: .backgroundFetch, pushState: .disabled, now: at(905))
        #expect(r.enteredForeground(now: at(950)) == [.cancelRequest(reason: .appInForeground)])
    }

    @Test("rule 14: a light sync stopped by the foreground asks for no further refresh")
    func noRequestFromForeground() {
        var r = BackgroundRefresh()
        _ = r.enteredBackground(mode: .backgroundFetch, pushState: .disabled, now: at(0))
        _ = r.refreshGranted(mode: .backgroundFetch, pushState: .disabled, now: at(900))
        #expect(r.enteredForeground(now: at(903)) == [.stopLightSync(reason: .cameToForeground)])
        #expect(r.lightSyncEnded(mode: .backgroundFetch, pushState: .disabled, now: at(903)).isEmpty)
        #expect(!r.requested)
    }

    @Test("rule 14: a change of push state or mode while backgrounded re-decides the request")
    func conditionsChangedInBackground() {
        var r = BackgroundRefresh()
        #expect(r.enteredBackground(mode: .remotePush, pushState: .reliable, now: at(0)).isEmpty)
        #expect(r.conditionsChanged(mode: .remotePush, pushState: .disabled, now: at(60))
                == [.request(earliest: at(960), reason: .safetyNet(.disabled))])
        #expect(r.conditionsChanged(mode: .remotePush, pushState: .unknown, now: at(70)).isEmpty)  // already asked
        #expect(r.conditionsChanged(mode: .off, pushState: .disabled, now: at(80))
                == [.cancelRequest(reason: .modeOff)])
        #expect(r.conditionsChanged(mode: .backgroundFetch, pushState: .disabled, now: at(90))
                == [.request(earliest: at(990), reason: .modeBackgroundFetch)])
        #expect(r.conditionsChanged(mode: .remotePush, pushState: .reliable, now: at(100))
                == [.cancelRequest(reason: .reliablePushCoversBackground)])
        _ = r.enteredForeground(now: at(200))
        #expect(r.conditionsChanged(mode: .remotePush, pushState: .disabled, now: at(210)).isEmpty)  // foreground: nothing to ask
    }

    @Test("(h): while push keeps up, a grant is let go until push has been trusted alone for an hour (since the background began, or the last look); then it looks, and the hour starts again; without (h), every such grant is let go")
    func aLookAnHour() {
        func looks(_ actions: [BackgroundRefresh.Action]) -> Bool { actions.contains { if case .look = $0 { true } else { false } } }
        var r = BackgroundRefresh(policy: .adaptive)
        _ = r.enteredBackground(mode: .remotePush, pushState: .reliable, now: at(0))
        #expect(!looks(r.refreshGranted(mode: .remotePush, pushState: .reliable, keepsUp: true, standing: Self.keepsUp, now: at(1800))))
        #expect(!looks(r.refreshGranted(mode: .remotePush, pushState: .reliable, keepsUp: true, standing: Self.keepsUp, now: at(3599))))
        #expect(looks(r.refreshGranted(mode: .remotePush, pushState: .reliable, keepsUp: true, standing: Self.keepsUp, now: at(3600))))
        _ = r.lookAnswered(moved: [], unbrought: [], mode: .remotePush, pushState: .reliable, now: at(3601))
        #expect(!looks(r.refreshGranted(mode: .remotePush, pushState: .reliable, keepsUp: true, standing: Self.keepsUp, now: at(5400))))
        #expect(looks(r.refreshGranted(mode: .remotePush, pushState: .reliable, keepsUp: true, standing: Self.keepsUp, now: at(7200))))
        var without = BackgroundRefresh(policy: SyncPolicy.adaptive.without("h"))
        _ = without.enteredBackground(mode: .remotePush, pushState: .reliable, now: at(0))
        #expect(!looks(without.refreshGranted(mode: .remotePush, pushState: .reliable, keepsUp: true, standing: Self.keepsUp, now: at(7200))))
    }

    @Test("(h): a trust resting on pushes no look has counted (`PushWatch.recordCounted`) is looked at by the first grant that finds it, whatever the hour; without (h), let go")
    func uncountedTrustLooked() {
        func looks(_ actions: [BackgroundRefresh.Action]) -> Bool { actions.contains { if case .look = $0 { true } else { false } } }
        var r = BackgroundRefresh(policy: .adaptive)
        _ = r.enteredBackground(mode: .remotePush, pushState: .reliable, now: at(0))
        #expect(looks(r.refreshGranted(mode: .remotePush, pushState: .reliable, keepsUp: true, recordCounted: false, standing: Self.keepsUp, now: at(900))))
        _ = r.lookAnswered(moved: [], unbrought: [], mode: .remotePush, pushState: .reliable, now: at(901))
        #expect(!looks(r.refreshGranted(mode: .remotePush, pushState: .reliable, keepsUp: true, recordCounted: true, standing: Self.keepsUp, now: at(1800))))
        var without = BackgroundRefresh(policy: SyncPolicy.adaptive.without("h"))
        _ = without.enteredBackground(mode: .remotePush, pushState: .reliable, now: at(0))
        #expect(!looks(without.refreshGranted(mode: .remotePush, pushState: .reliable, keepsUp: true, recordCounted: false, standing: Self.keepsUp, now: at(900))))
    }

    @Test("(h): push's record is counted once its deliveries since the last loss, less those nothing could have shown a loss beside, reach 20: a look that finds nothing missing counts them; later pushes keep the count")
    func recordCounted() {
        var w = PushWatch(policy: .adaptive)
        for i in 0..<25 { w.pushArrived(txId: "p\(i)", blockTime: at(Int64(i * 60)), at: at(Int64(i * 60 + 2)), watched: false) }
        #expect(w.keepsUp(.reliable, now: at(1500), background: true))
        #expect(!w.recordCounted)
        _ = w.looked(foundNothingMissing: false, at: at(1510))
        #expect(!w.recordCounted)  // a look that found something missing counts nothing
        _ = w.looked(foundNothingMissing: true, at: at(1520))
        #expect(w.recordCounted)
        w.pushArrived(txId: "q", blockTime: at(1530), at: at(1532), watched: false)
        #expect(w.recordCounted)
    }
}
