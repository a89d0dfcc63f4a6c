import SyncCore

/// What the engine waits for, as data: each request in flight by the id its reply will carry,
/// typed by what was asked and for which sync, and the asks held until the indexer has caught
/// up with a young subscription. A reply is matched here, and nowhere else.
struct PendingRequests {
    /// A request in flight.
    enum Request: Equatable {
        /// A page of one sync object's fetch (rule 9).
        case page(object: SyncObject, call: IndexerCall, since: Instant, page: Int, runId: Int, requestedAt: Instant)
        /// (b): one message of a proven gap, fetched by its txId.
        case message(call: IndexerCall, runId: Int, requestedAt: Instant)
        /// (b): the address's UTXO set, for a targeted sync.
        case utxoSet(runId: Int)
        /// The indexer's tips, for (d)'s poll, (e)'s check of push or (f)'s background refresh.
        case tip(TipPurpose)
    }

    /// An ask held for the indexer's lag.
    enum Held: Equatable {
        /// Every object of a sync, from its cursors.
        case fetch([SyncObject], runId: Int)
        /// (b): the UTXO set of a targeted sync.
        case utxoSet(runId: Int)
    }

    /// The last id a request was given (its reply carries it); an id is never given twice.
    private(set) var lastRequestId = 0
    private var inFlight: [Int: Request] = [:]
    private var held: [(at: Instant, ask: Held)] = []
    /// The tip request out, by whose it is ((d), (e) and (f) never send two).
    private(set) var tipOut: TipPurpose?

    mutating func sent(_ id: Int, _ request: Request) {
        inFlight[id] = request
        if case .tip(let purpose) = request { tipOut = purpose }
    }

    /// The request a reply answers, taken out of the table; nil for one the engine no longer waits for.
    mutating func answered(_ id: Int) -> Request? {
        guard let r = inFlight.removeValue(forKey: id) else { return nil }
        if case .tip = r { tipOut = nil }
        return r
    }

    /// Holds `ask` until `at`, after the asks held for an earlier or the same instant.
    mutating func hold(_ ask: Held, until at: Instant) {
        let i = held.firstIndex { $0.at > at } ?? held.count
        held.insert((at, ask), at: i)
    }

    /// When the first held ask is due.
    var nextHeld: Instant? { held.first?.at }

    /// The held asks due by `now`, in order.
    mutating func due(by now: Instant) -> [Held] {
        var out: [Held] = []
        while let first = held.first, first.at <= now {
            held.removeFirst()
            out.append(first.ask)
        }
        return out
    }

    /// The id of a new request.
    mutating func newRequestId() -> Int {
        lastRequestId += 1
        return lastRequestId
    }
}

/// Who asked the indexer's tips: (d)'s poll, (e)'s push check, (f)'s background refresh, (h)'s closing look.
enum TipPurpose: Equatable {
    case poll, pushCheck, refreshLook, closingLook
}
