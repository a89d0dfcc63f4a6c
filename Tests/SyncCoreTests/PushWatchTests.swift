import Testing
@testable import SyncCore

/// Improvements (f) and (g) (docs/spec.md#policies): push's pace and record (`PushWatch`), the
/// background refresh that watches push (`BackgroundRefresh`), the paced looks of (e)
/// (`PushVerifier`), and what they change in the gate and the poller.
@Suite("Adaptive (f), (g): push watched beyond the foreground, looks paced by push's record")
struct PushWatchTests {
    /// What `PushWatch` says of a push that keeps up, as a grant is told it.
    static let keepsUp = PushWatch.Standing.keepsUp(vouched: 20, lastPushAgo: .minutes(3), likelyGap: .minutes(18), perHour: 12)

    func watch() -> PushWatch {
        var w = PushWatch(policy: .adaptive)
        w.appResumed()
        return w
    }

    /// A steady traffic of one message every `gap` seconds from `from`, each pushed `lag` later.
    func steady(_ w: inout PushWatch, count: Int, from: Int64 = 0, gap: Int64 = 120, lag: Int64 = 2) {
        for i in 0..<Int64(count) {
            let landed = at(from + i * gap)
            w.messageSeen(txId: "m\(from + i * gap)", blockTime: landed)
            w.pushArrived(txId: "m\(from + i * gap)", blockTime: landed, at: landed + .seconds(lag))
        }
    }

    @Test("(g): a push that comes late still delivered its message; one that does not come within 5 min of it landing is a loss")
    func lateIsNotLost() {
        var w = watch()
        w.messageSeen(txId: "late", blockTime: at(0))
        w.messageSeen(txId: "lost", blockTime: at(10))
        #expect(w.nextDeadline == at(300))
        w.pushArrived(txId: "late", blockTime: at(0), at: at(90))  // 90 s: a miss for rule 2, delivered here
        #expect(w.judge(now: at(299)).isEmpty)
        #expect(w.nextDeadline == at(310))
        #expect(w.judge(now: at(310)) == [.lost(txId: "lost", landedAt: at(10))])
        #expect(w.losing && w.vouched == 0)
        // A push for a message no other channel brought is a delivery too.
        w.pushArrived(txId: "alone", blockTime: at(400), at: at(402))
        #expect(w.vouched == 1)
    }

    @Test("(g): a young tip a look left to push is owed until its own message reaches the app or a fetch covers it; neither a newer tip nor a newer message of the object pays it")
    func owedTips() {
        var w = watch()
        let dave = SyncObject.contextual(Address("kaspa:dave"), .incoming)
        #expect(w.owedTip(dave, cursor: nil) == nil && w.oldestOwed == nil)
        w.leftToPush(dave, tip: at(60))
        w.leftToPush(dave, tip: at(250))  // a newer tip hides the first: both are owed
        #expect(w.owedTip(dave, cursor: at(10)) == at(60) && w.oldestOwed == at(60))
        w.brought(dave, landedAt: at(300), byPush: true)  // a newer message pays neither
        #expect(!w.pushPaidSinceLook)
        w.brought(dave, landedAt: at(60), byPush: false)  // its own message pays it (a fetch: not push's)
        #expect(!w.pushPaidSinceLook)
        #expect(w.owedTip(dave, cursor: nil) == at(250))
        w.leftToPush(dave, tip: at(400))
        w.brought(dave, landedAt: at(400), byPush: true)  // its push pays it, until the next look
        #expect(w.pushPaidSinceLook)
        _ = w.looked(foundNothingMissing: true, at: at(500))
        #expect(!w.pushPaidSinceLook)
        #expect(w.owedTip(dave, cursor: at(250)) == nil && w.oldestOwed == nil)  // a fetch covered it
    }

    @Test("(f): push keeps up after 20 deliveries since its last loss, and not while silent longer than the traffic makes likely (13m48s at 30/h in the foreground, 18m24s in the background)")
    func keepsUp() {
        var w = watch()
        steady(&w, count: 19)
        #expect(!w.keepsUp(.reliable, now: at(19 * 120)))
        steady(&w, count: 1, from: 19 * 120)
        let last = at(19 * 120 + 2)
        #expect(w.likelyGap() == .seconds(828) && w.likelyGap(background: true) == .seconds(1104))
        #expect(w.keepsUp(.reliable, now: last + .seconds(60)))
        #expect(w.keepsUp(.unreliable, now: last + .seconds(60)))  // rule 2's misses may be late pushes: it delivers
        #expect(!w.keepsUp(.disabled, now: last + .seconds(60)))
        #expect(!w.keepsUp(.reliable, now: last + .seconds(828)))
        #expect(w.keepsUp(.reliable, now: last + .seconds(828), background: true))
        #expect(!w.keepsUp(.reliable, now: last + .seconds(1104), background: true))
        // A look that showed nothing missing counts the silence from it.
        _ = w.looked(foundNothingMissing: true, at: last + .seconds(800))
        #expect(w.keepsUp(.reliable, now: last + .seconds(900)))
        // One loss, and it must deliver 20 again.
        w.messageSeen(txId: "x", blockTime: last)
        _ = w.judge(now: last + .seconds(300))
        #expect(!w.keepsUp(.reliable, now: last + .seconds(300)) && w.losing)
    }

    @Test("(g): a loss is forgiven by 20 deliveries where a loss beside them would have shown (realtime watching, or a look since that found nothing missing); pushes alone, unwatched, do not forgive it")
    func forgivenOnlyWatched() {
        func lossy() -> PushWatch {
            var w = watch()
            w.messageSeen(txId: "x", blockTime: at(0))
            _ = w.judge(now: at(300))
            return w
        }
        // 25 pushes in the background (or with realtime down): push may be losing between them.
        var unwatched = lossy()
        for i in 1...25 { unwatched.pushArrived(txId: "p\(i)", blockTime: at(300 + Int64(i) * 60), at: at(302 + Int64(i) * 60), watched: false) }
        #expect(unwatched.losing && unwatched.vouched == 25)
        // A look that found something missing does not forgive; one that found nothing does.
        _ = unwatched.looked(foundNothingMissing: false, at: at(2000))
        #expect(unwatched.losing)
        _ = unwatched.looked(foundNothingMissing: true, at: at(2100))
        #expect(!unwatched.losing)
        // Fewer than 20 by then: the look clears what is unwatched, and watched ones finish it.
        var few = lossy()
        for i in 1...10 { few.pushArrived(txId: "p\(i)", blockTime: at(300 + Int64(i) * 60), at: at(302 + Int64(i) * 60), watched: false) }
        _ = few.looked(foundNothingMissing: true, at: at(1000))
        #expect(few.losing)
        for i in 11...19 { few.pushArrived(txId: "p\(i)", blockTime: at(300 + Int64(i) * 60), at: at(302 + Int64(i) * 60), watched: false) }
        #expect(few.losing, "19 delivered, 9 of them unwatched")
        _ = few.looked(foundNothingMissing: true, at: at(1700))
        #expect(few.losing, "19 of 20")
        few.pushArrived(txId: "p20", blockTime: at(1800), at: at(1802))
        #expect(!few.losing)
        // Watched by realtime, 20 forgive it as before.
        var watched = lossy()
        for i in 1...20 { watched.pushArrived(txId: "p\(i)", blockTime: at(300 + Int64(i) * 60), at: at(302 + Int64(i) * 60)) }
        #expect(!watched.losing)
    }

    @Test("(c) with (g): push is in doubt when a loss landed after it was found reliable, or losses come between deliveries; not once it came back whole from an outage")
    func doubt() {
        var outage = watch()
        outage.stateChanged(to: .reliable, now: at(0))
        steady(&outage, count: 5)
        for i in 0..<4 { outage.messageSeen(txId: "d\(i)", blockTime: at(600 + Int64(i) * 30)) }  // dead for 2 min
        _ = outage.judge(now: at(1000))
        outage.stateChanged(to: .unreliable, now: at(1000))
        #expect(outage.inDoubt)
        outage.stateChanged(to: .reliable, now: at(1100))  // back: a hit
        steady(&outage, count: 3, from: 1100)
        #expect(outage.losing && !outage.inDoubt)
        var intermittent = watch()
        intermittent.stateChanged(to: .reliable, now: at(0))
        steady(&intermittent, count: 3)
        intermittent.messageSeen(txId: "a", blockTime: at(50))
        steady(&intermittent, count: 1, from: 100)
        intermittent.messageSeen(txId: "b", blockTime: at(130))
        intermittent.stateChanged(to: .reliable, now: at(500))
        _ = intermittent.judge(now: at(500))
        #expect(intermittent.inDoubt)
    }

    @Test("(g): no loss is judged while the app is suspended; the next run judges what came due")
    func suspended() {
        var w = watch()
        w.appSuspended()
        w.messageSeen(txId: "a", blockTime: at(0))
        #expect(w.nextDeadline == nil && w.deadlineReached(now: at(400)).isEmpty)
        #expect(w.judge(now: at(400)) == [.lost(txId: "a", landedAt: at(0))])
    }

    // MARK: (f) in BackgroundRefresh

    @Test("(f): in remote-push a refresh is asked for while push is reliable too; seed asks for none")
    func asksWhileReliable() {
        var adaptive = BackgroundRefresh(policy: .adaptive)
        #expect(adaptive.enteredBackground(mode: .remotePush, pushState: .reliable, now: at(0))
                == [.request(earliest: at(900), reason: .watchingPush)])
        #expect(adaptive.conditionsChanged(mode: .remotePush, pushState: .unreliable, now: at(10)).isEmpty)  // asked already
        var seed = BackgroundRefresh(policy: .seed)
        #expect(seed.enteredBackground(mode: .remotePush, pushState: .reliable, now: at(0)).isEmpty)
        var without = BackgroundRefresh(policy: SyncPolicy.adaptive.without("f"))
        #expect(without.enteredBackground(mode: .remotePush, pushState: .reliable, now: at(0)).isEmpty)
    }

    @Test("(f): a grant while push keeps up is let go without a request, the next asked 30 min on; otherwise the refresh looks at the tips first")
    func grant() {
        var r = BackgroundRefresh(policy: .adaptive)
        _ = r.enteredBackground(mode: .remotePush, pushState: .reliable, now: at(0))
        #expect(r.refreshGranted(mode: .remotePush, pushState: .reliable, keepsUp: true, standing: Self.keepsUp, now: at(900))
                == [.skip(reason: .pushKeepsUp(Self.keepsUp)), .request(earliest: at(2700), reason: .nextRefreshKeepsUp(after: .minutes(30)))])
        #expect(r.refreshGranted(mode: .remotePush, pushState: .reliable, keepsUp: false, now: at(2700)) == [.look(budgetEndsAt: at(2708))])
        #expect(r.budgetEndsAt == at(2708))
        var fetch = BackgroundRefresh(policy: .adaptive)
        _ = fetch.enteredBackground(mode: .backgroundFetch, pushState: .disabled, now: at(0))
        #expect(fetch.refreshGranted(mode: .backgroundFetch, pushState: .disabled, keepsUp: true, now: at(900)) == [.look(budgetEndsAt: at(908))])
    }

    @Test("(f): the look syncs everything that moved while push is unknown or losing, and while push delivers only if it shows what push had not brought")
    func lookAnswered() {
        let alice = SyncObject.contextual(Address("kaspa:alice"), .incoming)
        let moved = [alice, .payments]
        func granted() -> BackgroundRefresh {
            var r = BackgroundRefresh(policy: .adaptive)
            _ = r.enteredBackground(mode: .remotePush, pushState: .reliable, now: at(0))
            _ = r.refreshGranted(mode: .remotePush, pushState: .reliable, now: at(900))
            return r
        }
        var unknown = granted()
        #expect(unknown.lookAnswered(moved: moved, unbrought: [], mode: .remotePush, pushState: .unknown, now: at(901))
                == [.syncMoved(objects: moved, reason: .safetyNet(moved: 2, pushLosing: false))])
        var losing = granted()
        #expect(losing.lookAnswered(moved: moved, unbrought: [], mode: .remotePush, pushState: .reliable, pushLosing: true, now: at(901))
                == [.syncMoved(objects: moved, reason: .safetyNet(moved: 2, pushLosing: true))])
        var delivering = granted()
        #expect(delivering.lookAnswered(moved: moved, unbrought: [], mode: .remotePush, pushState: .unreliable, now: at(901))
                == [.skip(reason: .tipsShowNothingUnbrought), .request(earliest: at(1801), reason: .nextRefresh)])
        var missing = granted()
        guard case .syncMoved(let objects, _) = missing.lookAnswered(moved: moved, unbrought: [alice], mode: .remotePush, pushState: .reliable,
                                                                      now: at(901)).first else { Issue.record("no sync"); return }
        #expect(objects == moved)
        var stopped = granted()
        _ = stopped.deadlineReached(now: at(908))
        #expect(stopped.lookAnswered(moved: moved, unbrought: [alice], mode: .remotePush, pushState: .reliable, now: at(909)).isEmpty)
    }

    // MARK: (g) in PushVerifier, the poller and the gate

    func paced() -> PushVerifier {
        var v = PushVerifier(policy: .adaptive)
        _ = v.conditionsChanged(foreground: true, notLiveSince: at(0), pushState: .reliable, polling: false, now: at(0))
        return v
    }

    @Test("(g): the first look once push is overdue (2 min), then twice as far while pushes come and nothing is missing, up to 8 min; 1 min after a look that found what push had not brought")
    func pace() {
        var v = paced()
        #expect(v.nextDeadline == at(120))
        #expect(v.deadlineReached(now: at(119)).isEmpty)
        #expect(v.deadlineReached(now: at(120)).last == .check)
        let quiet = PushVerifier.Watch(keepsUp: false, silenceEndsAt: nil)
        #expect(v.lookAnswered(.clean(pushes: 2), watch: quiet, now: at(121)) == [.scheduled(at: at(360), reason: .pushKeptUp(next: .minutes(4)))])
        _ = v.deadlineReached(now: at(360))
        _ = v.lookAnswered(.clean(pushes: 2), watch: quiet, now: at(361))
        #expect(v.nextDeadline == at(840))
        _ = v.deadlineReached(now: at(840))
        _ = v.lookAnswered(.clean(pushes: 0), watch: quiet, now: at(841))  // no push came: as far again
        #expect(v.nextDeadline == at(1320))
        _ = v.deadlineReached(now: at(1320))
        _ = v.lookAnswered(.clean(pushes: 3), watch: quiet, now: at(1321))
        #expect(v.nextDeadline == at(1800))  // 8 min at most
        _ = v.deadlineReached(now: at(1800))
        #expect(v.lookAnswered(.unbrought, watch: quiet, now: at(1801))
                == [.scheduled(at: at(1860), reason: .unbrought(next: .minutes(1)))])
        // A look with no answer is tried again a minute later.
        _ = v.deadlineReached(now: at(1860))
        v.lookFailed(now: at(1861))
        #expect(v.nextDeadline == at(1921))
    }

    @Test("(g): while push loses messages lately, looks that show it keeping up put the next twice as far up to 4 min, not 8: a message it lost waits less than the foreground's 5 min goal")
    func losingPace() {
        var v = paced()
        _ = v.deadlineReached(now: at(120))
        let losing = PushVerifier.Watch(keepsUp: false, silenceEndsAt: nil, losing: true)
        _ = v.lookAnswered(.clean(pushes: 2), watch: losing, now: at(121))
        #expect(v.nextDeadline == at(360))
        _ = v.deadlineReached(now: at(360))
        _ = v.lookAnswered(.clean(pushes: 2), watch: losing, now: at(361))
        #expect(v.nextDeadline == at(600))  // 4 min at most while losing
        _ = v.deadlineReached(now: at(600))
        _ = v.lookAnswered(.clean(pushes: 2), watch: PushVerifier.Watch(keepsUp: false, silenceEndsAt: nil), now: at(601))
        #expect(v.nextDeadline == at(1080))  // no longer losing: 8 min
    }

    @Test("(g): a look with no answer is tried again 1 min later, then twice as far for each more in a row, up to 4 min (a down indexer is not asked every minute of its downtime); an answer ends it")
    func failedLooksBackOff() {
        var v = paced()
        _ = v.deadlineReached(now: at(120))
        let none = PushVerifier.Watch(keepsUp: false, silenceEndsAt: nil)
        _ = v.lookAnswered(.unbrought, watch: none, now: at(121))  // next in 1 min, at 180
        var t: Int64 = 180
        for wait: Int64 in [60, 120, 240, 240, 240] {
            #expect(v.deadlineReached(now: at(t)).last == .check)
            v.lookFailed(now: at(t))
            #expect(v.nextDeadline == at(t + wait), "after a failure at \(t)")
            t += wait
        }
        _ = v.deadlineReached(now: at(t))
        _ = v.lookAnswered(.unbrought, watch: none, now: at(t))
        #expect(v.nextDeadline == at(t + 60))
        _ = v.deadlineReached(now: at(t + 60))
        v.lookFailed(now: at(t + 60))
        #expect(v.nextDeadline == at(t + 120), "an answer starts the count again")
    }

    @Test("(g): a look that shows nothing landed since the last one (a quiet world) puts the next twice as far, up to 4 min (pushes earn 8); what it covers starts where realtime stopped")
    func quietPace() {
        var v = paced()
        #expect(v.lookCoversSince == nil)
        _ = v.deadlineReached(now: at(120))
        #expect(v.lookCoversSince == at(0))  // the first look covers what landed since realtime stopped
        let none = PushVerifier.Watch(keepsUp: false, silenceEndsAt: nil)
        #expect(v.lookAnswered(.quiet, watch: none, now: at(121))
                == [.scheduled(at: at(360), reason: .quiet(next: .minutes(4)))])
        _ = v.deadlineReached(now: at(360))
        #expect(v.lookCoversSince == at(120))
        _ = v.lookAnswered(.quiet, watch: none, now: at(361))
        #expect(v.nextDeadline == at(600))  // 4 min at most: a quiet world shows nothing of push
        _ = v.deadlineReached(now: at(600))
        _ = v.lookAnswered(.clean(pushes: 2), watch: none, now: at(601))
        #expect(v.nextDeadline == at(1080))  // pushes came: 8 min
        _ = v.deadlineReached(now: at(1080))
        _ = v.lookAnswered(.quiet, watch: none, now: at(1081))
        #expect(v.nextDeadline == at(1560))  // a quiet look keeps what pushes earned
        // Messages landed and no push came: as far again.
        _ = v.deadlineReached(now: at(1560))
        _ = v.lookAnswered(.clean(pushes: 0), watch: none, now: at(1561))
        #expect(v.nextDeadline == at(2040))
    }

    @Test("(g): a miss in a row whose push came late after all (a slow push) is not one push may have lost; one whose push has not come, or counted before this launch, is")
    func missedUnpushed() {
        var w = PushWatch(policy: .adaptive)
        #expect(!w.missedUnpushed(0))
        #expect(w.missedUnpushed(2))  // misses the watch did not see (persisted from the last launch)
        w.missed(txId: "a", startsStreak: true)
        w.missed(txId: "b", startsStreak: false)
        #expect(w.missedUnpushed(2))
        w.pushArrived(txId: "a", blockTime: at(0), at: at(90))
        #expect(w.missedUnpushed(2))
        w.pushArrived(txId: "b", blockTime: at(10), at: at(100))
        #expect(!w.missedUnpushed(2))  // both came, late: push is slow
        w.missed(txId: "c", startsStreak: true)  // a new streak after a hit
        #expect(w.missedUnpushed(1))
        #expect(!w.missedUnpushed(0))  // a hit ended it
    }

    @Test("(g): a look that left a young tip to push comes back once push is overdue for it (2 min after it landed), not later as the pace would; once only")
    func owedTipPace() {
        var v = paced()
        _ = v.deadlineReached(now: at(120))
        let quiet = PushVerifier.Watch(keepsUp: false, silenceEndsAt: nil)
        #expect(v.lookAnswered(.clean(pushes: 2), watch: quiet, now: at(121)) == [.scheduled(at: at(360), reason: .pushKeptUp(next: .minutes(4)))])
        _ = v.deadlineReached(now: at(360))
        // The tip of 00:05:30 was 30 s old at the look: push is overdue for it at 00:07:30.
        let owing = PushVerifier.Watch(keepsUp: false, silenceEndsAt: nil, oldestOwed: at(330))
        #expect(v.lookAnswered(.clean(pushes: 1), watch: owing, now: at(361)) == [.scheduled(at: at(450), reason: .owed(landedAt: at(330)))])
        _ = v.deadlineReached(now: at(450))
        // That look counted it (a fetch pays it); were it still owed, the pace rules again.
        #expect(v.lookAnswered(.unbrought, watch: owing, now: at(451))
                == [.scheduled(at: at(510), reason: .unbrought(next: .minutes(1)))])
        _ = v.deadlineReached(now: at(510))
        _ = v.lookAnswered(.clean(pushes: 1), watch: owing, now: at(511))
        #expect(v.nextDeadline == at(630))
    }

    @Test("(g): a look that saw no push but left a young tip to push waits for that push's verdict: the push, come in time, puts the next look twice as far (push kept up); a fetch that pays the tip, or a look that answers first, does not")
    func owedPaidByPush() {
        var v = paced()
        _ = v.deadlineReached(now: at(120))
        let none = PushVerifier.Watch(keepsUp: false, silenceEndsAt: nil)
        // The tip of 00:01:50 was 10 s old at the look, and no push had come since realtime stopped.
        let owing = PushVerifier.Watch(keepsUp: false, silenceEndsAt: nil, oldestOwed: at(110))
        _ = v.lookAnswered(.clean(pushes: 0), watch: owing, now: at(121))
        #expect(v.nextDeadline == at(230))  // push is overdue for it at 00:03:50
        // Its push comes at 00:03:20: the look's verdict is push kept up, and the wait doubles.
        let paid = PushVerifier.Watch(keepsUp: false, silenceEndsAt: nil, pushPaidOwed: true)
        #expect(v.conditionsChanged(foreground: true, notLiveSince: at(0), pushState: .reliable, polling: false, watch: paid, now: at(200))
                == [.scheduled(at: at(360), reason: .pushPaidOwed(next: .minutes(4)))])
        #expect(v.conditionsChanged(foreground: true, notLiveSince: at(0), pushState: .reliable, polling: false, watch: paid, now: at(201)).isEmpty)  // once
        // Paid otherwise (a fetch: no push came), the pace stays.
        var f = paced()
        _ = f.deadlineReached(now: at(120))
        _ = f.lookAnswered(.clean(pushes: 0), watch: owing, now: at(121))
        _ = f.conditionsChanged(foreground: true, notLiveSince: at(0), pushState: .reliable, polling: false, watch: none, now: at(200))
        #expect(f.nextDeadline == at(240))
        // A look that saw pushes is not waiting for one.
        var p = paced()
        _ = p.deadlineReached(now: at(120))
        _ = p.lookAnswered(.clean(pushes: 2), watch: owing, now: at(121))
        _ = p.conditionsChanged(foreground: true, notLiveSince: at(0), pushState: .reliable, polling: false, watch: paid, now: at(200))
        #expect(p.nextDeadline == at(360))
    }

    @Test("(g): once push keeps up, one look 15 min into the trust counts what it brought (a lossy push's lucky streak ends there); after it, a look only when push has been silent for longer than the traffic makes likely; a loss makes the next trust earn its look again; without (g), every minute")
    func silenceOnly() {
        var v = paced()
        _ = v.deadlineReached(now: at(120))
        let keeps = PushVerifier.Watch(keepsUp: true, silenceEndsAt: at(3000))
        #expect(v.lookAnswered(.clean(pushes: 5), watch: keeps, now: at(121))
                == [.scheduled(at: at(1020), reason: .trusted(confirmed: false, firstLookIn: .minutes(15)))])
        _ = v.deadlineReached(now: at(1020))
        #expect(v.lookAnswered(.clean(pushes: 8), watch: keeps, now: at(1021))
                == [.scheduled(at: at(3000), reason: .trusted(confirmed: true, firstLookIn: .minutes(15)))])
        _ = v.conditionsChanged(foreground: true, notLiveSince: at(0), pushState: .reliable, polling: false,
                                watch: PushVerifier.Watch(keepsUp: true, silenceEndsAt: nil), now: at(1100))
        #expect(v.nextDeadline == nil)
        // Push lost one, then earned its trust again: that trust is looked at 15 min after the last look.
        _ = v.conditionsChanged(foreground: true, notLiveSince: at(0), pushState: .reliable, polling: false,
                                watch: PushVerifier.Watch(keepsUp: false, silenceEndsAt: nil, losing: true), now: at(1200))
        _ = v.conditionsChanged(foreground: true, notLiveSince: at(0), pushState: .reliable, polling: false,
                                watch: PushVerifier.Watch(keepsUp: true, silenceEndsAt: nil), now: at(1300))
        #expect(v.nextDeadline == at(1920))
        var e = PushVerifier(policy: SyncPolicy.adaptive.without("g"))
        _ = e.conditionsChanged(foreground: true, notLiveSince: at(0), pushState: .reliable, polling: false, now: at(0))
        #expect(e.nextDeadline == at(60))
    }

    @Test("(g): push unreliable but delivering (late) is not failing: the looks go on and no poll starts; a loss makes it fail")
    func lateNotFailing() {
        var v = paced()
        #expect(v.conditionsChanged(foreground: true, notLiveSince: at(0), pushState: .unreliable, pushFailing: false, polling: false, now: at(10)).isEmpty)
        #expect(v.nextDeadline == at(120))
        _ = v.deadlineReached(now: at(120))
        #expect(v.conditionsChanged(foreground: true, notLiveSince: at(0), pushState: .unreliable, pushFailing: true, polling: false, now: at(130))
                == [.stopped(reason: .pushUnreliablePollingTakesOver)])
    }

    @Test("(g): polling for an unreliable push waits until realtime has been gone 60 s (a flaky socket is back in seconds); rule 13 in other modes does not wait")
    func pollWaits() {
        var p = FallbackPoller(policy: .adaptive)
        let started = p.conditionsChanged(lifecycle: .foreground, realtimeAvailable: false, mode: .remotePush, syncRunning: false,
                                          pushUnreliable: true, realtimeGoneSince: at(100), now: at(102))
        #expect(started == [.started(firstPollAt: at(160), reason: .init(mode: .remotePush, pace: .due))])
        #expect(p.deadlineReached(now: at(159), syncRunning: false).isEmpty)
        var off = FallbackPoller(policy: .adaptive)
        #expect(off.conditionsChanged(lifecycle: .foreground, realtimeAvailable: false, mode: .off, syncRunning: false,
                                      realtimeGoneSince: at(100), now: at(102)) == [.started(firstPollAt: at(102), reason: .init(mode: .off, pace: .due))])
    }

    @Test("(g) in the gate: (c) trails a foreground outage only while push is in doubt; rule 4's catch-up is done by a full one just finished; a reconnect's gap is proven with push unreliable too, not without push")
    func gate() {
        var g = CatchUpGate(policy: .adaptive)
        g.finished(kind: .full, succeeded: true, now: at(0))
        _ = g.triggered(.rpcRestored, forced: false, pushState: .reliable, now: at(60), running: nil, pushInDoubt: false)
        #expect(g.trailingDue == nil)
        _ = g.triggered(.rpcRestored, forced: false, pushState: .reliable, now: at(60), running: nil, pushInDoubt: true)
        #expect(g.trailingDue == at(600))
        var after = CatchUpGate(policy: .adaptive)
        after.finished(kind: .full, succeeded: true, now: at(0))
        _ = after.triggered(.appActive, forced: false, pushState: .reliable, now: at(60), running: nil, pushInDoubt: false)
        #expect(after.trailingDue == at(600))  // a background's gap is push's alone: always trailed
        var c = CatchUpGate(policy: SyncPolicy.adaptive.without("g"))
        c.finished(kind: .full, succeeded: true, now: at(0))
        _ = c.triggered(.rpcRestored, forced: false, pushState: .reliable, now: at(60), running: nil, pushInDoubt: false)
        #expect(c.trailingDue == at(600))
        #expect(g.justCaughtUp(now: at(60), within: .seconds(60)) && !g.justCaughtUp(now: at(61), within: .seconds(60)))
        #expect(!c.justCaughtUp(now: at(30), within: .seconds(60)))
        #expect(g.kindToStart(forced: false, pushState: .unreliable, foreground: true, realtimeLive: true, trigger: .rpcRestored, now: at(700)) == .targeted)
        #expect(g.kindToStart(forced: false, pushState: .unreliable, foreground: true, realtimeLive: true, trigger: .appActive, now: at(700)) == .full)
        #expect(g.kindToStart(forced: false, pushState: .disabled, foreground: true, realtimeLive: true, trigger: .rpcRestored, now: at(700)) == .full)
        #expect(c.kindToStart(forced: false, pushState: .unreliable, foreground: true, realtimeLive: true, trigger: .rpcRestored, now: at(700)) == .full)
    }

    @Test("(c) in the gate: a fetch of the objects a look named does not end the trailing catch-up of a gap; a full sync or a proof does (fuzz case 117774)")
    func trailingOutlivesANamedFetch() {
        var g = CatchUpGate(policy: .adaptive)
        g.finished(kind: .full, succeeded: true, now: at(0))
        _ = g.triggered(.appActive, forced: false, pushState: .reliable, now: at(60), running: nil, pushInDoubt: false)
        #expect(g.trailingDue == at(600))
        g.finished(kind: .targeted, succeeded: true, now: at(120), coversAll: false)
        #expect(g.trailingDue == at(600))
        g.finished(kind: .targeted, succeeded: true, now: at(180))
        #expect(g.trailingDue == nil)
    }

    @Test("(g) in the gate: a reconnect inside the debounce while push is in doubt starts the targeted sync its UTXO proof allows; not in doubt, rule 6 skips it; seed and adaptive without (g) skip it")
    func reconnectWhilePushInDoubt() {
        func reconnect(_ policy: SyncPolicy, inDoubt: Bool) -> CatchUpGate.Action {
            var g = CatchUpGate(policy: policy)
            g.finished(kind: .full, succeeded: true, now: at(0))
            return g.triggered(.rpcRestored, forced: false, pushState: .reliable, now: at(60), running: nil,
                               foreground: true, realtimeLive: true, pushInDoubt: inDoubt)
        }
        let skipped = CatchUpGate.Action.skip(trigger: .rpcRestored, lastFinishedAgo: .seconds(60), nextAllowedIn: .seconds(540))
        #expect(reconnect(.adaptive, inDoubt: true) == .start(trigger: .rpcRestored, forced: false, kind: .targeted))
        #expect(reconnect(.adaptive, inDoubt: false) == skipped)
        #expect(reconnect(.seed, inDoubt: true) == skipped)
        #expect(reconnect(SyncPolicy.adaptive.without("g"), inDoubt: true) == skipped)
    }

    // MARK: (a), ordered

    @Test("(a): a fetched miss judged after a hit on a tx that landed later is not a miss in a row")
    func superseded() {
        let alice = Address("kaspa:alice")
        var m = PushReliability(policy: .adaptive)
        _ = m.conditionsChanged(PushConditions(mode: .remotePush, permissionGranted: true, tokenStatus: .active), now: at(0))
        m.appSuspended()
        #expect(m.fetchedTx(txId: "young", from: alice, blockTime: at(100), now: at(130)).isEmpty)  // waits for its push
        _ = m.fetchedTx(txId: "later", from: alice, blockTime: at(120), pushArrivedAt: at(122), now: at(130))  // a hit
        m.appResumed()
        #expect(m.deadlineReached(now: at(400)) == [.observedSuperseded(txId: "young", via: .fetch)])
        #expect(m.consecutiveMisses == 0)
        var seed = PushReliability(policy: .seed)
        _ = seed.conditionsChanged(PushConditions(mode: .remotePush, permissionGranted: true, tokenStatus: .active), now: at(0))
        seed.appResumed()
        _ = seed.realtimeTxSeen(txId: "a", from: alice, landedAt: at(100), now: at(100))
        _ = seed.realtimeTxSeen(txId: "b", from: alice, landedAt: at(110), now: at(110))
        _ = seed.pushReceived(txId: "b", arrivedAt: at(111), now: at(111))
        #expect(seed.deadlineReached(now: at(160)) == [.observedMiss(txId: "a", consecutiveMisses: 1, via: .realtime)])
    }

    @Test("(a): a realtime miss judged late (its grace ran out while the app was suspended), after a fetched hit on a tx that landed later, is not a miss in a row; judged on time it is")
    func supersededWhenJudgedLate() {
        let alice = Address("kaspa:alice")
        let operational = PushConditions(mode: .remotePush, permissionGranted: true, tokenStatus: .active)
        var m = PushReliability(policy: .adaptive)
        _ = m.conditionsChanged(operational, now: at(0))
        m.appResumed()
        _ = m.realtimeTxSeen(txId: "seen", from: alice, landedAt: at(100), now: at(100))
        m.appSuspended()  // its grace runs out at 160, in the background
        _ = m.fetchedTx(txId: "later", from: alice, blockTime: at(1000), pushArrivedAt: at(1002), now: at(1010))  // a refresh's hit
        m.appResumed()
        #expect(m.deadlineReached(now: at(1800)) == [.observedSuperseded(txId: "seen", via: .realtime)])
        #expect(m.consecutiveMisses == 0)
        var live = PushReliability(policy: .adaptive)
        _ = live.conditionsChanged(operational, now: at(0))
        live.appResumed()
        _ = live.realtimeTxSeen(txId: "a", from: alice, landedAt: at(100), now: at(100))
        _ = live.realtimeTxSeen(txId: "b", from: alice, landedAt: at(110), now: at(110))
        _ = live.pushReceived(txId: "b", arrivedAt: at(111), now: at(111))
        #expect(live.deadlineReached(now: at(160)) == [.observedMiss(txId: "a", consecutiveMisses: 1, via: .realtime)])
    }
}
