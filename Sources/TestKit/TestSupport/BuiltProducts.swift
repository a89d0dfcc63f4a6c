import Foundation

/// Where the package and its built products are: the end-to-end tests and the crash harness
/// run the real binaries (`swift build` first).
public enum BuiltProducts {
    /// The package's root folder: the nearest folder above this file that holds Package.swift.
    public static let packageRoot: URL = {
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path), folder.path != "/" {
            folder.deleteLastPathComponent()
        }
        return folder
    }()

    /// The `synchat` binary under test: `$SYNCHAT_BIN`, or the debug build.
    public static var synchat: String {
        ProcessInfo.processInfo.environment["SYNCHAT_BIN"] ?? packageRoot.appendingPathComponent(".build/debug/synchat").path
    }

    /// The debug build of `synchat-bench`.
    public static var bench: String { packageRoot.appendingPathComponent(".build/debug/synchat-bench").path }
}
