import SyncCore

// The words of the pure machines' reasons: the core decides and says why in values; the
// event log says it in these words, here at the engine's edge and nowhere else.

extension NotificationPresenter.Suppression {
    public var words: String {
        switch self {
        case .notificationsOff: return "notifications are off"
        case .muted(let handle): return "\(handle) is muted"
        case .rateLimited(let every): return "rate limit: one per \(every) per conversation"
        }
    }
}

extension FallbackPoller.StartReason {
    public var words: String {
        let modeWords = mode == .remotePush ? "remote-push, push unreliable" : mode.rawValue
        switch pace {
        case .every(let every): return "realtime unavailable, mode \(modeWords); every \(every)"
        case .afterRunningSync(let delay): return "realtime unavailable, mode \(modeWords); next poll \(delay) after the running sync completes"
        case .due: return "realtime unavailable, mode \(modeWords)"
        }
    }
}

extension FallbackPoller.StopReason {
    public var words: String {
        switch self {
        case .notInForeground: return "app not in foreground"
        case .realtimeBack: return "realtime is back"
        case .pushNoLongerUnreliable: return "push is no longer unreliable"
        case .modeRemotePush: return "mode is remote-push"
        }
    }
}

extension ConnectionLifecycle.ConnectReason {
    public var words: String {
        switch self {
        case .coldStart: return "cold start"
        case .afterBackground(nil): return "after background"
        case .afterBackground(let claimed?): return "after background: isConnected=\(claimed) is not trusted"
        case .keepaliveFailed: return "keepalive failed"
        case .reconnectAttempt(let n): return "reconnect attempt \(n)"
        }
    }
}

extension ConnectionLifecycle.CatchUpReason {
    public var words: String {
        switch self {
        case .appActive: return "app active"
        case .subscriptionRestarted: return "subscription restarted"
        case .reconnectCompleted: return "reconnect completed"
        case .reconnectCompletedAfterFallback: return "reconnect completed after the fallback"
        case .connectionRestored: return "realtime connection restored"
        case .reconnectNotCompleted(let within): return "reconnect not completed \(within) after app-active"
        }
    }
}

extension ConnectionLifecycle.RealtimeReason {
    public var words: String {
        switch self {
        case .backgrounded: return "backgrounded: the OS may kill the socket silently"
        case .connectedWhileBackgrounded: return "connected while backgrounded"
        case .subscribed: return "subscribed"
        case .keepaliveUnanswered(let within): return "no keepalive answer within \(within): the socket died silently"
        case .lost(let loss, let retryIn):
            let lost: String
            switch loss {
            case .connectFailed(let error): lost = "connect failed: \(error)"
            case .disconnected(let error): lost = "disconnected: \(error)"
            }
            return lost + (retryIn.map { "; retry in \($0)" } ?? "")
        }
    }
}

extension BackgroundRefresh.RequestReason {
    public var words: String {
        switch self {
        case .every(let interval): return "every \(interval)"
        case .modeBackgroundFetch: return "mode background-fetch"
        case .watchingPush: return "watching push: only a look tells a push that died from a quiet one"
        case .safetyNet(let state): return "safety net: push \(state.rawValue)"
        case .nextRefresh: return "next refresh"
        case .nextRefreshKeepsUp(let after): return "next refresh: push keeps up, \(after) later"
        }
    }
}

extension BackgroundRefresh.CancelReason {
    public var words: String {
        switch self {
        case .modeOff: return "notification mode is off"
        case .reliablePushCoversBackground: return "reliable push covers the background"
        case .appInForeground: return "app in foreground"
        }
    }
}

extension BackgroundRefresh.SkipReason {
    public var words: String {
        switch self {
        case .modeOff: return "notification mode is off"
        case .reliablePushCoversIt: return "reliable push covers it"
        case .pushKeepsUp(let standing): return standing?.words ?? ""
        case .tipsShowNothingNew: return "the tips show nothing new"
        case .tipsShowNothingUnbrought: return "the tips show nothing push has not brought"
        }
    }
}

extension BackgroundRefresh.MovedReason {
    public var words: String {
        switch self {
        case .safetyNet(let moved, let losing):
            return "\(moved) objects moved past their cursors" + (losing ? " (push lost messages lately)" : "")
        case .unbrought(let objects, let moved):
            let named = objects.prefix(3).map(\.description).joined(separator: ", ") + (objects.count > 3 ? ", …" : "")
            return "\(objects.count) objects hold a message push has not brought (\(named)): syncing the \(moved) that moved"
        }
    }
}

extension BackgroundRefresh.StopReason {
    public var words: String {
        switch self {
        case .cameToForeground: return "app came to the foreground"
        case .expiredByOS: return "expired by the OS"
        case .budgetUsedUp(let budget): return "budget of \(budget) used up"
        }
    }
}

extension PushWatch.Standing {
    public var words: String {
        func pace(_ perHour: Int?) -> String { perHour.map { "traffic about \($0)/h" } ?? "traffic not known yet" }
        func last(_ ago: Interval?) -> String { ago.map { "last push \($0) ago" } ?? "no push yet" }
        switch self {
        case .disabled: return "push disabled"
        case .lostLately(let vouched, let needed): return "push lost a message lately: \(vouched) of \(needed) delivered since"
        case .silent(let gap, let ago, let perHour): return "push silent for longer than \(gap) (\(last(ago)), \(pace(perHour)))"
        case .delivering(let vouched, let needed): return "push delivered \(vouched) of \(needed) messages so far"
        case .keepsUp(let vouched, let ago, let gap, let perHour):
            return "push keeps up: \(vouched) delivered since its last loss, \(last(ago)), a silence of \(gap.map { "\($0)" } ?? "?") would be news (\(pace(perHour)))"
        }
    }
}

extension PushConditions.NotOperational {
    public var words: String {
        switch self {
        case .mode(let mode): return "notification mode is \(mode.rawValue)"
        case .noPermission: return "notification permission not granted"
        case .token(let status): return "push token is \(status.rawValue)"
        }
    }
}

extension PushReliability.StateReason {
    public var words: String {
        switch self {
        case .notOperational(let why): return why.words
        case .operationalAgain: return "push operational again (remote-push, permission granted, token active)"
        case .pushArrived(let txId, let offset, let channel):
            let lead = offset.milliseconds < 0 ? "\(Interval(milliseconds: -offset.milliseconds)) before" : "\(offset) after"
            let seen = channel == .realtime ? "its realtime tx" : "it landed (found by a catch-up)"
            return "push for \(txId.prefix(8)) arrived \(lead) \(seen)"
        case .misses(let count, let within, let fetched, let live):
            let streak = [fetched > 0 ? "\(fetched) fetched" : nil, live > 0 ? "\(live) seen on realtime" : nil].compactMap { $0 }.joined(separator: ", ")
            return "\(count) consecutive push-eligible txs without push within \(within) (\(streak))"
        }
    }
}

extension PushVerifier.StartReason {
    public var words: String {
        let pace = paced
            ? "looking at the indexer's tips when push may have failed: now, then less often while push keeps up"
            : "the indexer's tip every \(every)"
        return "realtime not live since \(since), push \(pushState.rawValue): nothing else would notice a silent push; \(pace)"
    }
}

extension PushVerifier.StopReason {
    public var words: String {
        switch self {
        case .notInForeground: return "app not in foreground"
        case .realtimeLive: return "realtime is live again"
        case .pushUnreliablePollingTakesOver: return "push is unreliable: polling takes over"
        case .pollingCoversIt: return "polling covers it"
        }
    }
}

extension PushVerifier.ScheduleReason {
    public var words: String {
        switch self {
        case .pushPaidOwed(let next): return "push brought what the last look left to it: next look in \(next)"
        case .unbrought(let next): return "the tips showed what push had not brought: next look in \(next)"
        case .pushKeptUp(let next): return "push kept up: next look in \(next)"
        case .quiet(let next): return "nothing landed since the last look: next look in \(next)"
        case .nothingNew(let next): return "nothing new: next look in \(next)"
        case .trusted(true, _): return "push keeps up: a look only if it is silent for longer than the traffic makes likely"
        case .trusted(false, let first):
            return "push keeps up: a look if it is silent for longer than the traffic makes likely, or in \(first) to count what it brought"
        case .owed(let landedAt): return "push may still bring a message that landed at \(landedAt): next look when it is overdue"
        }
    }
}
