/// A token bucket per key (a user, a peer's address): `perSecond` tokens a second, held up
/// to `burst`. Time is given (monotonic nanoseconds), never read: a test steps it.
struct RateLimiter<Key: Hashable> {
    let perSecond: Double
    let burst: Double
    private var buckets: [Key: (tokens: Double, at: UInt64)] = [:]
    /// Buckets held before full ones are forgotten (a full bucket is the same as none).
    private static var pruneAt: Int { 4_096 }

    init(perSecond: Double, burst: Double) {
        self.perSecond = perSecond
        self.burst = burst
    }

    private func refilled(_ key: Key, now: UInt64) -> (tokens: Double, at: UInt64) {
        guard let b = buckets[key] else { return (burst, now) }
        return (min(burst, b.tokens + Double(now &- b.at) / 1e9 * perSecond), now)
    }

    /// Spends one token of `key`: false, spending nothing, when it has none.
    mutating func allow(_ key: Key, now: UInt64) -> Bool {
        if buckets.count >= Self.pruneAt { prune(now: now) }
        var b = refilled(key, now: now)
        guard b.tokens >= 1 else { buckets[key] = b; return false }
        b.tokens -= 1
        buckets[key] = b
        return true
    }

    /// Spends `cost` more of a key that has spent before; the bucket may go below zero (down
    /// to `-burst`), and the key waits until it refills.
    mutating func charge(_ key: Key, _ cost: Double) {
        guard cost > 0, var b = buckets[key] else { return }
        b.tokens = max(-burst, b.tokens - cost)
        buckets[key] = b
    }

    /// Whether `key` has no token now, without spending one.
    func limited(_ key: Key, now: UInt64) -> Bool { refilled(key, now: now).tokens < 1 }

    /// Forgets the buckets that have refilled: memory stays bounded by the keys active lately.
    private mutating func prune(now: UInt64) {
        buckets = buckets.filter { refilled($0.key, now: now).tokens < burst }
    }
}

extension WorldServer {
    /// A user's request: false when it is one too many.
    func allow(_ user: String) -> Bool { requests.allow(user, now: monotonic()) }

    func allowJoin(from peer: String) -> Bool { joins.allow(peer, now: monotonic()) }

    /// Charges `user` for an answer of `bytes`: one more request per `bytesPerRequest`.
    func charge(_ user: String, answerBytes bytes: Int) {
        guard bytes >= Self.bytesPerRequest else { return }
        requests.charge(user, Double(bytes / Self.bytesPerRequest))
    }

    /// Whether `user` is over its rate now, without spending a request.
    func limited(_ user: String) -> Bool { requests.limited(user, now: monotonic()) }
}
