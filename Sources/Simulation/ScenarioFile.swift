import Foundation
import SyncCore

extension ScenarioParser {
    /// Reads and parses a scenario file; an unreadable file is a `ScenarioError` naming it.
    /// `streaming`: see `parse(_:file:streaming:)`.
    public static func load(path: String, streaming: Bool = false) throws -> Scenario {
        if streaming { return try parse(streaming: ScenarioFileText(path: path)) }
        guard let data = FileManager.default.contents(atPath: path) else {
            let exists = FileManager.default.fileExists(atPath: path)
            throw ScenarioError(file: path, line: 0, message: exists ? "cannot read the file" : "no such file")
        }
        return try parse(data: data, file: path, streaming: streaming)
    }

    /// Parses a file's bytes: text that is not UTF-8 is an error naming the line and byte.
    public static func parse(data: Data, file: String, streaming: Bool = false) throws -> Scenario {
        guard let text = String(data: data, encoding: .utf8) else {
            let at = UntrustedText.firstInvalidUTF8([UInt8](data))
            throw ScenarioError(file: file, line: at?.line ?? 0, message: "not UTF-8 text (byte \(at?.column ?? 0) of the line)")
        }
        return try parse(text, file: file, streaming: streaming)
    }
}
