import Foundation

/// A minimal JSON writer for the simulated servers' replies. The simulated world encodes
/// thousands of payloads per virtual hour; Foundation's JSONSerialization bridges every
/// value through NSDictionary and dominated the simulation's run time. Keys are written in
/// the order given, so output is byte-stable.
enum JSONValue {
    case string(String)
    case int(Int64)
    case null
    case array([JSONValue])
    case object([(String, JSONValue)])

    var data: Data {
        var out = ""
        write(into: &out)
        return Data(out.utf8)
    }

    func write(into out: inout String) {
        switch self {
        case .string(let s): Self.writeString(s, into: &out)
        case .int(let v): out += String(v)
        case .null: out += "null"
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                item.write(into: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out += "," }
                Self.writeString(key, into: &out)
                out += ":"
                value.write(into: &out)
            }
            out += "}"
        }
    }

    /// RFC 8259 string escaping: quote, backslash and every control character.
    static func writeString(_ s: String, into out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
