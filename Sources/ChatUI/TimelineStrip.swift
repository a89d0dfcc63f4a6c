import SyncCore
import SyncEngine

/// The last hour of the run, for the strip the `T` key shows: the same
/// picture as `simulate --chart`, in cells. The reducer keeps it from the typed events it
/// already gets (status, faults, catch-ups), always, so that the strip shows the whole hour
/// when it opens; entries older than the hour are dropped, so it stays small.
public struct TimelineStrip: Equatable, Sendable {
    public enum Mark: String, Equatable, Sendable {
        case full, targeted, light, skipped
    }

    public static let window = Interval.hours(1)

    /// Changes, oldest first; the first of each may be older than the window (the state at
    /// its start).
    public private(set) var lifecycle: [Change<Lifecycle>] = []
    public private(set) var push: [Change<PushState>] = []
    public private(set) var faults: [Change<[String]>] = []
    public private(set) var marks: [Change<Mark>] = []
    /// Backend requests made by a sync that ended at each instant.
    public private(set) var requests: [Change<Int>] = []

    public struct Change<Value: Equatable & Sendable>: Equatable, Sendable {
        public var at: Instant
        public var value: Value
    }

    public init() {}

    mutating func status(_ s: EngineStatus, at now: Instant) {
        if lifecycle.last?.value != s.lifecycle { lifecycle.append(Change(at: now, value: s.lifecycle)) }
        if push.last?.value != s.push { push.append(Change(at: now, value: s.push)) }
        prune(now)
    }

    mutating func faults(_ f: [String], at now: Instant) {
        if faults.last?.value ?? [] != f { faults.append(Change(at: now, value: f)) }
        prune(now)
    }

    mutating func mark(_ m: Mark, at t: Instant) {
        marks.append(Change(at: t, value: m))
        prune(t)
    }

    mutating func requests(_ n: Int, at t: Instant) {
        requests.append(Change(at: t, value: n))
        prune(t)
    }

    /// Drops what the window no longer shows, keeping for each band the change in force at
    /// its start.
    private mutating func prune(_ now: Instant) {
        let from = now - Self.window
        func keepLastBefore<V>(_ list: inout [Change<V>]) {
            guard let i = list.lastIndex(where: { $0.at <= from }), i > 0 else { return }
            list.removeFirst(i)
        }
        keepLastBefore(&lifecycle)
        keepLastBefore(&push)
        keepLastBefore(&faults)
        if let i = marks.firstIndex(where: { $0.at >= from }), i > 0 { marks.removeFirst(i) }
        else if marks.last.map({ $0.at < from }) == true { marks.removeAll() }
        if let i = requests.firstIndex(where: { $0.at >= from }), i > 0 { requests.removeFirst(i) }
        else if requests.last.map({ $0.at < from }) == true { requests.removeAll() }
    }

    /// What each of `columns` columns of the hour before `now` shows.
    public struct Column: Equatable, Sendable {
        public var lifecycle: Lifecycle?
        public var push: PushState?
        public var fault = false
        public var mark: Mark?
        public var requests = 0
    }

    public func columns(_ count: Int, now: Instant) -> [Column] {
        guard count > 0 else { return [] }
        let from = now - Self.window
        let span = Double(Self.window.milliseconds)
        var out = Array(repeating: Column(), count: count)
        func index(_ t: Instant) -> Int { min(count - 1, max(0, Int(Double((t - from).milliseconds) / span * Double(count)))) }
        func start(_ c: Int) -> Instant { from + .milliseconds(Int64(Double(c) / Double(count) * span)) }
        // Bands: the value in force at each column's start (or set within it).
        func fill<V>(_ list: [Change<V>], _ set: (inout Column, V) -> Void) {
            var k = 0
            for c in 0..<count {
                let end = c + 1 < count ? start(c + 1) : now + .milliseconds(1)
                while k + 1 < list.count, list[k + 1].at < end { k += 1 }
                if k < list.count, list[k].at < end { set(&out[c], list[k].value) }
            }
        }
        fill(lifecycle) { $0.lifecycle = $1 }
        fill(push) { $0.push = $1 }
        fill(faults) { $0.fault = !$1.isEmpty }
        // A column that saw a fault at all shows it, even a short one.
        for f in faults where !f.value.isEmpty && f.at >= from { out[index(f.at)].fault = true }
        for m in marks where m.at >= from && m.at <= now {
            let c = index(m.at)
            // A full catch-up outranks a targeted one, which outranks a light one or a skip.
            let rank: [Mark: Int] = [.full: 3, .targeted: 2, .light: 1, .skipped: 0]
            if out[c].mark.map({ rank[$0]! < rank[m.value]! }) ?? true { out[c].mark = m.value }
        }
        for r in requests where r.at >= from && r.at <= now { out[index(r.at)].requests += r.value }
        return out
    }
}
