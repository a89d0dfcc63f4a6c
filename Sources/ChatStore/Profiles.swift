import Foundation
import SyncCore

/// Why a profile cannot be opened. The app prints the description as one line after
/// `synchat: ` and exits with code 1.
public protocol ProfileError: Error, CustomStringConvertible {}

extension StoreError: ProfileError {}

/// Where profiles live: `$XDG_DATA_HOME/synchat/NAME.sqlite`, default `~/.local/share/synchat/`,
/// by the XDG rules of `XDGBaseDirectory`.
public enum Profiles {
    /// Neither `XDG_DATA_HOME` nor `HOME` gives an absolute directory.
    public struct NoDataDirectory: ProfileError, Equatable {
        public var why: XDGBaseDirectory.Unusable
        public var description: String {
            "no data directory for profiles: \(why); set HOME, or XDG_DATA_HOME to an absolute path, or run with --ephemeral"
        }
    }

    public static func directory(environment: [String: String] = ProcessInfo.processInfo.environment) throws(NoDataDirectory) -> String {
        do {
            return try XDGBaseDirectory.data.path(in: environment) + "/synchat"
        } catch {
            throw NoDataDirectory(why: error)
        }
    }

    public static func path(for name: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(NoDataDirectory) -> String {
        try directory(environment: environment) + "/\(name).sqlite"
    }
}
