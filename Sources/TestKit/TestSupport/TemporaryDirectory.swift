import Foundation

/// A new, empty directory of a test's own, `$TMPDIR/synchat-LABEL-XXXXXX` (mkdtemp: unique
/// across the tests running at once and across processes). The test removes it:
///
///     let dir = try TemporaryDirectory("store")
///     defer { dir.remove() }
///     let store = try SQLiteChatStorage.open(path: dir.file("p.sqlite"))
public struct TemporaryDirectory: Sendable {
    public let url: URL

    public init(_ label: String) throws {
        var template = Array((NSTemporaryDirectory() + "synchat-\(label)-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        url = URL(fileURLWithPath: String(cString: made), isDirectory: true)
    }

    public var path: String { url.path }

    /// The path of `name` in this directory (`name` may hold subfolders; nothing is created).
    public func file(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Removes the directory and everything in it.
    public func remove() { try? FileManager.default.removeItem(at: url) }
}
