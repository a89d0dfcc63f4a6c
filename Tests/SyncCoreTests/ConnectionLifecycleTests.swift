import Testing
@testable import SyncCore

@Suite("Lifecycle and connection (rules 10–11)")
struct ConnectionLifecycleTests {
    @Test("rule 10: the first launch connects without forcing")
    func firstLaunchNotForced() {
        var c = ConnectionLifecycle()
        #expect(c.becameActive(now: at(0)) == [.connect(forced: false, reason: .coldStart)])
    }

    @Test("rule 10: foreground after a background forces a reconnect although isConnected is still true")
    func foregroundForcesReconnect() {
        var c = ConnectionLifecycle()
        _ = c.becameActive(now: at(0))
        _ = c.connected(now: at(1))
        _ = c.enteredBackground(now: at(10))
        #expect(c.isConnected)  // the OS killed the socket silently: the flag is stale
        #expect(c.realtime == .stale)
        let actions = c.becameActive(now: at(600))
        #expect(actions == [.connect(forced: true, reason: .afterBackground(isConnected: true))])
    }

    @Test("rules 8, 11: the reconnect completing asks for subscription-restart and the deferred app-active together")
    func reconnectPath() {
        var c = ConnectionLifecycle()
        _ = c.becameActive(now: at(0))
        let actions = c.connected(now: at(1))
        #expect(actions.contains(.requestCatchUp(triggers: [.subscriptionRestart, .appActive], reason: .reconnectCompleted)))
        #expect(c.nextDeadline == at(31))  // the fallback is disarmed; only the keepalive is due
        #expect(c.deadlineReached(now: at(3)).isEmpty)
    }

    @Test("rule 11: without a reconnect, the fallback fires 3 s after app-active")
    func fallbackPath() {
        var c = ConnectionLifecycle()
        _ = c.becameActive(now: at(0))
        #expect(c.nextDeadline == at(3))
        #expect(c.deadlineReached(now: at(2)).isEmpty)
        let fired = c.deadlineReached(now: at(3))
        #expect(fired == [.requestCatchUp(triggers: [.appActive], reason: .reconnectNotCompleted(within: .seconds(3)))])
        let late = c.connected(now: at(5))
        #expect(late.contains(.requestCatchUp(triggers: [.subscriptionRestart], reason: .reconnectCompletedAfterFallback)))
    }

    @Test("a failed connect retries with backoff in the foreground; a later success is rpc-restored")
    func retryBackoff() {
        var c = ConnectionLifecycle()
        _ = c.becameActive(now: at(0))
        _ = c.connectFailed(now: at(1), error: "down")
        #expect(c.realtime == .offline)
        #expect(c.nextDeadline == at(3))  // min(fallback 3 s, retry 1 + 2 s)
        let due = c.deadlineReached(now: at(3))
        #expect(due.contains(.connect(forced: false, reason: .reconnectAttempt(1))))
        _ = c.connectFailed(now: at(4), error: "down")
        #expect(c.nextDeadline == at(8))  // 4 s backoff
        _ = c.deadlineReached(now: at(8))
        let back = c.connected(now: at(9))
        #expect(back.contains(.requestCatchUp(triggers: [.subscriptionRestart], reason: .reconnectCompletedAfterFallback)))
        _ = c.disconnected(now: at(20), error: "flaky")
        _ = c.deadlineReached(now: at(22))
        #expect(c.connected(now: at(23)).contains(.requestCatchUp(triggers: [.rpcRestored], reason: .connectionRestored)))
    }

    @Test("no retries and no recovery while backgrounded")
    func backgroundQuiet() {
        var c = ConnectionLifecycle()
        _ = c.becameActive(now: at(0))
        _ = c.enteredBackground(now: at(1))
        #expect(c.nextDeadline == nil)
        #expect(c.connectFailed(now: at(2), error: "app suspended") == [.realtimeChanged(.offline, reason: .lost(.connectFailed("app suspended"), retryIn: nil))])
        #expect(c.nextDeadline == nil)
    }
}

@Suite("Subscription availability for polling (rules 11, 13)")
struct SubscriptionAvailabilityTests {
    @Test("until the recovery fallback fires the subscription is not 'unavailable'; after a failure it is")
    func availability() {
        var c = ConnectionLifecycle()
        _ = c.becameActive(now: at(0))
        #expect(!c.subscriptionUnavailable)
        _ = c.connectFailed(now: at(1), error: "down")
        #expect(!c.subscriptionUnavailable)  // the recovery fallback has not fired yet
        _ = c.deadlineReached(now: at(3))
        #expect(c.subscriptionUnavailable)
        #expect(c.realtime == .connecting && c.subscriptionUnavailable)  // retry attempt 2 under way
        _ = c.connected(now: at(4))
        #expect(!c.subscriptionUnavailable)
    }

    @Test("keepalive: a live foreground subscription is pinged every 30 s; an answer keeps it live")
    func keepaliveAnswered() {
        var c = ConnectionLifecycle()
        _ = c.becameActive(now: at(0))
        _ = c.connected(now: at(1))
        #expect(c.nextDeadline == at(31))
        #expect(c.deadlineReached(now: at(30)).isEmpty)  // spurious: nothing due yet
        #expect(c.deadlineReached(now: at(31)) == [.ping(1)])
        #expect(c.nextDeadline == at(41))  // the answer's deadline
        #expect(c.keepaliveAnswered(ping: 1, now: Instant(milliseconds: 31_200)).isEmpty)
        #expect(c.nextDeadline == Instant(milliseconds: 61_200))
        #expect(c.realtime == .live)
        #expect(c.keepaliveAnswered(ping: 1, now: at(62)).isEmpty)  // a late duplicate answer changes nothing
        #expect(c.nextDeadline == Instant(milliseconds: 61_200))
    }

    @Test("keepalive: no answer within 10 s calls the socket stale and forces a reconnect, which restores as rpc-restored")
    func keepaliveTimesOut() {
        var c = ConnectionLifecycle()
        _ = c.becameActive(now: at(0))
        _ = c.connected(now: at(1))
        _ = c.deadlineReached(now: at(31))
        let actions = c.deadlineReached(now: at(41))
        #expect(actions == [
            .realtimeChanged(.stale, reason: .keepaliveUnanswered(within: .seconds(10))),
            .connect(forced: true, reason: .keepaliveFailed),
        ])
        #expect(c.realtime == .connecting)
        #expect(!c.isConnected)
        #expect(c.keepaliveAnswered(ping: 1, now: at(42)).isEmpty)  // too late: already replaced
        let restored = c.connected(now: at(43))
        #expect(restored.contains(.requestCatchUp(triggers: [.rpcRestored], reason: .connectionRestored)))
    }

    @Test("keepalive: never in the background, where the app is suspended")
    func keepaliveNotInBackground() {
        var c = ConnectionLifecycle()
        _ = c.becameActive(now: at(0))
        _ = c.connected(now: at(1))
        _ = c.enteredBackground(now: at(20))
        #expect(c.nextDeadline == nil)
        #expect(c.deadlineReached(now: at(60)).isEmpty)
    }
}
