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
