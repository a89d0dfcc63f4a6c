import Foundation

extension ScenarioParser {
    /// Reads and parses a scenario file; an unreadable file is a `ScenarioError` naming it.
    public static func load(path: String) throws -> Scenario {
        guard let data = FileManager.default.contents(atPath: path) else {
            let exists = FileManager.default.fileExists(atPath: path)
            throw ScenarioError(file: path, line: 0, message: exists ? "cannot read the file" : "no such file")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ScenarioError(file: path, line: 0, message: "not UTF-8 text")
        }
        return try parse(text, file: path)
    }
}
