import ChatUI
import SyncCore
import Foundation

/// Asks the terminal, once at start and before curses takes it, how it draws emoji sequences
/// (docs/screen.md#emoji): in one write, DECRQM for grapheme clustering (`CSI ? 2027 $ p`),
/// then each test sequence after a carriage return followed by a cursor position request
/// (`CSI 6n`, as JLine and libvaxis measure widths), then the line erased, then DA1 (`CSI c`),
/// which every terminal answers last: its answer fences the others. The wait is bounded
/// (300 ms); what the terminal did not answer by then counts as not answered, and a terminal
/// that answers nothing keeps the safe layout.
///
/// The replies are read by `TerminalReplies` and judged by `decide`, both pure: the tests
/// feed them byte strings.
public enum TerminalProbe {
    /// What `--emoji` (or `SYNCHAT_EMOJI`) asks for.
    public enum Request: String, Sendable, CaseIterable {
        /// Ask the terminal: clustering where it has it, else measured widths, else safe.
        case auto
        /// Whole sequences in one cell pair each, without measuring (a terminal known to
        /// cluster graphemes; clustering is switched on where the terminal has it).
        case full
        /// The split layout every terminal agrees on; nothing is asked.
        case safe
    }

    /// The test sequences, in the order of their cursor reports: an emoji alone (its width must
    /// be the C library's 2), then one of each part the layout measures, then two that check
    /// the measured parts add up.
    public static let samples: [String] = [
        "\u{1F44D}",  // 👍
        "\u{1F1E9}\u{1F1EA}",  // 🇩🇪 flag
        "\u{1F44D}\u{1F3FD}",  // 👍🏽 skin tone
        "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}",  // 👨‍👩‍👧 joined
        "\u{2764}\u{FE0F}",  // ❤️ VS16
        "1\u{FE0F}\u{20E3}",  // 1️⃣ keycap
        "\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}",  // 🏴󠁧󠁢󠁳󠁣󠁴󠁿 tag flag
        "\u{1F3F3}\u{FE0F}\u{200D}\u{1F308}",  // 🏳️‍🌈 check
        "\u{1F9D1}\u{1F3FE}\u{200D}\u{1F4BB}",  // 🧑🏾‍💻 check
    ]

    /// The bytes the probe writes: nothing of it stays on screen (the line is erased before DA1).
    /// `identifying` (`--notify auto`): XTVERSION (`CSI > q`) and kitty's OSC 99 query, in the
    /// same round trip, before the fence.
    public static func query(measuring: Bool, identifying: Bool = false) -> [UInt8] {
        var s = "\u{1B}[?2027$p"
        if measuring {
            for sample in samples { s += "\r" + sample + "\u{1B}[6n" }
            s += "\r\u{1B}[2K"
        }
        if identifying { s += "\u{1B}[>q" + "\u{1B}]99;i=\(osc99QueryId):p=?;\u{1B}\\" }
        s += "\u{1B}[c"
        return Array(s.utf8)
    }

    /// The id of the OSC 99 query (its answer carries it back).
    static let osc99QueryId = "synchat"

    /// What the probe found.
    public struct Finding: Equatable, Sendable {
        public var widths: EmojiWidths
        /// Clustering must be switched on (`CSI ? 2027 h`) now, and off again at exit.
        public var enableClustering: Bool
        /// One line for the log: what was asked, what the terminal answered, what is drawn.
        public var report: String
    }

    /// Judges the replies to `query` for `request`.
    public static func decide(_ request: Request, _ r: TerminalReplies) -> Finding {
        func finding(_ w: EmojiWidths, _ why: String, enable: Bool = false) -> Finding {
            Finding(widths: w, enableClustering: enable, report: "terminal: \(why): \(w.description)")
        }
        switch request {
        case .safe:
            return finding(.safe, "nothing asked (--emoji safe)")
        case .full, .auto:
            let mode = r.clusteringMode
            if mode == 1 || mode == 3 { return finding(.clusters, "grapheme clustering (mode 2027) is on") }
            if mode == 2 { return finding(.clusters, "grapheme clustering (mode 2027) switched on", enable: true) }
            if request == .full { return finding(.clusters, "whole sequences asked (--emoji full), mode 2027 \(mode.map { "answered \($0)" } ?? "not answered")") }
            guard r.fenced else { return finding(.safe, "no answer to the probe within 300 ms") }
            guard r.columns.count == samples.count else {
                return finding(.safe, "\(r.columns.count) of \(samples.count) cursor reports came (mode 2027 \(mode.map { "answered \($0)" } ?? "not answered"))")
            }
            switch measured(r.columns) {
            case .success(let a): return finding(.measured(a), "no grapheme clustering (mode 2027 \(mode.map { "answered \($0)" } ?? "not answered")), widths measured")
            case .failure(let why): return finding(.safe, "widths measured but not understood (\(why.text))")
            }
        }
    }

    struct Refusal: Error { let text: String }

    /// The advances of `columns` (one per sample), when they are ones the layout understands and
    /// the two checks add up; else why not.
    static func measured(_ c: [Int]) -> Result<EmojiAdvances, Refusal> {
        guard c[0] == 2 else { return .failure(Refusal(text: "an emoji alone took \(c[0]) columns, not 2")) }
        guard (1...4).contains(c[1]) else { return .failure(Refusal(text: "a flag took \(c[1]) columns")) }
        let modifier = c[2] - c[0]
        guard modifier == 0 || modifier == 2 else { return .failure(Refusal(text: "a skin tone added \(modifier) columns")) }
        guard c[3] == 2 || c[3] == 6 else { return .failure(Refusal(text: "three emoji joined took \(c[3]) columns")) }
        guard (1...2).contains(c[4]), (1...2).contains(c[5]), (1...2).contains(c[6]) else {
            return .failure(Refusal(text: "VS16, keycap or tag flag took \(c[4]), \(c[5]), \(c[6]) columns"))
        }
        let a = EmojiAdvances(flag: c[1], modifier: modifier, joined: c[3] == 2, presentation: c[4], keycap: c[5], tag: c[6])
        for (i, sample) in samples.enumerated().dropFirst(7) {
            let predicted = EmojiSequence(Character(sample))?.advance(a)
            guard predicted == c[i] else { return .failure(Refusal(text: "\(sample) took \(c[i]) columns, the parts add up to \(predicted ?? -1)")) }
        }
        return .success(a)
    }

    /// Runs the probe on the terminal (`input`, `output`: its descriptors), before curses
    /// starts. Bytes that came and were no reply (keys typed meanwhile) are returned, to be
    /// given back to curses.
    public static func run(_ request: Request, identifying: Bool = false, input: Int32, output: Int32,
                           timeoutMs: Int = 300) -> (Finding, replies: TerminalReplies, leftover: [UInt8]) {
        guard request != .safe || identifying else { return (decide(.safe, TerminalReplies()), TerminalReplies(), []) }
        var saved = termios()
        guard tcgetattr(input, &saved) == 0 else { return (decide(request, TerminalReplies()), TerminalReplies(), []) }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON)
        raw.c_iflag &= ~tcflag_t(ICRNL)  // an Enter typed meanwhile stays CR (Enter), not LF (Ctrl-J)
        _ = tcsetattr(input, TCSANOW, &raw)
        defer { _ = tcsetattr(input, TCSANOW, &saved) }
        let bytes = query(measuring: request == .auto, identifying: identifying)
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBufferPointer { Foundation.write(output, $0.baseAddress! + written, $0.count - written) }
            if n <= 0 { break }
            written += n
        }
        var replies = TerminalReplies()
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(timeoutMs) * 1_000_000
        var buffer = [UInt8](repeating: 0, count: 512)
        while !replies.fenced {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { break }
            var p = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, Int32((deadline - now) / 1_000_000) + 1) > 0 else { continue }
            let n = buffer.withUnsafeMutableBufferPointer { Foundation.read(input, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            replies.feed(buffer[0..<n])
        }
        replies.finish()
        return (decide(request, replies), replies, replies.leftover)
    }
}

/// The terminal's answers to the probe, read from the bytes that came back, in whatever
/// chunks they came: DECRQM's for mode 2027 (`CSI ? 2027 ; Ps $ y`), cursor position reports
/// (`CSI row ; col R`), and DA1's (`CSI ? … c`), the fence. Anything else (keys typed
/// meanwhile, an arrow's `CSI A`) is kept as it came, to be given back; a reply cut off at the
/// end, a sequence too long or with numbers too big to be a reply is dropped. Pure: fed bytes.
public struct TerminalReplies: Equatable, Sendable {
    /// DECRQM's answer for mode 2027: 0 not recognised, 1 set, 2 reset, 3 always set, 4 always reset.
    public private(set) var clusteringMode: Int?
    /// The column each cursor report gave, less one: the advance of the sample before it.
    public private(set) var columns: [Int] = []
    /// DA1 answered: every earlier reply has come.
    public private(set) var fenced = false
    /// XTVERSION's answer (`DCS > | TEXT ST`): the terminal's name and version, as plain text.
    public private(set) var version: String?
    /// kitty answered OSC 99's query (`OSC 99 ; i=synchat : p=? ; … ST`).
    public private(set) var answersOSC99 = false
    /// Inside a string reply (OSC or DCS) since its `ESC ]` or `ESC P`: its bytes so far.
    private var string: [UInt8]?
    /// The string's last byte was ESC (the first half of ST).
    private var stringEscape = false
    static let longestString = 512
    /// Bytes that were no reply.
    public private(set) var leftover: [UInt8] = []
    /// A sequence begun and not ended yet (ESC, then maybe `[` and the rest).
    private var pending: [UInt8] = []
    static let longest = 32

    public init() {}

    public mutating func feed<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        for b in bytes {
            if string != nil {
                take(stringByte: b)
                continue
            }
            if pending == [0x1B], b == UInt8(ascii: "]") || b == UInt8(ascii: "P") {
                string = [b]
                pending = []
                continue
            }
            if pending.isEmpty {
                if b == 0x1B { pending = [b] } else { leftover.append(b) }
                continue
            }
            if pending.count == 1 {
                // ESC and not `[`: a key with Alt, or a lone Escape: given back as it came.
                if b == UInt8(ascii: "[") { pending.append(b) } else {
                    leftover += pending
                    pending = []
                    if b == 0x1B { pending = [b] } else { leftover.append(b) }
                }
                continue
            }
            pending.append(b)
            switch b {
            case 0x20...0x3F:
                // Parameters and intermediates go on; too many is no reply (dropped).
                if pending.count > Self.longest { pending = [] }
            case 0x40...0x7E:
                finished(pending)
                pending = []
            default:
                // A control inside a sequence: no reply; the byte starts over.
                pending.removeLast()
                pending = []
                if b == 0x1B { pending = [b] } else { leftover.append(b) }
            }
        }
    }

    /// The end of the wait: a sequence still open is dropped (a reply cut off would be garbage
    /// keys), a lone ESC is given back.
    public mutating func finish() {
        if pending == [0x1B] { leftover.append(0x1B) }
        pending = []
        string = nil
    }

    /// One byte of a string reply: it ends at ST (`ESC \`) or BEL; one too long is read to
    /// its end and dropped (never given back as keys).
    private mutating func take(stringByte b: UInt8) {
        guard var s = string else { return }
        // Only the replies asked for begin so (`OSC 99 ;`, `DCS > |`): anything else is a key
        // with Alt typed meanwhile (Alt-P, Alt-]), given back as it came.
        let expected = Array((s[0] == UInt8(ascii: "]") ? "]99;" : "P>|").utf8)
        if s.count < expected.count {
            if b == expected[s.count] {
                s.append(b)
                string = s
                return
            }
            string = nil
            leftover += [0x1B] + s
            feed([b])
            return
        }
        defer { stringEscape = b == 0x1B }
        if b == 0x07 || (b == UInt8(ascii: "\\") && stringEscape) {
            if b != 0x07, s.last == 0x1B { s.removeLast() }
            string = nil
            if s.count <= Self.longestString { finishedString(s) }
            return
        }
        if s.count <= Self.longestString + 1 { s.append(b) }
        string = s
    }

    private mutating func finishedString(_ s: [UInt8]) {
        let text = String(decoding: s.dropFirst(), as: UTF8.self)
        if s.first == UInt8(ascii: "P"), text.hasPrefix(">|") {
            version = UntrustedText.plain(String(text.dropFirst(2)), limit: 80)
        } else if s.first == UInt8(ascii: "]"), text.hasPrefix("99;"), text.contains("i=\(TerminalProbe.osc99QueryId)"), text.contains("p=?") {
            answersOSC99 = true
        }
    }

    private mutating func finished(_ seq: [UInt8]) {
        let final = seq.last!
        let body = seq[2..<(seq.count - 1)]  // between `ESC [` and the final byte
        let text = String(decoding: body, as: UTF8.self)
        // A sequence shaped as a reply is one, read or (malformed: a number too big, a
        // parameter too many) dropped, never given back as keys.
        switch final {
        case UInt8(ascii: "R") where text.contains(";"):
            let parts = text.split(separator: ";", omittingEmptySubsequences: false)
            if parts.count == 2, let col = Self.number(parts[1]), Self.number(parts[0]) != nil, col >= 1 { columns.append(col - 1) }
            return
        case UInt8(ascii: "y") where text.hasPrefix("?") && text.hasSuffix("$"):
            let parts = text.dropFirst().dropLast().split(separator: ";", omittingEmptySubsequences: false)
            if parts.count == 2, Self.number(parts[0]) == 2027, let ps = Self.number(parts[1]), ps <= 4 { clusteringMode = ps }
            return  // another mode's answer: nothing for us
        case UInt8(ascii: "c") where text.hasPrefix("?"):
            if text.dropFirst().allSatisfy({ $0.isNumber || $0 == ";" }) { fenced = true }
            return
        default:
            // Not a reply: a key's sequence (an arrow, a function key), given back.
            leftover += seq
        }
    }

    /// A decimal number of at most six digits.
    static func number(_ s: Substring) -> Int? {
        guard !s.isEmpty, s.count <= 6, s.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(s)
    }
}

/// What was typed while the probe waited, as curses would have read it: a key's escape
/// sequence (an arrow, Home, PgUp) is that key, not Esc, `[` and a letter; the rest is text.
public enum TypedAhead: Equatable, Sendable {
    case key(Key)
    case scalar(Unicode.Scalar)

    /// The sequences of the keys a person may type in the probe's 300 ms.
    static let sequences: [(bytes: [UInt8], key: Key)] = ([
        ("\u{1B}[A", .up), ("\u{1B}[B", .down), ("\u{1B}[C", .right), ("\u{1B}[D", .left),
        ("\u{1B}OA", .up), ("\u{1B}OB", .down), ("\u{1B}OC", .right), ("\u{1B}OD", .left),
        ("\u{1B}[H", .home), ("\u{1B}[F", .end), ("\u{1B}OH", .home), ("\u{1B}OF", .end),
        ("\u{1B}[1~", .home), ("\u{1B}[4~", .end), ("\u{1B}[7~", .home), ("\u{1B}[8~", .end),
        ("\u{1B}[5~", .pageUp), ("\u{1B}[6~", .pageDown), ("\u{1B}[3~", .delete), ("\u{1B}[Z", .tab),
    ] as [(String, Key)]).map { (Array($0.0.utf8), $0.1) }

    /// `bytes` (the probe's leftover) as keys and text, in order.
    public static func read(_ bytes: [UInt8]) -> [TypedAhead] {
        var out: [TypedAhead] = []
        var i = 0
        var text: [UInt8] = []
        func flush() {
            for scalar in String(decoding: text, as: UTF8.self).unicodeScalars { out.append(.scalar(scalar)) }
            text = []
        }
        while i < bytes.count {
            if bytes[i] == 0x1B, let match = sequences.first(where: { bytes[i...].starts(with: $0.bytes) }) {
                flush()
                out.append(.key(match.key))
                i += match.bytes.count
                continue
            }
            text.append(bytes[i])
            i += 1
        }
        flush()
        return out
    }
}
