import SyncCore

/// The words of one directive, as a scenario line, a key's recording, a server's operator
/// (`POST /admin/fault`) and a client's directive say them: the one reader of
/// a directive. `Directive(parsing:)` reads a line alone; `ScenarioParser` reads a file's
/// lines with it and names the file and the line in its errors.
public enum DirectiveParser {
    /// A line that is not a directive, in one line saying why.
    public struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    public static func directive(_ w: [Word], _ fail: (String) -> any Error) throws -> Directive {
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
            case "drop": let p = try percent(try arg(2, usage), fail); try end(3, usage); return .fault(.pushDrop(percent: p))
            case "delay": let d = try duration(try arg(2, usage), fail); try end(3, usage); return .fault(.pushDelay(d))
            case "down": try end(2, usage); return .fault(.pushDown)
            case "up": try end(2, usage); return .fault(.pushUp)
            case let other: throw fail("unknown push fault \"\(other)\" (expected: \(usage))")
            }
        case "realtime":
            let usage = "realtime down|up|stale|flaky P%"
            switch try arg(1, usage) {
            case "down": try end(2, usage); return .fault(.realtimeDown)
            case "up": try end(2, usage); return .fault(.realtimeUp)
            case "stale": try end(2, usage); return .fault(.realtimeStale)
            case "flaky": let p = try percent(try arg(2, usage), fail); try end(3, usage); return .fault(.realtimeFlaky(percent: p))
            case let other: throw fail("unknown realtime fault \"\(other)\" (expected: \(usage))")
            }
        case "indexer":
            let usage = "indexer down|up|latency D"
            switch try arg(1, usage) {
            case "down": try end(2, usage); return .fault(.indexerDown)
            case "up": try end(2, usage); return .fault(.indexerUp)
            case "latency": let d = try duration(try arg(2, usage), fail); try end(3, usage); return .fault(.indexerLatency(d))
            case let other: throw fail("unknown indexer fault \"\(other)\" (expected: \(usage))")
            }
        case "token":
            let usage = "token expire|invalidate"
            switch try arg(1, usage) {
            case "expire": try end(2, usage); return .fault(.tokenExpire)
            case "invalidate": try end(2, usage); return .fault(.tokenInvalidate)
            case let other: throw fail("unknown token fault \"\(other)\" (expected: \(usage))")
            }
        case "network":
            let usage = "network off|on"
            switch try arg(1, usage) {
            case "off": try end(2, usage); return .fault(.networkOff)
            case "on": try end(2, usage); return .fault(.networkOn)
            case let other: throw fail("unknown network fault \"\(other)\" (expected: \(usage))")
            }
        case "mode":
            let m = try mode(try arg(1, "mode M"), fail)
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

    /// The longest duration any line may say: ten years. A line is text anyone may send (a
    /// server's `POST /v1/fault` reads one), and `indexer latency 9999999999999999` overflowed
    /// the milliseconds and stopped the server.
    public static let maxDuration = Interval.hours(24 * 3650)

    /// `90s`, `10m`, `2h`, `500ms`, `1h30m`, or a bare number of seconds; at most `maxDuration`.
    public static func duration(_ s: String, _ fail: (String) -> any Error) throws -> Interval {
        let tooLong = "duration \"\(s.prefix(40))\" is too long (at most 3650d)"
        if let n = Int64(s), n >= 0 {
            guard n <= maxDuration.milliseconds / 1000 else { throw fail(tooLong) }
            return .seconds(n)
        }
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
            let (part, over) = n.multipliedReportingOverflow(by: unit)
            let (sum, overSum) = total.addingReportingOverflow(part)
            guard !over, !overSum, sum <= maxDuration.milliseconds else { throw fail(tooLong) }
            total = sum
            digits = ""
            sawUnit = true
        }
        guard sawUnit, digits.isEmpty else { throw fail("bad duration \"\(s)\" (use e.g. 90s, 10m, 2h)") }
        return Interval(milliseconds: total)
    }

    public static func percent(_ s: String, _ fail: (String) -> any Error) throws -> Double {
        guard s.hasSuffix("%"), let v = Double(s.dropLast()), v.isFinite, (0...100).contains(v) else {
            throw fail("bad percentage \"\(s)\" (use e.g. 100% or 12.5%)")
        }
        return v
    }

    public static func rate(_ s: String, _ fail: (String) -> any Error) throws -> Double {
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

    public static func mode(_ s: String, _ fail: (String) -> any Error) throws -> NotificationMode {
        guard let m = NotificationMode(rawValue: s) else {
            throw fail("unknown mode \"\(s)\" (expected remote-push, background-fetch or off)")
        }
        return m
    }

    /// A contact's name in a line: a handle (letters, digits, - and _, at most 32), or the
    /// address of a contact added by its address (`Directive.isAddress`).
    public static func handle(_ s: String, _ fail: (String) -> any Error) throws -> String {
        if Directive.isAddress(s) { return s }
        guard !s.isEmpty, s.count <= 32, s.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw fail("bad contact name \"\(s)\" (letters, digits, - and _, or a kaspa: address)")
        }
        return s
    }

    // MARK: - Words

    public enum Word: Equatable, Sendable {
        case bare(String)
        case quoted(String)

        var display: String {
            switch self {
            case .bare(let s): return s
            case .quoted(let s): return "\"" + UntrustedText.visible(s) + "\""
            }
        }
    }

    public struct TokenError: Error { public var message: String }

    public static func bare(_ w: Word, _ what: String, _ fail: (String) -> any Error) throws -> String {
        guard case .bare(let s) = w else { throw fail("expected \(what), found quoted text") }
        return s
    }

    public static func one(_ w: [Word], _ usage: String, _ fail: (String) -> any Error) throws -> String {
        guard w.count == 2 else { throw fail("expected: \(usage)") }
        return try bare(w[1], usage, fail)
    }

    /// Splits a line into bare words and quoted strings; `#` outside quotes starts a comment.
    public static func tokenize(_ line: String) throws -> [Word] {
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
    public static func tokenizeScalars(_ line: String) throws -> [Word] {
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

extension Directive {
    /// One directive alone, e.g. `push drop 100%` or `receive alice "hi"` (not a timed
    /// `at 5m …` line). A line that is not one throws `DirectiveParser.Failure`, saying why.
    public init(parsing line: String) throws {
        let fail: (String) -> any Error = { DirectiveParser.Failure(message: $0) }
        let words: [DirectiveParser.Word]
        do { words = try DirectiveParser.tokenize(line) } catch let e as DirectiveParser.TokenError { throw fail(e.message) }
        guard !words.isEmpty else { throw fail("expected a directive, e.g. indexer down") }
        if words.first == .bare("at") { throw fail("one directive without its time (\"indexer down\", not \"at 5m indexer down\")") }
        self = try DirectiveParser.directive(words, fail)
    }

    /// Who carries a directive out: the app (its lifecycle, settings, the user's messages), the
    /// world (a fault of the network, a contact writing), or the script that plays them
    /// (`quit`, `stop`).
    public enum Target: Equatable, Sendable {
        case app, world, script
    }

    public var target: Target {
        switch self {
        case .fault, .receive:
            return .world
        case .quit, .stop:
            return .script
        case .foreground, .background, .mode, .send, .contact, .add, .mute, .unmute, .sync, .preview, .open, .retry:
            return .app
        }
    }

    /// What a server may ask a client to do (docs/server.md#directives-a-server-may-send): the
    /// app's lifecycle and sync, as the operator's test keys do. Never to publish as its user
    /// (`send`), rename or add a contact, mute, change what the screen shows or quit: the server
    /// refuses to pass them on, and the client refuses them if one comes.
    public var aServerMayAsk: Bool {
        switch self {
        case .foreground, .background, .sync, .retry, .mode: return true
        default: return false
        }
    }

    /// The words that say so, where a directive is refused for it.
    public static let whatAServerMayAsk = "a server may ask a client only to go to the background or foreground, sync, retry or change its notification mode"
}
