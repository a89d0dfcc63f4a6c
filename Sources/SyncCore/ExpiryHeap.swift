/// Instants with their txIds, the earliest first: a binary min-heap, so that forgetting what
/// has expired costs a logarithm per entry forgotten, not a scan of all.
struct ExpiryHeap: Sendable {
    private var items: [(at: Instant, txId: String)] = []

    var min: (at: Instant, txId: String)? { items.first }

    mutating func insert(_ at: Instant, _ txId: String) {
        items.append((at, txId))
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard items[i].at < items[parent].at else { break }
            items.swapAt(i, parent)
            i = parent
        }
    }

    mutating func removeMin() {
        guard !items.isEmpty else { return }
        let last = items.removeLast()
        guard !items.isEmpty else { return }
        items[0] = last
        var i = 0
        while true {
            let l = 2 * i + 1, r = l + 1
            var m = i
            if l < items.count, items[l].at < items[m].at { m = l }
            if r < items.count, items[r].at < items[m].at { m = r }
            if m == i { break }
            items.swapAt(i, m)
            i = m
        }
    }
}
