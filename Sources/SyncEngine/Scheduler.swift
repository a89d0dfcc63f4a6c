import SyncCore

/// The one scheduler synchat owns (docs/design.md "Time belongs to synchat").
///
/// Work is kept in a queue ordered by (instant, insertion order). Virtual time jumps straight
/// to the next entry (`runNext`, `run(until:)`); the TUI drives the same scheduler with
/// scaled wall time by calling `run(until: scaledNow)`. The world and the engine driver
/// schedule on the same instance, so both live on one time line and equal inputs give equal
/// runs.
public final class Scheduler {
    public struct Token: Hashable, Sendable {
        fileprivate let id: UInt64
    }

    private struct Entry {
        var at: Instant
        /// Runs after every other entry due at its instant, even those scheduled later.
        var late = false
        var seq: UInt64
        var label: String
        var action: () -> Void
    }

    public private(set) var now: Instant
    private var heap: [Entry] = []
    private var nextSeq: UInt64 = 0
    private var cancelled: Set<UInt64> = []

    /// `runawayLimit`: how many entries may run at one instant before the run is stopped as a
    /// loop (a timer that re-arms itself without time moving would otherwise hang forever).
    public init(start: Instant = .zero, runawayLimit: Int = 5_000_000) {
        self.now = start
        self.runawayLimit = runawayLimit
    }

    /// Schedules `action` at `at` (never before now). Returns a token for `cancel`.
    @discardableResult
    public func schedule(at: Instant, _ label: String, _ action: @escaping () -> Void) -> Token {
        schedule(at: at, late: false, label, action)
    }

    /// `late`: after everything else due at `at` has run — as a key pressed at that instant
    /// comes after the world has done all it had to do by then (the TUI runs the world up
    /// to an instant, then handles the keys).
    @discardableResult
    public func schedule(at: Instant, late: Bool, _ label: String, _ action: @escaping () -> Void) -> Token {
        let seq = nextSeq
        nextSeq += 1
        push(Entry(at: max(at, now), late: late, seq: seq, label: label, action: action))
        return Token(id: seq)
    }

    @discardableResult
    public func schedule(after delay: Interval, _ label: String, _ action: @escaping () -> Void) -> Token {
        schedule(at: now + delay, label, action)
    }

    public func cancel(_ token: Token) {
        cancelled.insert(token.id)
    }

    /// Drops every entry not run yet, and the closures they hold: a run that is over ends the
    /// cycles its pending timers close (a world's next arrival holds the world, which holds the
    /// scheduler).
    public func clear() {
        heap.removeAll()
        cancelled.removeAll()
    }

    /// The instant of the next live entry, if any.
    public var nextEventTime: Instant? {
        dropCancelledTop()
        return heap.first?.at
    }

    /// Runs the next entry, moving `now` to its instant. Returns false when nothing is queued.
    @discardableResult
    public func runNext() -> Bool {
        dropCancelledTop()
        guard !heap.isEmpty else { return false }
        let entry = pop()
        if entry.at == now {
            sameInstant += 1
            if sameInstant > runawayLimit {
                // A timer that re-arms itself for the same instant would hang a run forever.
                preconditionFailure("Scheduler: more than \(runawayLimit) entries at \(now), the last \"\(entry.label)\": something re-arms itself without time moving")
            }
        } else {
            sameInstant = 0
        }
        now = entry.at
        entry.action()
        return true
    }

    /// Runs at most `limit` of the entries due up to `end`. True when none due is left (and
    /// `now` is then `end`); false when some wait for the next call (a server's event loop
    /// answers its sockets between two calls instead of running a world's backlog at once).
    public func run(until end: Instant, atMost limit: Int) -> Bool {
        var ran = 0
        while let next = nextEventTime, next <= end {
            guard ran < limit else { return false }
            runNext()
            ran += 1
        }
        if end > now { now = end }
        return true
    }

    /// Runs every entry due up to `end`, then sets `now` to `end`.
    public func run(until end: Instant) {
        while let next = nextEventTime, next <= end {
            runNext()
        }
        if end > now { now = end }
    }

    public var pendingCount: Int { heap.count - cancelled.count }

    private var sameInstant = 0
    private let runawayLimit: Int

    // MARK: - Binary heap on (at, seq)

    private func less(_ a: Entry, _ b: Entry) -> Bool {
        if a.at != b.at { return a.at < b.at }
        if a.late != b.late { return !a.late }
        return a.seq < b.seq
    }

    private func dropCancelledTop() {
        while let top = heap.first, cancelled.contains(top.seq) {
            cancelled.remove(top.seq)
            _ = pop()
        }
    }

    private func push(_ e: Entry) {
        heap.append(e)
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard less(heap[i], heap[parent]) else { break }
            heap.swapAt(i, parent)
            i = parent
        }
    }

    private func pop() -> Entry {
        let top = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                var m = i
                if l < heap.count, less(heap[l], heap[m]) { m = l }
                if r < heap.count, less(heap[r], heap[m]) { m = r }
                if m == i { break }
                heap.swapAt(i, m)
                i = m
            }
        }
        return top
    }
}
