import ArgumentParser
import Foundation
import Logging

/// swift-log to a file (`--log FILE`): the TUI never prints over the curses screen.
struct FileLogHandler: LogHandler {
    let handle: FileHandle
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// The events come at level info, written as they are: the very lines `simulate --events`
    /// prints, so that a file and a replay compare line for line. Other levels say theirs.
    func log(event: LogEvent) {
        let line = event.level == .info ? "\(event.message)" : "\(event.level) \(event.message)"
        handle.write(Data((line + "\n").utf8))
    }

    /// Opens (creating or appending to) the file, or explains why not in one line.
    static func open(_ path: String) throws -> FileHandle {
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw ValidationError("--log: cannot create \(path)")
            }
        }
        guard let h = FileHandle(forWritingAtPath: path) else { throw ValidationError("--log: cannot write \(path)") }
        h.seekToEndOfFile()
        return h
    }
}
