import Foundation
import GRDB

/// Untrusted text (message bodies, display names) as SQLite keeps it: a BLOB of its UTF-8
/// bytes. GRDB binds a Swift string as C text, which ends at the first NUL, and reads TEXT
/// back the same way, so `"before\0after"` would come back as `"before"`; a BLOB
/// keeps every byte. The columns stay declared TEXT (a BLOB is stored as it is in them), so
/// the schema and its version do not change: rows that older versions wrote as TEXT are
/// read as TEXT, and they hold no NUL (it was cut before they were written).
package enum StoredText {
    package static func value(_ text: String) -> DatabaseValue {
        // An empty BLOB would be bound from a null pointer, which SQLite takes for NULL.
        text.isEmpty ? text.databaseValue : Data(text.utf8).databaseValue
    }

    package static func read(_ row: Row, _ column: String) -> String {
        switch (row[column] as DatabaseValue).storage {
        case .blob(let bytes): return String(decoding: bytes, as: UTF8.self)
        case .string(let text): return text
        default: return ""
        }
    }
}
