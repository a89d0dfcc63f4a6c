// Adaptive (h), the closing look (docs/spec.md#policies).
//
// A realtime outage in the foreground ends, push is `reliable`, and rule 6 skips the
// reconnect's catch-up: push alone was trusted with what landed in the gap. A push that failed
// in the gap's last minutes leaves no trace (realtime was not there to see a message without
// its push), and nothing would ask again while realtime stays live: the message would wait for
// the next background, for hours. So once push is overdue for the gap's last message (`delay`
// after the reconnect), one request asks the indexer's tips with their counts over the gap
// (`IndexerCall.tipCounting`); an object whose count or tip is past what the app holds is
// fetched by a targeted sync, and what that finds is push's miss (rule 3 through (a)).
// A catch-up that starts once the gap has ended covers it: the look is dropped. One request
// and about 1 kB an outage: the price of looking that docs/spec.md §4 sets.
//
//     idle ──reconnect skipped──▶ due(gap) ──due, foreground, nothing out──▶ asked ──answered──▶ idle
//      ▲                            │  ▲ busy (a sync or a tip out): again `busyRetry` later
//      └── a catch-up started ──────┘  └ failed: again after a backoff; background: at the next foreground
//          after the gap ended
//
// Gaps that end while a look is due or asked are merged into the next look's window. Timer:
// `nextDeadline`. Pure: the engine passes the conditions in.

public struct ClosingLook: Sendable, Equatable {
    /// The gap a look counts in: messages that landed after `after`, at or before `through`.
    public struct Window: Equatable, Sendable {
        public var after: Instant
        public var through: Instant
        public init(after: Instant, through: Instant) {
            self.after = after
            self.through = through
        }

        func merged(_ other: Window?) -> Window {
            guard let other else { return self }
            return Window(after: min(after, other.after), through: max(through, other.through))
        }
    }

    /// How long after the reconnect the look waits: push is overdue for the gap's last message
    /// then (the engine sets it to `PushVerifier.overdueAfter`, twice the grace).
    public var delay: Interval = .seconds(120)
    /// A sync or another tip request is out when the look is due: it asks again this much later.
    public var busyRetry: Interval = .seconds(10)
    /// A look that got no answer is asked again after these, one after the other (then the last).
    public var failureBackoff: [Interval] = [.seconds(30), .seconds(60), .minutes(2), .minutes(5)]

    /// The gap the next look counts in, and when it is due (nil: in the background, or none).
    public private(set) var window: Window?
    public private(set) var due: Instant?
    /// The look out, its window.
    public private(set) var asking: Window?
    private var failures = 0

    public init() {}

    public var nextDeadline: Instant? { due }

    /// A reconnect's catch-up was skipped while push was trusted with the gap `window`: a look
    /// is due `delay` from now (a later gap moves it, and joins its window).
    /// `pushCannotCover`: the push path was closed during the gap (the server could not be
    /// heard, or was restarted): no push is coming for what landed then, so the look is due
    /// now, not once push is overdue.
    public mutating func gapLeftToPush(_ gap: Window, now: Instant, pushCannotCover: Bool = false) {
        window = gap.merged(window)
        due = pushCannotCover ? now : now + delay
    }

    /// A catch-up (full, or a proof of the whole gap) started: it covers every gap that ended
    /// before it, and the look is dropped. True when one was.
    public mutating func catchUpStarted(at now: Instant) -> Bool {
        guard let w = window, w.through <= now else { return false }
        window = nil
        due = nil
        return true
    }

    /// The deadline came. `canLook`: the app is in the foreground with no sync and no tip
    /// request out (rule 8's single flight holds for looks too). Returns the window to ask.
    public mutating func deadlineReached(now: Instant, canLook: Bool) -> Window? {
        guard let at = due, at <= now, let w = window else { return nil }
        guard canLook else {
            due = now + busyRetry
            return nil
        }
        window = nil
        due = nil
        asking = w
        return w
    }

    /// The look answered (whatever it showed: the engine fetches what it found).
    public mutating func answered() {
        asking = nil
        failures = 0
    }

    /// The look got no answer (the indexer down, a broken reply): asked again after the backoff,
    /// with any gap that ended meanwhile.
    public mutating func failed(now: Instant) {
        guard let w = asking else { return }
        asking = nil
        window = w.merged(window)
        due = now + failureBackoff[min(failures, failureBackoff.count - 1)]
        failures += 1
    }

    /// The app is suspended: no timer runs, the gap stays owed.
    public mutating func enteredBackground() {
        due = nil
        if let w = asking {
            window = w.merged(window)
            asking = nil
        }
    }

    /// Back in the foreground: an owed look is due `delay` later (the recovery's catch-up, if
    /// one starts, covers it first).
    public mutating func enteredForeground(now: Instant) {
        if window != nil, due == nil { due = now + delay }
    }
}
