import ClientRuntime
import Directives
import SimulatedWorld
import SyncCore

/// A parsed scenario file (docs/scenarios.md).
public struct Scenario: Equatable, Sendable {
    public var source: String
    public var seed: UInt64 = 1
    public var duration: Interval = .hours(1)
    public var contacts = 6
    public var trafficPerHour: Double = 12
    public var mode: NotificationMode = .remotePush
    /// What the push service keeps while the device is unreachable (`push model`).
    public var pushModel: PushModel = .ideal
    /// After the final foreground, how long the run goes on so that "lost" is well defined.
    public var settle: Interval = .minutes(15)
    public var steps: [Step] = []
    /// How many steps the script has (`steps.count`, or the streamed script's).
    public var stepCount = 0
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

    /// About how many messages a run of this scenario carries: a step each (most are
    /// `receive` or `send`) and the traffic over the duration.
    public var expectedMessages: Int {
        stepCount + Int(trafficPerHour * Double(duration.milliseconds) / 3_600_000)
    }

    /// The contact handles `contacts N` creates, in order (a new session's).
    public static func defaultHandles(_ n: Int) -> [String] { SimulatedWorld.defaultHandles(n) }
}

/// A parsed scenario file's text, its steps read from it one at a time (each run reads its
/// own): a million-line file is held as its bytes, not as a million steps; or, read from
/// disk (`ScenarioFileText`), not held at all.
public struct ScenarioScript: Sequence, Equatable, Sendable {
    private enum Source: Sendable {
        case text(String)
        case file(ScenarioFileText)
    }

    private let source: Source
    public let file: String

    public init(text: String, file: String) {
        source = .text(text)
        self.file = file
    }

    public init(file text: ScenarioFileText) {
        source = .file(text)
        file = text.path
    }

    public static func == (a: ScenarioScript, b: ScenarioScript) -> Bool {
        guard a.file == b.file else { return false }
        switch (a.source, b.source) {
        case (.text(let x), .text(let y)): return x == y
        case (.file(let x), .file(let y)): return x === y
        default: return false
        }
    }

    public func makeIterator() -> Iterator {
        switch source {
        case .text(let text): return Iterator(lines: .text(ScenarioParser.LineIterator(text)), file: file)
        case .file(let text): return Iterator(lines: .file(text.lines()), file: file)
        }
    }

    public struct Iterator: IteratorProtocol {
        enum Lines {
            case text(ScenarioParser.LineIterator)
            case file(ScenarioFileText.TextLines)

            mutating func next() -> String? {
                switch self {
                case .text(var lines):
                    defer { self = .text(lines) }
                    return lines.next()
                case .file(var lines):
                    defer { self = .file(lines) }
                    return lines.next()
                }
            }
        }

        var lines: Lines
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
