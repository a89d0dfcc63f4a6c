import Foundation

/// A minimal JSON writer for the simulated servers' replies. The simulated world encodes
/// thousands of payloads per virtual hour; Foundation's JSONSerialization bridges every
/// value through NSDictionary and dominated the simulation's run time. Keys are written in
/// the order given, so output is byte-stable.
public enum JSONValue: Sendable {
    case string(String)
    case int(Int64)
    case null
    case array([JSONValue])
    case object([(String, JSONValue)])
    /// JSON text written as it is: a value read from a peer that must go back unchanged (a
    /// JSON-RPC id). The writer does not check it; whoever makes one does.
    case raw(String)

    public var data: Data {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(into: &out)
        return Data(out)
    }

    /// Bytes, not a String: appending to a String one scalar at a time would be about
    /// three quarters of a simulation's time.
    func write(into out: inout [UInt8]) {
        switch self {
        case .string(let s): Self.writeString(s, into: &out)
        case .int(let v): out.append(contentsOf: String(v).utf8)
        case .null: out.append(contentsOf: "null".utf8)
        case .raw(let text): out.append(contentsOf: text.utf8)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                item.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                value.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// RFC 8259 string escaping: quote, backslash and every control character. Runs of bytes
    /// that need none are copied whole (UTF-8 above ASCII is copied as it is).
    static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            var start = 0
            for (i, byte) in bytes.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                out.append(contentsOf: bytes[start..<i])
                start = i + 1
                switch byte {
                case UInt8(ascii: "\""): out.append(contentsOf: "\\\"".utf8)
                case UInt8(ascii: "\\"): out.append(contentsOf: "\\\\".utf8)
                case UInt8(ascii: "\n"): out.append(contentsOf: "\\n".utf8)
                case UInt8(ascii: "\r"): out.append(contentsOf: "\\r".utf8)
                case UInt8(ascii: "\t"): out.append(contentsOf: "\\t".utf8)
                default:
                    let hex = String(byte, radix: 16)
                    out.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8)
                }
            }
            out.append(contentsOf: bytes[start...])
        }
        out.append(UInt8(ascii: "\""))
    }
}
