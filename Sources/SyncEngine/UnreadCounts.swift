import SyncCore

/// How many messages of each conversation the user has not read: the one owner of the counts
/// the conversation list shows and the badge adds up. Loaded once from the store when the
/// engine starts; from then on changed by what the engine decides — an incoming message new to
/// the app, a conversation read — whether or not the store has taken the write yet (what is
/// kept in memory counts, a read kept so is a read). The store keeps the flags for the next
/// launch; nothing counts them again meanwhile.
struct UnreadCounts {
    private var counts: [Address: Int]
    /// Their sum, kept as they change: the badge reads it at every settle.
    private(set) var total: Int
    /// Conversations whose count changed since `takeChanged()`.
    private var changed: Set<Address> = []

    init(stored: [Address: Int]) {
        counts = stored.filter { $0.value > 0 }
        total = counts.values.reduce(0, +)
    }

    func count(in conversation: Address) -> Int { counts[conversation] ?? 0 }

    /// Every conversation with something unread.
    var all: [Address: Int] { counts }

    /// An incoming message new to the app.
    mutating func arrived(in conversation: Address) {
        counts[conversation, default: 0] += 1
        total += 1
        changed.insert(conversation)
    }

    /// The user read the conversation.
    mutating func read(_ conversation: Address) {
        guard let n = counts.removeValue(forKey: conversation) else { return }
        total -= n
        changed.insert(conversation)
    }

    /// The conversations whose count changed since the last call, in address order (an event each).
    mutating func takeChanged() -> [(Address, Int)] {
        guard !changed.isEmpty else { return [] }
        defer { changed.removeAll() }
        return changed.sorted().map { ($0, count(in: $0)) }
    }
}
