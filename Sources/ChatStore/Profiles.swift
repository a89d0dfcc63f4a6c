import Foundation

/// Where profiles live: `$XDG_DATA_HOME/synchat/NAME.sqlite`, default `~/.local/share/synchat/`.
public enum Profiles {
    public static func directory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty { return xdg + "/synchat" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share/synchat"
    }

    public static func path(for name: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        directory(environment: environment) + "/\(name).sqlite"
    }
}
