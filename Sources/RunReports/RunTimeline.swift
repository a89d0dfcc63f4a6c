import ClientRuntime
import Simulation
import SyncCore
import SyncEngine

/// A run over time, read from its typed event stream and the faults the world
/// had: backend requests as they were made, foreground and background, push states,
/// catch-ups, and fault spans. The SVG chart of `simulate --chart` and the TUI's strip (`T`)
/// both draw one; neither reads the engine.
public struct RunTimeline: Equatable, Sendable {
    public enum Mark: String, Sendable, CaseIterable {
        case full, targeted, light, skipped
    }

    public struct Span<Value: Equatable & Sendable>: Equatable, Sendable {
        public var from: Instant
        public var to: Instant
        public var value: Value
    }

    public var start: Instant
    public var end: Instant
    /// Backend requests, cumulative, as each sync that made some ended.
    public var requests: [(at: Instant, total: Int)] = []
    /// Backend bytes (the indexer's replies and the node's UTXO sets), each as it left the
    /// world (its ground truth), in time order; empty for a timeline made of events alone.
    public var bytes: [(at: Instant, bytes: Int)] = []
    public var lifecycle: [Span<Lifecycle>] = []
    public var push: [Span<PushState>] = []
    public var marks: [(at: Instant, mark: Mark)] = []
    public var faults: [Span<String>] = []
    /// Belief lag: the spans the world had a channel broken (push, realtime, token, network)
    /// and the engine did not believe it yet, as the run's own measure (`BeliefLag`, fed as it
    /// ran, log kept or not) has them; the value is the kind.
    public var beliefLag: [Span<String>] = []

    public init(start: Instant, end: Instant) {
        self.start = start
        self.end = end
    }

    public static func == (a: RunTimeline, b: RunTimeline) -> Bool {
        a.start == b.start && a.end == b.end && a.requests.map(\.at) == b.requests.map(\.at) && a.requests.map(\.total) == b.requests.map(\.total)
            && a.lifecycle == b.lifecycle && a.push == b.push && a.marks.map(\.at) == b.marks.map(\.at) && a.marks.map(\.mark) == b.marks.map(\.mark)
            && a.faults == b.faults && a.beliefLag == b.beliefLag
    }

    /// Builds the timeline of `events` between `start` and `end`, with `faultHistory` (the
    /// world's faults after each change, as the app keeps them: `ClientApp.faultHistory`).
    public init(events: [TimedEvent], faultHistory: [(at: Instant, faults: WorldFaults)], start: Instant, end: Instant) {
        self.init(start: start, end: end)
        var lifecycleNow: (Lifecycle, Instant)?
        var pushNow: (PushState, Instant)?
        func close<V>(_ open: (V, Instant)?, at t: Instant, into spans: inout [Span<V>]) {
            if let (v, from) = open, t > from { spans.append(Span(from: from, to: t, value: v)) }
        }
        for e in events where e.at <= end {
            switch e.event {
            case .launched(_, let state, _):
                pushNow = (state, e.at)
            case .lifecycle(let l, _):
                close(lifecycleNow, at: e.at, into: &lifecycle)
                lifecycleNow = (l, e.at)
            case .pushState(_, let to, _):
                close(pushNow, at: e.at, into: &push)
                pushNow = (to, e.at)
            case .catchUpFinished(_, _, _, let made, _, _, _) where made > 0:
                // A sync's backend requests, counted when it ends (syncs take seconds, a
                // bucket minutes).
                requests.append((e.at, (requests.last?.total ?? 0) + made))
            case .tipAsked, .pushCheckAsked, .refreshLookAsked, .closingLookAsked:
                // (d)'s, (e)'s and (f)'s one request, made outside any sync.
                requests.append((e.at, (requests.last?.total ?? 0) + 1))
            case .catchUpStarted(_, let kind, _, _):
                marks.append((e.at, kind == .full ? .full : kind == .targeted ? .targeted : .light))
            case .catchUpSkipped:
                marks.append((e.at, .skipped))
            default:
                break
            }
        }
        close(lifecycleNow, at: end, into: &lifecycle)
        close(pushNow, at: end, into: &push)
        var open: [String: Instant] = [:]
        for (t, world) in faultHistory where t <= end {
            let active = world.words
            for f in active where open[f] == nil { open[f] = t }
            for (f, from) in open where !active.contains(f) {
                faults.append(Span(from: from, to: t, value: f))
                open[f] = nil
            }
        }
        for (f, from) in open.sorted(by: { $0.value < $1.value }) { faults.append(Span(from: from, to: end, value: f)) }
        faults.sort { ($0.from, $0.value) < ($1.from, $1.value) }
    }

    /// A run's timeline, from its start to where it ended.
    public init(_ run: ScenarioRun) {
        self.init(events: run.log, faultHistory: run.session.faultHistory, start: run.startedAt, end: run.scheduler.now)
        bytes = (run.world.indexer.bytesServed + run.world.node.bytesServed).sorted { $0.at < $1.at }
        beliefLag = run.session.beliefLag.spans(closingAt: run.scheduler.now).filter { $0.to > $0.from }
            .map { Span(from: $0.from, to: $0.to, value: $0.kind.rawValue) }
    }

    /// Backend bytes served in each of `count` equal buckets from `start` to `end`.
    public func byteBuckets(_ count: Int) -> [Int] {
        guard count > 0, end > start else { return Array(repeating: 0, count: max(0, count)) }
        var buckets = Array(repeating: 0, count: count)
        let span = Double((end - start).milliseconds)
        for (t, b) in bytes {
            buckets[min(count - 1, max(0, Int(Double((t - start).milliseconds) / span * Double(count))))] += b
        }
        return buckets
    }

    /// All backend bytes of the run.
    public var totalBytes: Int { bytes.reduce(0) { $0 + $1.bytes } }

    /// Backend requests made in each of `count` equal buckets from `start` to `end`.
    public func requestBuckets(_ count: Int) -> [Int] {
        guard count > 0, end > start else { return Array(repeating: 0, count: max(0, count)) }
        var buckets = Array(repeating: 0, count: count)
        let span = Double((end - start).milliseconds)
        var previous = 0
        for (t, total) in requests {
            let i = min(count - 1, max(0, Int(Double((t - start).milliseconds) / span * Double(count))))
            buckets[i] += total - previous
            previous = total
        }
        return buckets
    }

    /// The last instant anything drawn changes: a band's state (app, push, a fault, belief
    /// lag) or a catch-up's mark. Nil when nothing changes after the start.
    public var lastChange: Instant? {
        var instants = marks.map(\.at)
        instants += lifecycle.dropFirst().map(\.from) + push.dropFirst().map(\.from)
        for span in faults + beliefLag {
            instants.append(span.from)
            if span.to < end { instants.append(span.to) }
        }
        return instants.filter { $0 > start && $0 <= end }.max()
    }

    /// The last instant anything drawn happens: a change (`lastChange`), a request or bytes
    /// served. Nil when nothing happens after the start.
    public var lastActivity: Instant? {
        let instants = [lastChange, requests.last?.at, bytes.last?.at].compactMap { $0 }.filter { $0 > start && $0 <= end }
        return instants.max()
    }

    /// The timeline up to `instant` (not past its end): every span that runs on past it ends
    /// there; what happened after it is left out.
    public func cut(at instant: Instant) -> RunTimeline {
        guard instant < end else { return self }
        var t = self
        t.end = instant
        func clip<V>(_ spans: [Span<V>]) -> [Span<V>] {
            spans.filter { $0.from < instant }.map { var s = $0; s.to = min(s.to, instant); return s }
        }
        t.lifecycle = clip(lifecycle)
        t.push = clip(push)
        t.faults = clip(faults)
        t.beliefLag = clip(beliefLag)
        t.marks = marks.filter { $0.at <= instant }
        t.requests = requests.filter { $0.at <= instant }
        t.bytes = bytes.filter { $0.at <= instant }
        return t
    }

    /// All backend requests of the run.
    public var totalRequests: Int { requests.last?.total ?? 0 }
}

