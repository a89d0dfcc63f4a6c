// Sync cursors — SPEC §3 rule 9.
//
// Each sync object keeps the block time of the newest message it has stored. A request
// starts `reorgRewind` before the cursor while the cursor is that close to now (late-indexed
// or reorganised messages still land behind it), else just after it. A cursor moves only
// forward, and only once the messages it covers are stored.

/// One object a catch-up fetches (rule 9).
public enum SyncObject: Hashable, Comparable, Sendable, CustomStringConvertible {
    case handshakes(Direction)
    case contextual(Address, Direction)
    case payments

    public var description: String {
        switch self {
        case .handshakes(let d): return "handshakes/\(d == .incoming ? "in" : "out")"
        case .contextual(let a, let d): return "contextual/\(a.value)/\(d == .incoming ? "in" : "out")"
        case .payments: return "payments"
        }
    }

    public static func < (a: SyncObject, b: SyncObject) -> Bool { a.description < b.description }
}

public struct SyncCursor: Hashable, Sendable {
    public var lastFetchedBlockTime: Instant?

    public init(lastFetchedBlockTime: Instant? = nil) { self.lastFetchedBlockTime = lastFetchedBlockTime }

    /// Where a request for this object starts (rule 9).
    public func requestStart(now: Instant, rewind: Interval) -> Instant {
        guard let cursor = lastFetchedBlockTime else { return .zero }
        if now - cursor <= rewind {
            return Instant(milliseconds: max(0, (cursor - rewind).milliseconds))
        }
        return cursor + .milliseconds(1)
    }

    /// The cursor after storing messages up to `blockTime`; never moves backwards.
    public func advanced(coveringUpTo blockTime: Instant?) -> SyncCursor {
        guard let blockTime else { return self }
        guard let current = lastFetchedBlockTime else { return SyncCursor(lastFetchedBlockTime: blockTime) }
        return SyncCursor(lastFetchedBlockTime: max(current, blockTime))
    }
}
