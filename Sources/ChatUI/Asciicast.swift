/// An asciicast v2 file (asciinema's format: a JSON header line, then one JSON array a line,
/// `[seconds, "o", text]` for what the terminal received and `[seconds, "r", "WxH"]` for a
/// resize), written as it goes: `synchat --cast FILE` feeds it the bytes the terminal got,
/// `synchat simulate --cast FILE` the frames of a scenario. The one writer of both.
///
/// Output comes as bytes: a UTF-8 sequence cut between two writes is held until it is whole,
/// so each event's text is valid UTF-8, and a byte that is no UTF-8 becomes U+FFFD.
public struct Asciicast: Sendable {
    /// What the header says.
    public struct Header: Sendable, Equatable {
        public var width: Int
        public var height: Int
        /// Seconds since 1970, when the recording began (none for a cast made from a scenario,
        /// so that the same scenario gives the same file).
        public var timestamp: Int?
        public var title: String?
        /// Captured environment: `TERM`, and `SYNCHAT_EMOJI`, the width mode the cast was
        /// recorded with (a player must draw emoji sequences the same way to line up).
        public var env: [(String, String)]

        public init(width: Int, height: Int, timestamp: Int? = nil, title: String? = nil, env: [(String, String)] = []) {
            self.width = width
            self.height = height
            self.timestamp = timestamp
            self.title = title
            self.env = env
        }

        public static func == (a: Header, b: Header) -> Bool {
            a.width == b.width && a.height == b.height && a.timestamp == b.timestamp && a.title == b.title
                && a.env.map(\.0) == b.env.map(\.0) && a.env.map(\.1) == b.env.map(\.1)
        }

        /// The header line (no newline).
        public var line: String {
            var fields = ["\"version\": 2", "\"width\": \(width)", "\"height\": \(height)"]
            if let timestamp { fields.append("\"timestamp\": \(timestamp)") }
            if let title { fields.append("\"title\": " + Asciicast.quoted(title)) }
            if !env.isEmpty { fields.append("\"env\": {" + env.map { Asciicast.quoted($0.0) + ": " + Asciicast.quoted($0.1) }.joined(separator: ", ") + "}") }
            return "{" + fields.joined(separator: ", ") + "}"
        }
    }

    /// The lines written so far are handed to `sink` as they are made (each ends in `\n`).
    private let sink: @Sendable (String) -> Void
    private var held: [UInt8] = []

    public init(_ header: Header, sink: @escaping @Sendable (String) -> Void) {
        self.sink = sink
        sink(header.line + "\n")
    }

    /// `bytes` the terminal received at `seconds` since the start.
    public mutating func output(_ bytes: some Sequence<UInt8>, at seconds: Double) {
        held += bytes
        let whole = Self.wholeUTF8Prefix(held)
        guard whole > 0 else { return }
        let text = String(decoding: held[..<whole], as: UTF8.self)
        held.removeFirst(whole)
        sink("[" + Self.time(seconds) + ", \"o\", " + Self.quoted(text) + "]\n")
    }

    /// The terminal became `width` × `height` at `seconds`.
    public mutating func resize(width: Int, height: Int, at seconds: Double) {
        sink("[" + Self.time(seconds) + ", \"r\", \"\(width)x\(height)\"]\n")
    }

    /// What is still held (a sequence never completed) goes out as U+FFFD.
    public mutating func finish(at seconds: Double) {
        guard !held.isEmpty else { return }
        let text = String(decoding: held, as: UTF8.self)
        held = []
        sink("[" + Self.time(seconds) + ", \"o\", " + Self.quoted(text) + "]\n")
    }

    /// Seconds with microseconds, as asciinema writes them.
    static func time(_ seconds: Double) -> String {
        let micros = Int64((max(0, seconds) * 1_000_000).rounded())
        let frac = String(micros % 1_000_000)
        return "\(micros / 1_000_000)." + String(repeating: "0", count: 6 - frac.count) + frac
    }

    /// How many bytes from the start of `bytes` end on a whole UTF-8 sequence (an invalid byte
    /// counts as whole: it is decoded as U+FFFD); a sequence cut off at the end is left out.
    static func wholeUTF8Prefix(_ bytes: [UInt8]) -> Int {
        var end = bytes.count
        // At most the last three bytes can be a sequence not finished yet.
        var i = bytes.count - 1
        while i >= 0, i >= bytes.count - 3 {
            let b = bytes[i]
            if b & 0xC0 == 0x80 { i -= 1; continue }  // a continuation byte
            let need = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1
            if b >= 0xC0, b < 0xF8, bytes.count - i < need { end = i }
            break
        }
        return end
    }

    /// A JSON string: quote, backslash and controls escaped; everything else as it is.
    public static func quoted(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 || u.value == 0x7F || (0x80...0x9F).contains(u.value) || u.value == 0x2028 || u.value == 0x2029 {
                    let hex = String(u.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out + "\""
    }
}
