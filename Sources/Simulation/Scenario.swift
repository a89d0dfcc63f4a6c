@_exported import AppActions
import SyncCore

/// A parsed scenario file (SPEC §9).
public struct Scenario: Equatable, Sendable {
    public var source: String
    public var seed: UInt64 = 1
    public var duration: Interval = .hours(1)
    public var contacts = 6
    public var trafficPerHour: Double = 12
    public var mode: NotificationMode = .remotePush
    /// After the final foreground, how long the run goes on so that "lost" is well defined.
    public var settle: Interval = .minutes(15)
    public var steps: [Step] = []
    /// A file parsed `streaming` keeps its text here instead of `steps` (then empty): a run
    /// reads its steps as it reaches them.
    public var script: ScenarioScript?

    /// The steps in order: `steps`, or the script's read one at a time.
    public var stepSequence: AnySequence<Step> {
        if let script { return AnySequence(script) }
        return AnySequence(steps)
    }

    public struct Step: Equatable, Sendable {
        public var at: Instant
        public var directive: Directive
        public var line: Int

        public init(at: Instant, directive: Directive, line: Int) {
            self.at = at
            self.directive = directive
            self.line = line
        }
    }

    public init(source: String) { self.source = source }

    /// The contact handles `contacts N` creates, in order (a new session's).
    public static func defaultHandles(_ n: Int) -> [String] { AppSession.defaultHandles(n) }
}

/// A parsed scenario file's text, its steps read from it one at a time (each run reads its
/// own): a million-line file is held as its bytes, not as a million steps.
public struct ScenarioScript: Sequence, Equatable, Sendable {
    public let text: String
    public let file: String

    public func makeIterator() -> Iterator { Iterator(lines: ScenarioParser.LineIterator(text), file: file) }

    public struct Iterator: IteratorProtocol {
        var lines: ScenarioParser.LineIterator
        let file: String
        var number = 0

        public mutating func next() -> Scenario.Step? {
            while let raw = lines.next() {
                number += 1
                if let step = ScenarioParser.step(onLine: raw, number: number, file: file) { return step }
            }
            return nil
        }
    }
}
