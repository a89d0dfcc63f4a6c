import SyncCore
import SimWorld

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
        func fail(_ message: String) -> ScenarioError { ScenarioError(file: file, line: 1, message: message) }
        let words: [Word]
        do { words = try tokenize(line) } catch let e as TokenError { throw fail(e.message) }
        guard !words.isEmpty else { throw fail("expected a directive, e.g. indexer down") }
        if words.first == .bare("at") { throw fail("one directive without its time (\"indexer down\", not \"at 5m indexer down\")") }
        return try parseDirective(words, fail)
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
            case .add(let a, _): known.insert(Directive.handle(forAddress: a))
            case .send(let h, _), .receive(let h, _), .mute(let h), .unmute(let h), .open(let h):
                guard known.contains(h) else {
                    throw fail("unknown contact \"\(h)\" (known: \(known.sorted().joined(separator: ", ")))")
                }
            default: break
            }
        }
    }

    private static func parseDirective(_ w: [Word], _ fail: (String) -> ScenarioError) throws -> Directive {
        let verb = try bare(w[0], "a verb", fail)
        func arg(_ i: Int, _ usage: String) throws -> String {
            guard i < w.count else { throw fail("expected: \(usage)") }
            return try bare(w[i], usage, fail)
        }
        func text(_ i: Int, _ usage: String) throws -> String {
            guard i < w.count, case .quoted(let s) = w[i] else { throw fail("expected quoted text: \(usage)") }
            return s
        }
        func end(_ n: Int, _ usage: String) throws {
            guard w.count == n else { throw fail("unexpected \"\(w[n].display)\" after \(usage)") }
        }
        switch verb {
        case "foreground": try end(1, "foreground"); return .foreground
        case "background": try end(1, "background"); return .background
        case "sync": try end(1, "sync"); return .sync
        case "quit": try end(1, "quit"); return .quit
        case "stop": try end(1, "stop"); return .stop
        case "retry": try end(1, "retry"); return .retry
        case "preview":
            let usage = "preview message|contact|hidden"
            let v = try arg(1, usage)
            guard let p = PreviewMode(rawValue: v) else { throw fail("unknown preview \"\(v)\" (expected message, contact or hidden)") }
            try end(2, usage)
            return .preview(p)
        case "open":
            let h = try handle(try arg(1, "open NAME"), fail)
            try end(2, "open NAME")
            return .open(handle: h)
        case "push":
            let usage = "push drop P%|delay D|down|up"
            switch try arg(1, usage) {
            case "drop": let p = try parsePercent(try arg(2, usage), fail); try end(3, usage); return .pushDrop(percent: p)
            case "delay": let d = try parseDuration(try arg(2, usage), fail); try end(3, usage); return .pushDelay(d)
            case "down": try end(2, usage); return .pushDown
            case "up": try end(2, usage); return .pushUp
            case let other: throw fail("unknown push fault \"\(other)\" (expected: \(usage))")
            }
        case "realtime":
            let usage = "realtime down|up|stale|flaky P%"
            switch try arg(1, usage) {
            case "down": try end(2, usage); return .realtimeDown
            case "up": try end(2, usage); return .realtimeUp
            case "stale": try end(2, usage); return .realtimeStale
            case "flaky": let p = try parsePercent(try arg(2, usage), fail); try end(3, usage); return .realtimeFlaky(percent: p)
            case let other: throw fail("unknown realtime fault \"\(other)\" (expected: \(usage))")
            }
        case "indexer":
            let usage = "indexer down|up|latency D"
            switch try arg(1, usage) {
            case "down": try end(2, usage); return .indexerDown
            case "up": try end(2, usage); return .indexerUp
            case "latency": let d = try parseDuration(try arg(2, usage), fail); try end(3, usage); return .indexerLatency(d)
            case let other: throw fail("unknown indexer fault \"\(other)\" (expected: \(usage))")
            }
        case "token":
            let usage = "token expire|invalidate"
            switch try arg(1, usage) {
            case "expire": try end(2, usage); return .tokenExpire
            case "invalidate": try end(2, usage); return .tokenInvalidate
            case let other: throw fail("unknown token fault \"\(other)\" (expected: \(usage))")
            }
        case "network":
            let usage = "network off|on"
            switch try arg(1, usage) {
            case "off": try end(2, usage); return .networkOff
            case "on": try end(2, usage); return .networkOn
            case let other: throw fail("unknown network fault \"\(other)\" (expected: \(usage))")
            }
        case "mode":
            let m = try parseMode(try arg(1, "mode M"), fail)
            try end(2, "mode M")
            return .mode(m)
        case "send", "receive":
            let usage = "\(verb) NAME \"TEXT\""
            let h = try handle(try arg(1, usage), fail)
            let t = try text(2, usage)
            try end(3, usage)
            // You write within the limit the compose line keeps; a peer (`receive`) is not
            // bound by it, so that hostile peers can be scripted.
            let bytes = t.utf8.count, limit = MessageLimits.maxBodyBytes
            if verb == "send", bytes > limit {
                throw fail("send text is \(bytes) bytes; a message is at most \(limit) bytes (\(limit / 1024) KiB)")
            }
            return verb == "send" ? .send(handle: h, text: t) : .receive(handle: h, text: t)
        case "add":
            let usage = "add ADDRESS \"DISPLAY NAME\""
            let a = try arg(1, usage)
            guard Directive.isAddress(a) else { throw fail("bad address \"\(a)\" (expected kaspa: and 8 to 80 lower-case letters and digits)") }
            let d = try text(2, usage)
            try end(3, usage)
            return .add(address: a, displayName: d)
        case "contact":
            let usage = "contact NAME \"DISPLAY NAME\""
            let h = try handle(try arg(1, usage), fail)
            let d = try text(2, usage)
            try end(3, usage)
            return .contact(handle: h, displayName: d)
        case "mute", "unmute":
            let h = try handle(try arg(1, "\(verb) NAME"), fail)
            try end(2, "\(verb) NAME")
            return verb == "mute" ? .mute(handle: h) : .unmute(handle: h)
        default:
            throw fail("unknown verb \"\(verb)\" (expected foreground, background, push, realtime, indexer, token, network, mode, preview, send, receive, contact, mute, unmute, open, sync, retry, quit or stop)")
        }
    }

    // MARK: - Values

    /// `90s`, `10m`, `2h`, `500ms`, `1h30m`, or a bare number of seconds.
    public static func parseDuration(_ s: String, _ fail: (String) -> ScenarioError) throws -> Interval {
        if let n = Int64(s), n >= 0 { return .seconds(n) }
        var total: Int64 = 0
        var digits = ""
        var rest = Substring(s)
        var sawUnit = false
        while let c = rest.first {
            if c.isASCII, c.isNumber {
                digits.append(c)
                rest = rest.dropFirst()
                continue
            }
            guard !digits.isEmpty, let n = Int64(digits), n < 1_000_000_000 else { throw fail("bad duration \"\(s)\" (use e.g. 90s, 10m, 2h)") }
            let unit: Int64
            if rest.hasPrefix("ms") { unit = 1; rest = rest.dropFirst(2) }
            else if rest.hasPrefix("s") { unit = 1000; rest = rest.dropFirst() }
            else if rest.hasPrefix("m") { unit = 60_000; rest = rest.dropFirst() }
            else if rest.hasPrefix("h") { unit = 3_600_000; rest = rest.dropFirst() }
            else if rest.hasPrefix("d") { unit = 86_400_000; rest = rest.dropFirst() }
            else { throw fail("bad duration \"\(s)\" (use e.g. 90s, 10m, 2h)") }
            total += n * unit
            digits = ""
            sawUnit = true
        }
        guard sawUnit, digits.isEmpty else { throw fail("bad duration \"\(s)\" (use e.g. 90s, 10m, 2h)") }
        return Interval(milliseconds: total)
    }

    static func parsePercent(_ s: String, _ fail: (String) -> ScenarioError) throws -> Double {
        guard s.hasSuffix("%"), let v = Double(s.dropLast()), v.isFinite, (0...100).contains(v) else {
            throw fail("bad percentage \"\(s)\" (use e.g. 100% or 12.5%)")
        }
        return v
    }

    static func parseRate(_ s: String, _ fail: (String) -> ScenarioError) throws -> Double {
        let parts = s.split(separator: "/")
        guard parts.count == 2, let n = Double(parts[0]), n.isFinite, n >= 0, n <= 1_000_000 else {
            throw fail("bad traffic rate \"\(s)\" (use e.g. 12/h)")
        }
        switch parts[1] {
        case "h": return n
        case "m": return n * 60
        case "d": return n / 24
        default: throw fail("bad traffic rate \"\(s)\" (unit must be /h, /m or /d)")
        }
    }

    static func parseMode(_ s: String, _ fail: (String) -> ScenarioError) throws -> NotificationMode {
        guard let m = NotificationMode(rawValue: s) else {
            throw fail("unknown mode \"\(s)\" (expected remote-push, background-fetch or off)")
        }
        return m
    }

    static func handle(_ s: String, _ fail: (String) -> ScenarioError) throws -> String {
        guard !s.isEmpty, s.count <= 32, s.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw fail("bad contact name \"\(s)\" (letters, digits, - and _)")
        }
        return s
    }

    // MARK: - Words

    enum Word: Equatable {
        case bare(String)
        case quoted(String)

        var display: String {
            switch self {
            case .bare(let s): return s
            case .quoted(let s): return "\"" + UntrustedText.visible(s) + "\""
            }
        }
    }

    struct TokenError: Error { var message: String }

    private static func bare(_ w: Word, _ what: String, _ fail: (String) -> ScenarioError) throws -> String {
        guard case .bare(let s) = w else { throw fail("expected \(what), found quoted text") }
        return s
    }

    private static func one(_ w: [Word], _ usage: String, _ fail: (String) -> ScenarioError) throws -> String {
        guard w.count == 2 else { throw fail("expected: \(usage)") }
        return try bare(w[1], usage, fail)
    }

    /// Splits a line into bare words and quoted strings; `#` outside quotes starts a comment.
    static func tokenize(_ line: String) throws -> [Word] {
        // Most lines have no escape: split their UTF-8 bytes at the ASCII delimiters (never
        // inside a multi-byte sequence), without a scalar array. A backslash takes the full path.
        var line = line
        if let words = line.withUTF8({ plainWords($0) }) { return words }
        return try tokenizeScalars(line)
    }

    /// The words of a line with no backslash, nil when it has one or a quote is out of place.
    private static func plainWords(_ bytes: UnsafeBufferPointer<UInt8>) -> [Word]? {
        let space = UInt8(ascii: " "), tab = UInt8(ascii: "\t"), hash = UInt8(ascii: "#"), quote = UInt8(ascii: "\""),
            backslash = UInt8(ascii: "\\")
        var words: [Word] = []
        var i = 0
        while i < bytes.count {
            let c = bytes[i]
            if c == space || c == tab { i += 1; continue }
            if c == hash { break }
            if c == quote {
                var j = i + 1
                while j < bytes.count, bytes[j] != quote {
                    if bytes[j] == backslash { return nil }
                    j += 1
                }
                guard j < bytes.count else { return nil }  // unterminated: the full path says so
                words.append(.quoted(String(decoding: UnsafeBufferPointer(rebasing: bytes[(i + 1)..<j]), as: UTF8.self)))
                i = j + 1
                continue
            }
            var j = i
            while j < bytes.count, bytes[j] != space, bytes[j] != tab, bytes[j] != hash {
                if bytes[j] == quote || bytes[j] == backslash { return nil }
                j += 1
            }
            words.append(.bare(String(decoding: UnsafeBufferPointer(rebasing: bytes[i..<j]), as: UTF8.self)))
            i = j
        }
        return words
    }

    /// The full path: every scalar, escapes and all (and the errors of a line).
    static func tokenizeScalars(_ line: String) throws -> [Word] {
        var words: [Word] = []
        let scalars = Array(line.unicodeScalars)
        var i = 0
        while i < scalars.count {
            let c = scalars[i]
            if c == " " || c == "\t" { i += 1; continue }
            if c == "#" { break }
            if c == "\"" {
                var s = String.UnicodeScalarView()
                i += 1
                var closed = false
                while i < scalars.count {
                    let d = scalars[i]
                    if d == "\"" { closed = true; i += 1; break }
                    if d == "\\" {
                        i += 1
                        guard i < scalars.count else { throw TokenError(message: "unfinished escape at end of line") }
                        let e = scalars[i]
                        switch e {
                        case "n": s.append("\n")
                        case "t": s.append("\t")
                        case "\\": s.append("\\")
                        case "\"": s.append("\"")
                        case "e": s.append("\u{1B}")
                        case "x":
                            guard i + 2 < scalars.count, let v = UInt32(String(String.UnicodeScalarView(scalars[(i + 1)...(i + 2)])), radix: 16) else {
                                throw TokenError(message: "bad escape \\x: expected two hex digits")
                            }
                            s.append(Unicode.Scalar(UInt8(v)))
                            i += 2
                        case "u":
                            guard i + 1 < scalars.count, scalars[i + 1] == "{", let close = scalars[(i + 1)...].firstIndex(of: "}") else {
                                throw TokenError(message: "bad escape \\u: expected \\u{HHHH}")
                            }
                            let hex = String(String.UnicodeScalarView(scalars[(i + 2)..<close]))
                            guard (1...6).contains(hex.count), let v = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(v) else {
                                throw TokenError(message: "bad escape \\u{\(hex)}: not a Unicode scalar")
                            }
                            s.append(scalar)
                            i = close
                        default:
                            throw TokenError(message: "unknown escape \\\(e) (known: \\n \\t \\\\ \\\" \\e \\xHH \\u{HHHH})")
                        }
                        i += 1
                        continue
                    }
                    s.append(d)
                    i += 1
                }
                guard closed else { throw TokenError(message: "unterminated quoted text") }
                words.append(.quoted(String(s)))
                continue
            }
            var s = String.UnicodeScalarView()
            while i < scalars.count, scalars[i] != " ", scalars[i] != "\t", scalars[i] != "#" {
                if scalars[i] == "\"" { throw TokenError(message: "quote inside a word") }
                s.append(scalars[i])
                i += 1
            }
            words.append(.bare(String(s)))
        }
        return words
    }
}
