import CustomDump
import Simulation
import SyncCore
import SyncEngine
import Testing

// Expectations over a run's event log (docs/testing.md, `Tests/EngineTests`: assert on the event log).
// A failure prints the log around the time the event was expected, so the reader sees what
// happened instead:
//
//     expectEvent(run, at: t(3, 3), containing: "catch-up started (app-active)")
//     let fall = expectEvent(run, matching: { if case .pushState(_, .unreliable, _) = $0 { true } else { false } })
//     expectNoEvent(run, containing: "catch-up started")
//
// A test that pins a rule states the decisions exactly, in order, so that an extra or a
// missing one fails (a `contains` would let an extra one pass):
//
//     expectDecisions(run, from: t(5), through: t(5, 5), matching: about(.catchUp), [
//         "00:05:00.400 catch-up skipped (subscription-restart): push reliable, last catch-up 4m ago, next allowed in 6m",
//     ])

/// The events about any of `topics`: a typed filter for `matching:`.
public func about(_ topics: SyncEvent.Topic...) -> (SyncEvent) -> Bool {
    let set = Set(topics)
    return { set.contains($0.topic) }
}

/// Every topic whose line begins with `push`: its state, checks, watch, token, path and service.
public let pushTopics: [SyncEvent.Topic] = [.pushState, .pushCheck, .pushWatch, .pushToken, .pushPath, .pushService]

extension SyncEvent {
    /// A miss of rule 2, counted or superseded.
    public var isObservationMiss: Bool {
        switch self {
        case .observationMiss, .observationSuperseded: return true
        default: return false
        }
    }

    /// The catch-up started, for `trigger` when one is given.
    public func isCatchUpStarted(_ trigger: CatchUpTrigger? = nil) -> Bool {
        guard case .catchUpStarted(let t, _, _, _) = self else { return false }
        return trigger == nil || t == trigger
    }

    /// A change to the world, its directive's words starting so (`push`, `indexer`).
    public func isWorld(startingWith words: String) -> Bool {
        if case .world(let said) = self { return said.hasPrefix(words) }
        return false
    }

    public var isCatchUpSkipped: Bool {
        if case .catchUpSkipped = self { return true }
        return false
    }
}

/// Expects an event for which `matching` holds, at `at` give or take `within` when a time is
/// given, anywhere in the log otherwise. Returns the first such event, nil after failing.
@discardableResult
public func expectEvent(_ log: [TimedEvent], at time: Instant? = nil, within tolerance: Interval = .zero,
                        matching: (SyncEvent) -> Bool, _ comment: Comment? = nil,
                        sourceLocation: SourceLocation = #_sourceLocation) -> TimedEvent? {
    let found = log.first { matching($0.event) && EventWindow(time, tolerance).contains($0.at) }
    if found == nil {
        Issue.record(Comment(rawValue: "no such event \(EventWindow(time, tolerance))" + (comment.map { " (\($0.rawValue))" } ?? "")
                             + "; " + EventWindow(time, tolerance).excerpt(of: log)), sourceLocation: sourceLocation)
    }
    return found
}

/// Expects an event whose line (`event.line`, without its time) contains `text`.
@discardableResult
public func expectEvent(_ log: [TimedEvent], at time: Instant? = nil, within tolerance: Interval = .zero, containing text: String,
                        _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) -> TimedEvent? {
    expectEvent(log, at: time, within: tolerance, matching: { $0.line.contains(text) },
                Comment(rawValue: "a line containing \"\(text)\"" + (comment.map { "; \($0.rawValue)" } ?? "")), sourceLocation: sourceLocation)
}

/// Expects no event for which `matching` holds (at `at` give or take `within`, when given);
/// a failure lists those that did.
public func expectNoEvent(_ log: [TimedEvent], at time: Instant? = nil, within tolerance: Interval = .zero,
                          matching: (SyncEvent) -> Bool, _ comment: Comment? = nil,
                          sourceLocation: SourceLocation = #_sourceLocation) {
    let window = EventWindow(time, tolerance)
    let found = log.filter { matching($0.event) && window.contains($0.at) }
    guard !found.isEmpty else { return }
    Issue.record(Comment(rawValue: "\(found.count) unexpected event\(found.count == 1 ? "" : "s") \(window)"
                         + (comment.map { " (\($0.rawValue))" } ?? "") + ":\n"
                         + found.prefix(EventWindow.maxLines).map { "  " + $0.line }.joined(separator: "\n")),
                 sourceLocation: sourceLocation)
}

/// Expects no event whose line contains `text`.
public func expectNoEvent(_ log: [TimedEvent], at time: Instant? = nil, within tolerance: Interval = .zero, containing text: String,
                          _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
    expectNoEvent(log, at: time, within: tolerance, matching: { $0.line.contains(text) },
                  Comment(rawValue: "a line containing \"\(text)\"" + (comment.map { "; \($0.rawValue)" } ?? "")), sourceLocation: sourceLocation)
}

/// The decisions of `log` from `from` through `through` (both included) for which
/// `matching` holds, each as its line, `HH:MM:SS.mmm text`, in the log's order.
public func decisionLines(_ log: [TimedEvent], from: Instant? = nil, through: Instant? = nil,
                          matching: (SyncEvent) -> Bool = { _ in true }) -> [String] {
    log.filter { e in
        e.event.isDecision && matching(e.event) && (from.map { e.at >= $0 } ?? true) && (through.map { e.at <= $0 } ?? true)
    }.map(\.line)
}

/// Expects exactly the decisions `expected` (lines `HH:MM:SS.mmm text`), in this order, from
/// `from` through `through` among those for which `matching` holds: an extra, a missing or a
/// reordered decision fails. A failure shows the difference (`−` expected, `+` actual) and the
/// actual lines as a Swift array, to read against the rule before pasting.
public func expectDecisions(_ log: [TimedEvent], from: Instant? = nil, through: Instant? = nil,
                            matching: (SyncEvent) -> Bool = { _ in true }, _ expected: [String],
                            sourceLocation: SourceLocation = #_sourceLocation) {
    let actual = decisionLines(log, from: from, through: through, matching: matching)
    guard actual != expected else { return }
    let window = "from \(from.map(\.description) ?? "the start") through \(through.map(\.description) ?? "the end")"
    Issue.record(Comment(rawValue: "the decisions \(window) differ (− expected, + actual):\n"
                         + (diff(expected, actual) ?? "\(expected) vs \(actual)")
                         + "\nactual:\n[\n" + actual.map { "    \($0.debugDescription),\n" }.joined() + "]"),
                 sourceLocation: sourceLocation)
}

/// Expects exactly the decisions `expected` (their lines, without a time), in this order,
/// among `events` for which `matching` holds: for the sans-IO engine's events, which carry no
/// time.
public func expectDecisions(_ events: [SyncEvent], matching: (SyncEvent) -> Bool = { _ in true }, _ expected: [String],
                            sourceLocation: SourceLocation = #_sourceLocation) {
    let actual = events.filter { $0.isDecision && matching($0) }.map(\.line)
    guard actual != expected else { return }
    Issue.record(Comment(rawValue: "the decisions differ (− expected, + actual):\n"
                         + (diff(expected, actual) ?? "\(expected) vs \(actual)")
                         + "\nactual:\n[\n" + actual.map { "    \($0.debugDescription),\n" }.joined() + "]"),
                 sourceLocation: sourceLocation)
}

// The same on a scenario run's log.

@discardableResult
public func expectEvent(_ run: ScenarioRun, at time: Instant? = nil, within tolerance: Interval = .zero,
                        matching: (SyncEvent) -> Bool, _ comment: Comment? = nil,
                        sourceLocation: SourceLocation = #_sourceLocation) -> TimedEvent? {
    expectEvent(run.log, at: time, within: tolerance, matching: matching, comment, sourceLocation: sourceLocation)
}

@discardableResult
public func expectEvent(_ run: ScenarioRun, at time: Instant? = nil, within tolerance: Interval = .zero, containing text: String,
                        _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) -> TimedEvent? {
    expectEvent(run.log, at: time, within: tolerance, containing: text, comment, sourceLocation: sourceLocation)
}

public func expectNoEvent(_ run: ScenarioRun, at time: Instant? = nil, within tolerance: Interval = .zero,
                          matching: (SyncEvent) -> Bool, _ comment: Comment? = nil,
                          sourceLocation: SourceLocation = #_sourceLocation) {
    expectNoEvent(run.log, at: time, within: tolerance, matching: matching, comment, sourceLocation: sourceLocation)
}

public func expectNoEvent(_ run: ScenarioRun, at time: Instant? = nil, within tolerance: Interval = .zero, containing text: String,
                          _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
    expectNoEvent(run.log, at: time, within: tolerance, containing: text, comment, sourceLocation: sourceLocation)
}

public func expectDecisions(_ run: ScenarioRun, from: Instant? = nil, through: Instant? = nil,
                            matching: (SyncEvent) -> Bool = { _ in true }, _ expected: [String],
                            sourceLocation: SourceLocation = #_sourceLocation) {
    expectDecisions(run.log, from: from, through: through, matching: matching, expected, sourceLocation: sourceLocation)
}

/// Where an event is looked for, and the part of the log a failure shows.
struct EventWindow: CustomStringConvertible {
    /// The log shown on a failure: this much either side of the expected time …
    static let context = Interval.seconds(30)
    /// … and at most this many lines, those nearest the expected time.
    static let maxLines = 40

    var time: Instant?
    var tolerance: Interval

    init(_ time: Instant?, _ tolerance: Interval) {
        self.time = time
        self.tolerance = tolerance
    }

    func contains(_ instant: Instant) -> Bool {
        guard let time else { return true }
        return instant >= time - tolerance && instant <= time + tolerance
    }

    var description: String {
        guard let time else { return "in the log" }
        return tolerance == .zero ? "at \(time)" : "at \(time) ± \(tolerance)"
    }

    /// The log around the expected time (or all of it, when no time was given), cut to
    /// `maxLines` lines nearest that time.
    func excerpt(of log: [TimedEvent]) -> String {
        guard !log.isEmpty else { return "the log is empty" }
        var lines = log
        var heading = "the log (\(log.count) events)"
        if let time {
            let from = time - tolerance - Self.context, to = time + tolerance + Self.context
            lines = log.filter { $0.at >= from && $0.at <= to }
            heading = "the log from \(from) to \(to)"
            if lines.isEmpty {  // nothing near: show the events just before and after
                let after = log.firstIndex { $0.at > to } ?? log.endIndex
                lines = Array(log[max(0, after - Self.maxLines / 2)..<min(log.count, after + Self.maxLines / 2)])
                heading = "nothing in the log from \(from) to \(to); the nearest events"
            }
        }
        var cut = ""
        if lines.count > Self.maxLines {
            let centre = time.map { t in lines.firstIndex { $0.at >= t } ?? lines.count } ?? 0
            let start = min(max(0, centre - Self.maxLines / 2), lines.count - Self.maxLines)
            cut = " (\(lines.count - Self.maxLines) more not shown)"
            lines = Array(lines[start..<(start + Self.maxLines)])
        }
        return heading + cut + ":\n" + lines.map { "  " + $0.line }.joined(separator: "\n")
    }
}
