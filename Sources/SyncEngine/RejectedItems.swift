import SyncCore

/// Items the indexer keeps serving broken: one bad item must not block a cursor forever.
///
/// A rejected item first fails its whole reply, as any broken document does: a transient
/// corruption is asked for again, and nothing is lost (rule 9). But the same item rejected
/// for the same reason in `attempts` replies in a row is no accident — a body over the
/// 64 KiB limit, say — and asking again would fail every later catch-up of that object.
/// Such an item is skipped for good: an error event says so once, the rest of its reply is
/// stored, and the cursor moves on past it.
public struct RejectedItems: Sendable {
    public enum Verdict: Equatable, Sendable {
        /// Reject the whole reply; the item has failed `strikes` times so far.
        case retry(reason: String, strikes: Int)
        /// Every rejected item is skipped for good; `newlySkipped` are the ones skipped now.
        case skip(newlySkipped: [IndexerPage.RejectedItem])
    }

    public let attempts: Int
    private var strikes: [String: (reason: String, count: Int)] = [:]
    /// Items skipped for good, by key.
    public private(set) var skipped: Set<String> = []

    public init(attempts: Int) { self.attempts = attempts }

    public mutating func judge(_ items: [IndexerPage.RejectedItem]) -> Verdict {
        var retry: (reason: String, strikes: Int)?
        var newly: [IndexerPage.RejectedItem] = []
        for item in items where !skipped.contains(item.key) {
            let count = strikes[item.key].map { $0.reason == item.reason ? $0.count + 1 : 1 } ?? 1
            if count >= attempts {
                strikes[item.key] = nil
                skipped.insert(item.key)
                newly.append(item)
            } else {
                strikes[item.key] = (item.reason, count)
                if retry == nil { retry = (item.reason, count) }
            }
        }
        if let retry { return .retry(reason: retry.reason, strikes: retry.strikes) }
        return .skip(newlySkipped: newly)
    }
}
