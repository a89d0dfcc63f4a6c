import SyncCore

/// What the engine knows and waits for, as one typed value for an inspector: the
/// push observations and their graces, the catch-up gate, every cursor, every timer. The
/// engine sends it as an `.inspection` event while someone asks for it (`.inspect(true)`),
/// whenever it changes; nothing else computes it, so `simulate` pays nothing.
///
/// Times are instants, so that a view shows "time left" against its own clock without
/// asking again. What the world does (its faults) is not here: the engine has to find that
/// out, and the session knows it.
public struct EngineInspection: Equatable, Sendable {
    public struct Push: Equatable, Sendable {
        public var state: PushState = .unknown
        public var misses = 0
        public var missThreshold = 3
        /// Observations waiting for their push (rule 2), oldest first.
        public var pending: [PushReliability.Sighting] = []
        /// Pushes that came before their realtime tx and wait to be matched.
        public var unmatchedPushes = 0
        /// No grace runs out while the app is suspended.
        public var suspended = true
        public var lastReregisterAt: Instant?
        /// Why push is not operational (rule 1), nil when it is.
        public var notOperational: String?
    }

    public struct Gate: Equatable, Sendable {
        public struct Running: Equatable, Sendable {
            public var kind: CatchUpGate.SyncKind
            public var trigger: CatchUpTrigger
            public var forced: Bool
            public var startedAt: Instant
            /// Requests sent and not answered.
            public var outstanding: Int
            public var stored: Int
            /// The triggers that joined it (rule 8).
            public var joined: [CatchUpTrigger]

            public init(kind: CatchUpGate.SyncKind, trigger: CatchUpTrigger, forced: Bool, startedAt: Instant, outstanding: Int, stored: Int,
                        joined: [CatchUpTrigger]) {
                self.kind = kind
                self.trigger = trigger
                self.forced = forced
                self.startedAt = startedAt
                self.outstanding = outstanding
                self.stored = stored
                self.joined = joined
            }
        }

        public var lastCatchUpAt: Instant?
        public var lastFullSyncAt: Instant?
        /// When rule 6's debounce ends; nil when a trigger may run now.
        public var debounceEndsAt: Instant?
        /// Syncs running now: one catch-up (single flight), perhaps a background refresh's.
        public var running: [Running] = []
        /// (c): the trailing catch-up after a skipped trigger.
        public var trailingAt: Instant?
        /// Rule 14: a catch-up that did not complete, owed until one of its kind completes.
        public var owed: CatchUpGate.Owed?
        public var retryAt: Instant?
        public var retriesInARow = 0
    }

    public struct Cursor: Equatable, Sendable {
        public var object: SyncObject
        /// `lastFetchedBlockTime`; nil before the first sync of the object.
        public var at: Instant?

        public init(object: SyncObject, at: Instant?) {
            self.object = object
            self.at = at
        }
    }

    public struct Timers: Equatable, Sendable {
        /// Rule 13: polling, and when the next poll is due.
        public var polling = false
        public var nextPollAt: Instant?
        /// Rule 14: a refresh is asked of the OS (from when), and a running light sync's budget.
        public var refreshRequested = false
        public var refreshEarliest: Instant?
        public var refreshBudgetEndsAt: Instant?
        public var connection = ConnectionLifecycle.Timers()
        /// A full store's next write attempt.
        public var storeRetryAt: Instant?
    }

    public var push = Push()
    public var gate = Gate()
    /// Every sync object of a full sync, with its cursor, in the order of rule 9.
    public var cursors: [Cursor] = []
    public var timers = Timers()

    public init() {}
}
