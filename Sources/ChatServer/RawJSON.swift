/// The raw text of a top-level member of a JSON object, as the peer wrote it (a JSON-RPC id
/// must go back exactly: no number read into a double, no `true` read as 1). The document
/// was already accepted by `JSONSerialization`; this only finds where the value lies.
enum RawJSON {
    /// The value of `key` in the object `bytes`, or nil when it has no such member.
    static func member(_ key: String, of bytes: [UInt8]) -> String? {
        var i = 0
        func ws() { while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 } }
        /// Skips a string starting at `i` (at its quote); returns its raw contents.
        func string() -> [UInt8]? {
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { return nil }
            let start = i + 1
            i += 1
            while i < bytes.count, bytes[i] != UInt8(ascii: "\"") { i += bytes[i] == UInt8(ascii: "\\") ? 2 : 1 }
            guard i < bytes.count else { return nil }
            defer { i += 1 }
            return Array(bytes[start..<i])
        }
        /// Skips any value starting at `i`.
        func value() -> Bool {
            guard i < bytes.count else { return false }
            switch bytes[i] {
            case UInt8(ascii: "\""): return string() != nil
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                while i < bytes.count {
                    switch bytes[i] {
                    case UInt8(ascii: "\""): guard string() != nil else { return false }; continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 { i += 1; return true }
                    default: break
                    }
                    i += 1
                }
                return false
            default:
                while i < bytes.count, ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
                return true
            }
        }
        ws()
        guard i < bytes.count, bytes[i] == UInt8(ascii: "{") else { return nil }
        i += 1
        while true {
            ws()
            guard let name = string() else { return nil }
            ws()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return nil }
            i += 1
            ws()
            let start = i
            guard value() else { return nil }
            // A key is compared after JSON unescaping only in the plain case; an escaped "id"
            // is not an id here (JSONSerialization's reading gave it no special role either).
            if name == Array(key.utf8) { return String(decoding: bytes[start..<i], as: UTF8.self) }
            ws()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ",") else { return nil }
            i += 1
        }
    }

    /// A string, a number, true, false or null: what an id may be.
    static func isScalar(_ raw: String) -> Bool {
        guard let c = raw.first else { return false }
        return c != "{" && c != "["
    }
}
