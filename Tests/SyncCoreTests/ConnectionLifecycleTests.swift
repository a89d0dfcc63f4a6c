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

@Suite("The lifecycle's one state: what is reachable and what each state holds (rules 10–11)")
struct ConnectionStateTests {
    @Test("rules 10–11: inputs walk the states of the diagram, each holding what it needs and nothing else")
    func walk() {
        var c = ConnectionLifecycle()
        #expect(c.state == .launched)
        _ = c.becameActive(now: at(0))
        #expect(c.state == .connecting(.init(since: at(0), recovery: .awaitingReconnect(fallbackAt: at(3))), isConnected: false))
        _ = c.connectFailed(now: at(1), error: "down")
        #expect(c.state == .offline(.init(since: at(0), recovery: .awaitingReconnect(fallbackAt: at(3)), failures: 1), retryAt: at(3)))
        _ = c.deadlineReached(now: at(3))  // the fallback and the retry, at one instant
        #expect(c.state == .connecting(.init(since: at(0), recovery: .fallbackFired, failures: 1), isConnected: false))
        _ = c.connected(now: at(4))
        #expect(c.state == .live(since: at(4), pingAt: at(34)))
        _ = c.deadlineReached(now: at(34))
        #expect(c.state == .pinging(since: at(4), ping: 1, deadline: at(44)))
        _ = c.keepaliveAnswered(ping: 1, now: at(35))
        #expect(c.state == .live(since: at(4), pingAt: at(65)))
        _ = c.enteredBackground(now: at(40))
        #expect(c.state == .backgroundStale(since: at(40)))
        _ = c.disconnected(now: at(50), error: "killed")
        #expect(c.state == .backgroundOffline(since: at(40), failures: 0))
        _ = c.becameActive(now: at(600))
        #expect(c.state == .connecting(.init(since: at(600), recovery: .awaitingReconnect(fallbackAt: at(603))), isConnected: false))
        _ = c.enteredBackground(now: at(601))
        #expect(c.state == .backgroundConnecting(since: at(601), failures: 0, isConnected: false))
        _ = c.connected(now: at(602))
        #expect(c.state == .backgroundStale(since: at(601)))
    }

    @Test("rules 10–11: in the background nothing is armed, whichever foreground state the app left; the next foreground recovers afresh")
    func backgroundDisarms() {
        var connecting = ConnectionLifecycle()
        _ = connecting.becameActive(now: at(0))
        var offline = connecting  // the fallback fired, then a retry failed: a retry and a spent recovery
        _ = offline.connectFailed(now: at(1), error: "down")
        _ = offline.deadlineReached(now: at(3))
        _ = offline.connectFailed(now: at(4), error: "down")
        var live = connecting
        _ = live.connected(now: at(1))
        var pinging = live
        _ = pinging.deadlineReached(now: at(31))
        for var c in [connecting, offline, live, pinging] {
            #expect(c.nextDeadline != nil)
            _ = c.enteredBackground(now: at(32))
            #expect(c.lifecycle == .background && c.nextDeadline == nil)
            let t = c.timers
            #expect(t.recoveryFallbackAt == nil && t.reconnectAt == nil && t.keepalivePingAt == nil && t.keepaliveAnswerBy == nil)
            #expect(c.deadlineReached(now: at(600)).isEmpty)
            _ = c.becameActive(now: at(600))
            #expect(c.timers.recoveryFallbackAt == at(603))
            #expect(c.connected(now: at(601)).contains(.requestCatchUp(triggers: [.subscriptionRestart, .appActive], reason: .reconnectCompleted)))
        }
    }

    @Test("realtime's liveness is the machine's: since when it is live, since when it is not in this foreground, when it last ended")
    func liveness() {
        var c = ConnectionLifecycle()
        #expect(c.liveSince == nil && c.notLiveSince == nil && c.lastLiveEndedAt == nil)
        _ = c.becameActive(now: at(0))
        #expect(c.liveSince == nil && c.notLiveSince == at(0))
        _ = c.connected(now: at(1))
        #expect(c.liveSince == at(1) && c.notLiveSince == nil && c.lastLiveEndedAt == nil)
        _ = c.deadlineReached(now: at(31))
        _ = c.keepaliveAnswered(ping: 1, now: at(32))
        #expect(c.liveSince == at(1))  // a ping answered: the same subscription
        _ = c.disconnected(now: at(40), error: "flaky")
        #expect(c.liveSince == nil && c.notLiveSince == at(40) && c.lastLiveEndedAt == at(40))
        _ = c.deadlineReached(now: at(42))
        _ = c.connectFailed(now: at(43), error: "down")
        #expect(c.notLiveSince == at(40))  // one outage, however many attempts
        _ = c.deadlineReached(now: at(47))
        _ = c.connected(now: at(48))
        #expect(c.liveSince == at(48) && c.notLiveSince == nil && c.lastLiveEndedAt == at(40))
        _ = c.deadlineReached(now: at(78))  // ping 2
        _ = c.deadlineReached(now: at(88))  // unanswered
        #expect(c.liveSince == nil && c.notLiveSince == at(88) && c.lastLiveEndedAt == at(88))
        _ = c.connected(now: at(89))
        _ = c.enteredBackground(now: at(100))
        #expect(c.liveSince == nil && c.notLiveSince == nil && c.lastLiveEndedAt == at(100))
        _ = c.becameActive(now: at(700))
        #expect(c.notLiveSince == at(700) && c.lastLiveEndedAt == at(100))
    }

    @Test("every sequence of six inputs after the first foreground reaches only the eight states, all of them, and what the machine shows agrees with each")
    func reachable() {
        var reached: Set<String> = [Self.kind(ConnectionLifecycle().state)]
        var problems: [String] = []
        func walk(_ c: ConnectionLifecycle, now: Instant, depth: Int, path: [String]) {
            reached.insert(Self.kind(c.state))
            for p in Self.problems(c) where problems.count < 10 { problems.append("\(path.joined(separator: ", ")): \(p)") }
            guard depth > 0 else { return }
            let later = now + .seconds(1)
            let due = max(c.nextDeadline ?? later, later)
            var pinged = 1
            if case .pinging(_, let ping, _) = c.state { pinged = ping }
            let inputs: [(String, Instant, (inout ConnectionLifecycle) -> Void)] = [
                ("active", later, { _ = $0.becameActive(now: later) }),
                ("background", later, { _ = $0.enteredBackground(now: later) }),
                ("connected", later, { _ = $0.connected(now: later) }),
                ("failed", later, { _ = $0.connectFailed(now: later, error: "down") }),
                ("dropped", later, { _ = $0.disconnected(now: later, error: "lost") }),
                ("answered", later, { [pinged] in _ = $0.keepaliveAnswered(ping: pinged, now: later) }),
                ("deadline", due, { _ = $0.deadlineReached(now: due) }),
            ]
            for (name, at, input) in inputs {
                var next = c
                input(&next)
                walk(next, now: at, depth: depth - 1, path: path + [name])
            }
        }
        var c = ConnectionLifecycle()
        _ = c.becameActive(now: at(0))
        walk(c, now: at(0), depth: 6, path: ["active"])
        #expect(problems.isEmpty, "\(problems)")
        #expect(reached == ["launched", "connecting", "offline", "live", "pinging", "backgroundConnecting", "backgroundOffline", "backgroundStale"])
    }

    static func kind(_ state: ConnectionLifecycle.State) -> String {
        switch state {
        case .launched: "launched"
        case .connecting: "connecting"
        case .offline: "offline"
        case .live: "live"
        case .pinging: "pinging"
        case .backgroundConnecting: "backgroundConnecting"
        case .backgroundOffline: "backgroundOffline"
        case .backgroundStale: "backgroundStale"
        }
    }

    /// What the machine shows that its state would not allow.
    static func problems(_ c: ConnectionLifecycle) -> [String] {
        let foreground = c.lifecycle == .foreground, live = c.realtime == .live, t = c.timers
        var found: [String] = []
        if (c.liveSince != nil) != live { found.append("liveSince \(String(describing: c.liveSince)) while \(c.realtime)") }
        if (c.notLiveSince != nil) != (foreground && !live) { found.append("notLiveSince \(String(describing: c.notLiveSince)) while \(c.lifecycle), \(c.realtime)") }
        if (c.backgroundSince != nil) != (c.lifecycle == .background) { found.append("backgroundSince while \(c.lifecycle)") }
        if live && !foreground { found.append("live outside the foreground") }
        if c.realtime == .stale && c.lifecycle != .background { found.append("stale in the \(c.lifecycle)") }
        if !foreground && c.nextDeadline != nil { found.append("a deadline in the \(c.lifecycle)") }
        if t.recoveryFallbackAt != nil && (!foreground || live) { found.append("a recovery while \(c.lifecycle), \(c.realtime)") }
        if t.reconnectAt != nil && (!foreground || c.realtime != .offline) { found.append("a retry while \(c.lifecycle), \(c.realtime)") }
        if (t.keepalivePingAt != nil || t.keepaliveAnswerBy != nil) && !live { found.append("a keepalive while \(c.realtime)") }
        if live && !c.isConnected { found.append("live, the socket not connected") }
        if let ended = c.lastLiveEndedAt, let since = c.liveSince, ended > since { found.append("live since \(since), ended later at \(ended)") }
        return found
    }
}
