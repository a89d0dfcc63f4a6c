import Foundation

/// A JSON document as the wire readers (SyncEngine's `Wire.swift`, the server, the client) see it: what Foundation's
/// `JSONSerialization` gives, without its bridging.
///
/// Why a reader of our own in front of Foundation's: in a simulated day, decoding the
/// indexer's replies and the pushes through `JSONSerialization` was 39 % of the instructions,
/// most of them spent turning its parse into `[String: Any]` (a box for every value, a
/// second tree of objects), and that churn is what grows faster than the run on a long one.
/// `WireValue.parse` reads the plain documents the wire carries in one pass. It
/// is deliberately narrow: anything outside a strict, unambiguous subset of JSON (a number
/// with an exponent or more than 15 digits, an escaped surrogate, bytes that are not UTF-8,
/// a key given twice, nesting past 64, a byte-order mark, a top level that is not an object
/// or array) is handed to `JSONSerialization`, so that what is accepted, and the
/// value read, stay Foundation's. A test holds the two readers equal over public corpora and
/// broken documents.
public enum WireValue: Equatable, Sendable {
    case null
    case bool(Bool)
    /// A number, as `NSNumber.doubleValue` gives it.
    case number(Double)
    case string(String)
    case array([WireValue])
    case object([String: WireValue])

    /// The document, or nil when it is not JSON (Foundation's verdict).
    public static func parse(_ data: Data) -> WireValue? {
        if let fast = fastParse(data) { return fast }
        guard let any = try? JSONSerialization.jsonObject(with: data, options: []) else { return nil }
        return WireValue(foundation: any)
    }

    /// The strict subset read in one pass; nil for anything else (see the overview).
    static func fastParse(_ data: Data) -> WireValue? {
        data.withUnsafeBytes { raw -> WireValue? in
            var reader = FastReader(bytes: raw.bindMemory(to: UInt8.self))
            reader.skipSpace()
            guard let first = reader.peek(), first == UInt8(ascii: "{") || first == UInt8(ascii: "[") else { return nil }
            guard let value = reader.value(depth: 0) else { return nil }
            reader.skipSpace()
            return reader.atEnd ? value : nil
        }
    }

    /// What `JSONSerialization` parsed, in these terms.
    public init?(foundation any: Any) {
        switch any {
        case is NSNull: self = .null
        case let s as String: self = .string(s)
        case let n as NSNumber:
            self = String(cString: n.objCType) == "c" ? .bool(n.boolValue) : .number(n.doubleValue)
        case let a as [Any]:
            var items: [WireValue] = []
            items.reserveCapacity(a.count)
            for element in a {
                guard let v = WireValue(foundation: element) else { return nil }
                items.append(v)
            }
            self = .array(items)
        case let d as [String: Any]:
            var fields: [String: WireValue] = [:]
            for (k, element) in d {
                guard let v = WireValue(foundation: element) else { return nil }
                fields[k] = v
            }
            self = .object(fields)
        default: return nil
        }
    }

    /// The value's text with sorted keys: the same value gives the same text.
    public var canonical: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let n): return n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : "\(n)"
        case .string(let s): return s.debugDescription
        case .array(let a): return "[" + a.map(\.canonical).joined(separator: ",") + "]"
        case .object(let d):
            return "{" + d.keys.sorted().map { $0.debugDescription + ":" + d[$0]!.canonical }.joined(separator: ",") + "}"
        }
    }
}

/// One pass over the bytes; every method returns nil where the strict subset ends.
private struct FastReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var i = 0
    static let maxDepth = 64

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    var atEnd: Bool { i == bytes.count }
    func peek() -> UInt8? { i < bytes.count ? bytes[i] : nil }

    mutating func skipSpace() {
        while i < bytes.count {
            switch bytes[i] {
            case 0x20, 0x09, 0x0A, 0x0D: i += 1
            default: return
            }
        }
    }

    mutating func value(depth: Int) -> WireValue? {
        guard depth < Self.maxDepth, let c = peek() else { return nil }
        switch c {
        case UInt8(ascii: "{"): return object(depth: depth)
        case UInt8(ascii: "["): return array(depth: depth)
        case UInt8(ascii: "\""): return string().map(WireValue.string)
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        default: return number()
        }
    }

    mutating func literal(_ word: StaticString, _ v: WireValue) -> WireValue? {
        let n = word.utf8CodeUnitCount
        guard bytes.count - i >= n else { return nil }
        for k in 0..<n where bytes[i + k] != word.utf8Start[k] { return nil }
        i += n
        return v
    }

    mutating func object(depth: Int) -> WireValue? {
        i += 1  // {
        var fields: [String: WireValue] = [:]
        skipSpace()
        if peek() == UInt8(ascii: "}") { i += 1; return .object(fields) }
        while true {
            skipSpace()
            guard peek() == UInt8(ascii: "\""), let key = string() else { return nil }
            skipSpace()
            guard peek() == UInt8(ascii: ":") else { return nil }
            i += 1
            skipSpace()
            guard let v = value(depth: depth + 1) else { return nil }
            guard fields.updateValue(v, forKey: key) == nil else { return nil }  // a key twice: Foundation decides
            skipSpace()
            switch peek() {
            case UInt8(ascii: ","): i += 1
            case UInt8(ascii: "}"): i += 1; return .object(fields)
            default: return nil
            }
        }
    }

    mutating func array(depth: Int) -> WireValue? {
        i += 1  // [
        var items: [WireValue] = []
        skipSpace()
        if peek() == UInt8(ascii: "]") { i += 1; return .array(items) }
        while true {
            skipSpace()
            guard let v = value(depth: depth + 1) else { return nil }
            items.append(v)
            skipSpace()
            switch peek() {
            case UInt8(ascii: ","): i += 1
            case UInt8(ascii: "]"): i += 1; return .array(items)
            default: return nil
            }
        }
    }

    /// A string whose bytes are valid UTF-8, with escapes other than surrogates.
    mutating func string() -> String? {
        i += 1  // "
        let start = i
        var plain = true  // no escapes, all ASCII: the bytes are the string
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<i])
                i += 1
                return plain ? String(decoding: slice, as: UTF8.self) : Self.text(slice)
            }
            if b == UInt8(ascii: "\\") { return escapedString(from: start) }
            if b < 0x20 { return nil }
            if b >= 0x80 { plain = false }
            i += 1
        }
        return nil
    }

    /// The rest of a string that has escapes, from its first byte.
    mutating func escapedString(from start: Int) -> String? {
        var out: [UInt8] = Array(bytes[start..<i])
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                i += 1
                return out.withUnsafeBufferPointer { Self.text($0) }
            }
            if b < 0x20 { return nil }
            guard b == UInt8(ascii: "\\") else { out.append(b); i += 1; continue }
            i += 1
            guard let e = peek() else { return nil }
            i += 1
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                guard bytes.count - i >= 4 else { return nil }
                var code: UInt32 = 0
                for _ in 0..<4 {
                    let h = bytes[i]
                    let digit: UInt32
                    switch h {
                    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(h - UInt8(ascii: "0"))
                    case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(h - UInt8(ascii: "a") + 10)
                    case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(h - UInt8(ascii: "A") + 10)
                    default: return nil
                    }
                    code = code << 4 | digit
                    i += 1
                }
                guard let scalar = Unicode.Scalar(code) else { return nil }  // a surrogate: Foundation decides
                out.append(contentsOf: String(scalar).utf8)
            default: return nil
            }
        }
        return nil
    }

    /// Bytes that are UTF-8 and hold no U+FEFF: Foundation drops that one from a string
    /// (its byte-order mark), so a string holding it is Foundation's to read.
    static func text(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard let s = String(validating: bytes, as: UTF8.self), !s.unicodeScalars.contains("\u{FEFF}") else { return nil }
        return s
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?`, at most 15 digits: exact in a Double, read the same by
    /// any correct reader. Exponents and longer numbers are Foundation's.
    mutating func number() -> WireValue? {
        let start = i
        if peek() == UInt8(ascii: "-") { i += 1 }
        var digits = 0
        func isDigit(_ b: UInt8?) -> Bool { b.map { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } ?? false }
        guard isDigit(peek()) else { return nil }
        if peek() == UInt8(ascii: "0") {
            i += 1
            digits += 1
            if isDigit(peek()) { return nil }
        } else {
            while isDigit(peek()) { i += 1; digits += 1 }
        }
        if peek() == UInt8(ascii: ".") {
            i += 1
            guard isDigit(peek()) else { return nil }
            while isDigit(peek()) { i += 1; digits += 1 }
        }
        if let e = peek(), e == UInt8(ascii: "e") || e == UInt8(ascii: "E") { return nil }
        guard digits <= 15 else { return nil }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        // Foundation reads `-0` as the integer 0 (and `-0.0` as the double -0.0).
        return Double(text).map { .number(text == "-0" ? 0 : $0) }
    }
}

extension WireValue {
    /// A member of an object (nil for anything else, or no such member).
    public subscript(key: String) -> WireValue? {
        if case .object(let fields) = self { return fields[key] }
        return nil
    }

    public var string: String? { if case .string(let s) = self { return s } else { return nil } }
    public var bool: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    public var double: Double? { if case .number(let n) = self { return n } else { return nil } }
    /// A number that is a whole number in range, as an integer.
    public var int64: Int64? {
        guard case .number(let n) = self, n.rounded() == n, abs(n) < 9.0e18 else { return nil }
        return Int64(n)
    }
    public var array: [WireValue]? { if case .array(let a) = self { return a } else { return nil } }
    public var object: [String: WireValue]? { if case .object(let o) = self { return o } else { return nil } }
}

extension WireValue {
    /// The same document for the writer: whole numbers as integers, others as JSON's
    /// shortest decimal.
    public var json: JSONValue {
        switch self {
        case .null: return .null
        case .bool(let b): return .raw(b ? "true" : "false")
        case .number(let n): return int64.map { .int($0) } ?? .raw("\(n)")
        case .string(let s): return .string(s)
        case .array(let a): return .array(a.map(\.json))
        case .object(let o): return .object(o.sorted { $0.key < $1.key }.map { ($0.key, $0.value.json) })
        }
    }
}
