// Where a user's files live, by the XDG Base Directory specification. The one place that
// reads XDG_DATA_HOME, XDG_CONFIG_HOME and HOME: profiles (ChatStore) and themes
// (TerminalUI) both ask here, so the two cannot disagree. Pure: the environment is passed
// in, so every case is a unit test.

/// A base directory of the XDG Base Directory specification.
public enum XDGBaseDirectory: Sendable {
    /// `$XDG_DATA_HOME`, by default `$HOME/.local/share`: where profiles live.
    case data
    /// `$XDG_CONFIG_HOME`, by default `$HOME/.config`: where user themes live.
    case config

    /// The variable that names this directory.
    public var variable: String {
        switch self {
        case .data: "XDG_DATA_HOME"
        case .config: "XDG_CONFIG_HOME"
        }
    }

    /// The default, relative to `$HOME`.
    var underHome: String {
        switch self {
        case .data: ".local/share"
        case .config: ".config"
        }
    }

    /// There is no usable directory; the description says why, naming each variable read,
    /// e.g. `XDG_DATA_HOME is not set and HOME is empty`.
    public struct Unusable: Error, Equatable, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// The directory, without a trailing slash. The variable when it holds an absolute path;
    /// unset, empty or relative, it is ignored (the spec: "If an implementation encounters a
    /// relative path in any of these variables it should consider the path invalid and
    /// ignore it") and the default under `$HOME` is used. A `HOME` that is unset, empty or
    /// relative gives no directory rather than a guess: `/root`, the filesystem root or the
    /// current directory would put a profile where nobody looks for it.
    public func path(in environment: [String: String]) throws(Unusable) -> String {
        func absolute(_ name: String) -> (path: String?, why: String) {
            guard let value = environment[name] else { return (nil, "\(name) is not set") }
            guard !value.isEmpty else { return (nil, "\(name) is empty") }
            guard value.hasPrefix("/") else {
                return (nil, "\(name) (\(UntrustedText.visible(value))) is not an absolute path")
            }
            var path = Substring(value)
            while path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
            return (String(path), "")
        }
        let own = absolute(variable)
        if let path = own.path { return path }
        let home = absolute("HOME")
        guard let homePath = home.path else { throw Unusable(description: "\(own.why) and \(home.why)") }
        return (homePath == "/" ? "" : homePath) + "/" + underHome
    }
}
