import SyncCore

/// The messages the user wrote that the network has not taken yet — the outbox — and the
/// publications in flight: one owner. The engine asks it what to publish, tells
/// it what the network answered, and writes `messages` to the store whenever it changes.
struct SendQueue {
    /// Oldest first (see `OutgoingMessage`).
    private(set) var messages: [OutgoingMessage] = []
    /// Publications in flight: request id → the entry's local id.
    private var inFlight: [Int: String] = [:]
    private var lastLocalId = 0

    /// The outbox as the store kept it (a launch).
    mutating func restore(_ saved: [OutgoingMessage]) { messages = saved }

    /// A new message to `to`, written at `now`.
    mutating func add(to: Address, body: String, now: Instant) -> OutgoingMessage {
        lastLocalId += 1
        let m = OutgoingMessage(localId: "local-\(now.milliseconds)-\(lastLocalId)", to: to, body: body, createdAt: now)
        messages.append(m)
        return m
    }

    /// The entry goes to the network as request `request`: it is `sending`. Nil when it is no
    /// longer in the outbox.
    mutating func sending(_ localId: String, request: Int) -> OutgoingMessage? {
        guard let i = messages.firstIndex(where: { $0.localId == localId }) else { return nil }
        messages[i].state = .sending
        inFlight[request] = localId
        return messages[i]
    }

    /// What a "retry now" (`failedOnly`) or a launch (all) sends again: every entry but those
    /// already on their way.
    func toRetry(failedOnly: Bool) -> [OutgoingMessage] {
        messages.filter { m in
            if case .sending = m.state, failedOnly || inFlight.values.contains(m.localId) { return false }
            return true
        }
    }

    /// The failed entries whose wait is over at `now`.
    func due(now: Instant) -> [OutgoingMessage] {
        messages.filter { if case .failed(_, let at) = $0.state { return at <= now } else { return false } }
    }

    /// When the next failed entry is tried again.
    var nextDeadline: Instant? {
        messages.compactMap { if case .failed(_, let at) = $0.state { return at } else { return nil } }.min()
    }

    /// The network could not take request `request`: the entry stays, failed, until its wait
    /// is over — or, refused for good (`final`), until the user asks. The entry and the wait
    /// (nil: none); nil for an unknown request.
    mutating func failed(request: Int, reason: String, final: Bool = false, now: Instant) -> (message: OutgoingMessage, wait: Interval?)? {
        guard let localId = inFlight.removeValue(forKey: request), let i = messages.firstIndex(where: { $0.localId == localId }) else { return nil }
        messages[i].failures += 1
        if final {
            messages[i].state = .refused(reason: reason)
            return (messages[i], nil)
        }
        let wait = OutgoingMessage.retryDelay(afterFailures: messages[i].failures)
        messages[i].state = .failed(reason: reason, retryAt: now + wait)
        return (messages[i], wait)
    }

    /// The network took request `request` as `txId`: the entry leaves the outbox, sent. Nil
    /// for an unknown request.
    mutating func sent(request: Int, txId: String) -> OutgoingMessage? {
        guard let localId = inFlight.removeValue(forKey: request), let i = messages.firstIndex(where: { $0.localId == localId }) else { return nil }
        var done = messages.remove(at: i)
        done.state = .sent(txId: txId)
        return done
    }

    /// Whether the outbox still holds `localId`.
    func contains(_ localId: String) -> Bool { messages.contains { $0.localId == localId } }

    /// Whether request `request` is a publication in flight.
    func isInFlight(_ request: Int) -> Bool { inFlight[request] != nil }
}
