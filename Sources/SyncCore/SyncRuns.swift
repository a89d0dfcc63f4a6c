/// The syncs running now: the one owner of "a sync runs". Each has an id, a
/// kind, its trigger, the triggers that joined it (rule 8), and its count of requests and
/// writes still out. The catch-up gate decides *whether* one starts and reads the first of
/// these as the one running; it keeps no copy (it did, matched to the engine's by value).
/// Gated policies run one at a time; `naive` may overlap them.
public struct SyncRuns: Sendable {
    public struct Run: Hashable, Sendable {
        public let id: Int
        /// (b): a targeted sync the node could not prove goes on as a full one.
        public internal(set) var kind: CatchUpGate.SyncKind
        public let trigger: CatchUpTrigger
        public let forced: Bool
        public let startedAt: Instant
        /// Requests and store writes not answered yet: at 0, the run has finished.
        public internal(set) var outstanding = 0
        public internal(set) var stored = 0
        public internal(set) var requests = 0
        public internal(set) var failed = 0
        /// Triggers that joined it (rule 8), for the inspector.
        public internal(set) var joined: [CatchUpTrigger] = []

        /// What the gate and the log say of it.
        public var running: CatchUpGate.Running {
            CatchUpGate.Running(kind: kind, trigger: trigger, startedAt: startedAt, forced: forced)
        }
    }

    /// By id, oldest first.
    public private(set) var all: [Run] = []
    private var lastId = 0

    public init() {}

    public var isEmpty: Bool { all.isEmpty }
    /// The oldest sync running: the one a trigger joins, the one a quit would leave owed.
    public var first: Run? { all.first }
    public subscript(id: Int) -> Run? { all.first { $0.id == id } }

    private mutating func update(_ id: Int, _ change: (inout Run) -> Void) {
        guard let i = all.firstIndex(where: { $0.id == id }) else { return }
        change(&all[i])
    }

    /// A new run; its id.
    public mutating func start(kind: CatchUpGate.SyncKind, trigger: CatchUpTrigger, forced: Bool, now: Instant) -> Int {
        lastId += 1
        all.append(Run(id: lastId, kind: kind, trigger: trigger, forced: forced, startedAt: now))
        return lastId
    }

    /// Rule 8: `trigger` rides on run `id`.
    public mutating func join(_ id: Int, trigger: CatchUpTrigger) { update(id) { $0.joined.append(trigger) } }
    /// A request of run `id` is out.
    public mutating func asked(_ id: Int) { update(id) { $0.requests += 1; $0.outstanding += 1 } }
    /// A store write of run `id` is out (not a request).
    public mutating func writing(_ id: Int) { update(id) { $0.outstanding += 1 } }
    /// A request or write of run `id` came back, failed or not, storing `stored` new messages.
    public mutating func answered(_ id: Int, failed: Bool = false) {
        update(id) {
            $0.outstanding -= 1
            if failed { $0.failed += 1 }
        }
    }
    /// A request still out counts as failed (its answer could not be used).
    public mutating func failed(_ id: Int) { update(id) { $0.failed += 1 } }
    public mutating func stored(_ id: Int, _ count: Int) { update(id) { $0.stored += count } }
    /// (b): the node could not give the UTXO set; the run fetches everything.
    public mutating func becameFull(_ id: Int) { update(id) { $0.kind = .full } }

    /// Whether run `id` has nothing out (its requests and writes all answered).
    public func isDone(_ id: Int) -> Bool { self[id]?.outstanding == 0 }

    /// Takes run `id` away, as it ends; nil when it is not running.
    public mutating func finish(_ id: Int) -> Run? {
        guard let i = all.firstIndex(where: { $0.id == id }) else { return nil }
        return all.remove(at: i)
    }
}
