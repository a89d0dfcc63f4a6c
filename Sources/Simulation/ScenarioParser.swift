import Directives
import SyncCore
import SimulatedWorld

/// A scenario error: `FILE:LINE: message`, one line.
public struct ScenarioError: Error, Equatable, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var message: String

    public init(file: String, line: Int, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    /// One line, with anything quoted from the file made visible (`^[`, `<U+009B>`).
    public var description: String {
        let text = UntrustedText.visible(message)
        return line > 0 ? "\(file):\(line): \(text)" : "\(file): \(text)"
    }
}

/// Parses the scenario format of docs/scenarios.md: one directive per line, `#` comments, durations
/// like `90s`, `10m`, `2h` (and sums such as `1h30m`), quoted text with `\n`, `\t`, `\\`,
/// `\"`, `\e`, `\xHH` and `\u{HHHH}` escapes. The first problem stops parsing.
public enum ScenarioParser {
    public static func parse(_ text: String, file: String) throws -> Scenario {
        var steps: [Scenario.Step] = []
        var lines = LineIterator(text)
        var scenario = try read(&lines, file: file) { step, _ in steps.append(step) }
        scenario.steps = steps
        scenario.stepCount = steps.count
        try validate(steps, of: scenario, file: file)
        return scenario
    }

    /// Parses and checks the whole file as `parse` does, but keeps the text, not its steps: a
    /// run reads them as it reaches them (`Scenario.script`). A million-line file is then its
    /// bytes, not a million steps; the lines are parsed again as they are played.
    public static func parse(_ text: String, file: String, streaming: Bool) throws -> Scenario {
        guard streaming else { return try parse(text, file: file) }
        var lines = LineIterator(text)
        return try parse(lines: &lines, script: ScenarioScript(text: text, file: file), file: file)
    }

    /// Parses and checks a file on disk as `parse(_:file:streaming: true)` does a text, reading
    /// it a chunk at a time: the file's size is never in memory, not even while it is checked.
    public static func parse(streaming text: ScenarioFileText) throws -> Scenario {
        try text.checkUTF8()
        var lines = text.lines()
        return try parse(lines: &lines, script: ScenarioScript(file: text), file: text.path)
    }

    private static func parse<Lines: IteratorProtocol<String>>(lines: inout Lines, script: ScenarioScript, file: String) throws -> Scenario {
        // The steps are checked as they are read, against the header read so far; the first
        // problem found so is thrown only after the whole file parsed (as `parse` throws a
        // problem of syntax before any of the whole file's). A header line after the first
        // step (a rare file) changes what they are checked against: then they are read again.
        var checker: StepChecker?
        var found: ScenarioError?
        var headerAfterSteps = false
        var count = 0
        var scenario = try read(&lines, file: file, header: { _ in if checker != nil { headerAfterSteps = true } }) { step, header in
            count += 1
            if checker == nil { checker = StepChecker(header) }
            guard found == nil else { return }
            do { try checker!.check(step, file: file) } catch let e as ScenarioError { found = e } catch {}
        }
        if headerAfterSteps {
            try validate(script, of: scenario, file: file)
        } else if let found {
            throw found
        }
        scenario.script = script
        scenario.stepCount = count
        return scenario
    }

    /// Reads the file's lines in order: the header into the scenario, each step given to
    /// `step`. The first problem stops it.
    /// `header` is told of each line that is not a step.
    private static func read<Lines: IteratorProtocol<String>>(_ lines: inout Lines, file: String, header: (Int) -> Void = { _ in },
                                                              step: (Scenario.Step, _ header: Scenario) -> Void) throws -> Scenario {
        var scenario = Scenario(source: file)
        var lastAt = Instant.zero
        var number = 0
        while let raw = lines.next() {
            number += 1
            let line = number
            func fail(_ message: String) -> ScenarioError { ScenarioError(file: file, line: line, message: message) }
            var words: [Word]
            do { words = try tokenize(raw) } catch let e as TokenError { throw fail(e.message) }
            guard !words.isEmpty else { continue }
            let head = try bare(words[0], "a directive", fail)
            if head != "at" { header(line) }
            switch head {
            case "seed":
                let v = try one(words, "seed N", fail)
                guard let n = UInt64(v) else { throw fail("seed must be a non-negative integer, got \"\(v)\"") }
                scenario.seed = n
            case "duration":
                scenario.duration = try parseDuration(try one(words, "duration D", fail), fail)
                guard scenario.duration.milliseconds > 0 else { throw fail("duration must be positive") }
            case "settle":
                scenario.settle = try parseDuration(try one(words, "settle D", fail), fail)
            case "contacts":
                let v = try one(words, "contacts N", fail)
                guard let n = Int(v), (0...1000).contains(n) else { throw fail("contacts must be an integer from 0 to 1000, got \"\(v)\"") }
                scenario.contacts = n
            case "traffic":
                scenario.trafficPerHour = try parseRate(try one(words, "traffic N/h", fail), fail)
            case "mode":
                scenario.mode = try parseMode(try one(words, "mode remote-push|background-fetch|off", fail), fail)
            case "push":
                let usage = "push model ideal|apns|fcm"
                guard words.count == 3, try bare(words[1], usage, fail) == "model" else { throw fail("expected: \(usage)") }
                let v = try bare(words[2], usage, fail)
                guard let model = PushModel(rawValue: v) else { throw fail("unknown push model \"\(v)\" (expected ideal, apns or fcm)") }
                scenario.pushModel = model
            case "at":
                let parsed = try parseStep(words, line: line, fail)
                guard parsed.at >= lastAt else { throw fail("time \(try bare(words[1], "a time", fail)) goes back before the previous step (\(lastAt))") }
                lastAt = parsed.at
                step(parsed, scenario)
            default:
                throw fail("unknown directive \"\(head)\" (expected seed, duration, contacts, traffic, mode, push model, settle or at)")
            }
        }
        return scenario
    }

    /// One directive alone (`indexer down`, `receive alice "hi"`), as an operator or a client
    /// sends it to a server: the verbs and their values are checked as in a file; the contacts
    /// it names are the receiver's to check (a file checks them against its header).
    public static func directive(_ line: String, file: String) throws -> Directive {
        do { return try Directive(parsing: line) } catch let e as DirectiveParser.Failure {
            throw ScenarioError(file: file, line: 1, message: e.message)
        }
    }

    /// An `at TIME VERB …` line.
    private static func parseStep(_ words: [Word], line: Int, _ fail: (String) -> ScenarioError) throws -> Scenario.Step {
        guard words.count >= 3 else { throw fail("expected: at TIME VERB …") }
        let at = Instant.zero + (try parseDuration(try bare(words[1], "a time", fail), fail))
        return Scenario.Step(at: at, directive: try parseDirective(Array(words.dropFirst(2)), fail), line: line)
    }

    /// The step on a line of a file that parsed (`ScenarioScript`), nil for any other line.
    static func step(onLine raw: String, number: Int, file: String) -> Scenario.Step? {
        func fail(_ message: String) -> ScenarioError { ScenarioError(file: file, line: number, message: message) }
        guard let words = try? tokenize(raw), let first = words.first, first == .bare("at") else { return nil }
        do { return try parseStep(words, line: number, fail) } catch {
            preconditionFailure("\(file):\(number) parsed before and not now: \(error)")
        }
    }

    /// The lines of a file (docs/scenarios.md: LF or CRLF line ends, and maybe a UTF-8 BOM first), one
    /// at a time: a long file is not split into an array first. Lines are split on scalars,
    /// not on `Character`s: Swift reads `\r\n` as one `Character`, so a split on "\n" would
    /// see a CRLF file as one long line. Only the CR of a CRLF is a line end; a CR anywhere
    /// else stays in its line (an error outside quotes).
    struct LineIterator: IteratorProtocol {
        private let scalars: Substring.UnicodeScalarView
        private var index: Substring.UnicodeScalarView.Index
        private var done = false

        init(_ text: String) {
            var scalars = Substring(text).unicodeScalars
            if scalars.first == "\u{FEFF}" { scalars.removeFirst() }
            self.scalars = scalars
            index = scalars.startIndex
        }

        mutating func next() -> String? {
            guard !done else { return nil }
            let end = scalars[index...].firstIndex(of: "\n") ?? scalars.endIndex
            var line = scalars[index..<end]
            if line.last == "\r" { line = line.dropLast() }
            if end == scalars.endIndex { done = true } else { index = scalars.index(after: end) }
            return String(Substring(line))
        }
    }

    /// Checks that need the whole file: steps within the duration, contacts that exist.
    private static func validate<Steps: Sequence<Scenario.Step>>(_ steps: Steps, of scenario: Scenario, file: String) throws {
        var checker = StepChecker(scenario)
        for step in steps { try checker.check(step, file: file) }
    }

    /// The steps of a scenario in order against its header: within the duration, naming
    /// contacts that exist by then.
    struct StepChecker {
        private var known: Set<String>
        private let duration: Interval

        init(_ header: Scenario) {
            known = Set(Scenario.defaultHandles(header.contacts))
            duration = header.duration
        }

        mutating func check(_ step: Scenario.Step, file: String) throws {
            func fail(_ m: String) -> ScenarioError { ScenarioError(file: file, line: step.line, message: m) }
            guard step.at <= .zero + duration else {
                throw fail("step at \(step.at) is after the scenario's duration (\(duration))")
            }
            switch step.directive {
            case .contact(let h, _): known.insert(h)
            case .add(let a, _): known.insert(a)  // a contact added by its address goes by it
            case .send(let h, _), .receive(let h, _), .mute(let h), .unmute(let h), .open(let h):
                guard known.contains(h) else {
                    throw fail("unknown contact \"\(h)\" (known: \(known.sorted().joined(separator: ", ")))")
                }
            default: break
            }
        }
    }

    // The words of one directive: `DirectiveParser` (Directives), shared with every
    // reader of a single line (a server's operator, a client's directive), errors wrapped
    // here with the file and line.
    typealias Word = DirectiveParser.Word
    typealias TokenError = DirectiveParser.TokenError

    static func parseDirective(_ w: [Word], _ fail: (String) -> ScenarioError) throws -> Directive {
        try DirectiveParser.directive(w, fail)
    }

    public static func parseDuration(_ s: String, _ fail: (String) -> ScenarioError) throws -> Interval {
        try DirectiveParser.duration(s, fail)
    }

    static func parseRate(_ s: String, _ fail: (String) -> ScenarioError) throws -> Double { try DirectiveParser.rate(s, fail) }
    static func parseMode(_ s: String, _ fail: (String) -> ScenarioError) throws -> NotificationMode { try DirectiveParser.mode(s, fail) }
    static func bare(_ w: Word, _ what: String, _ fail: (String) -> ScenarioError) throws -> String { try DirectiveParser.bare(w, what, fail) }
    static func one(_ w: [Word], _ usage: String, _ fail: (String) -> ScenarioError) throws -> String { try DirectiveParser.one(w, usage, fail) }
    static func tokenize(_ line: String) throws -> [Word] { try DirectiveParser.tokenize(line) }
    static func tokenizeScalars(_ line: String) throws -> [Word] { try DirectiveParser.tokenizeScalars(line) }
}
