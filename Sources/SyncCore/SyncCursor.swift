// Sync cursors — docs/spec.md rule 9.
//
// Each sync object keeps the block time up to which every message is stored. A request
// starts `reorgRewind` before the cursor while the cursor is that close to now (late-indexed
// or reorganised messages still land behind it), else just after it. A cursor moves only
// forward, and only once the messages it covers are stored: never past what the indexer
// had surely indexed when it was asked (messages are indexed up to `indexerLagAllowance`
// after they land, so a reply can lack a message of the very block time it returns).

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

extension SyncObject {
    /// The object whose fetch returns this message.
    public init(holding m: NetworkMessage) {
        switch m.kind {
        case .handshake: self = .handshakes(m.direction)
        case .contextual: self = .contextual(m.conversation, m.direction)
        case .payment: self = .payments
        }
    }
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

    /// The cursor after storing a reply whose newest message landed at `blockTime`, to a
    /// request sent at `requestedAt`; never moves backwards. It covers no further than
    /// `requestedAt − indexingLag`: a message that landed later may not have been indexed
    /// when the indexer answered (two messages of one block time, one indexed and one not),
    /// and a cursor past it would skip it for good once the cursor is older than the rewind.
    public func advanced(coveringUpTo newest: Instant?, requestedAt: Instant, indexingLag: Interval) -> SyncCursor {
        guard let newest else { return self }
        let blockTime = min(newest, requestedAt - indexingLag)
        guard let current = lastFetchedBlockTime else { return SyncCursor(lastFetchedBlockTime: blockTime) }
        return SyncCursor(lastFetchedBlockTime: max(current, blockTime))
    }
}
