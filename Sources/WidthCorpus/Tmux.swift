import Foundation

/// A private tmux server (its own socket) with one session: start a command in a pane of a
/// given size, read the pane with `capture-pane`, type keys. Every wait polls against a
/// deadline; nothing sleeps blindly.
public final class Tmux {
    public let socket: String
    public let session: String

    public init(tag: String) {
        socket = "synchat-\(tag)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        session = tag
    }

    public static var available: Bool {
        ["/usr/bin/tmux", "/usr/local/bin/tmux"].contains { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts `argv` in a `width`×`height` pane with TERM=xterm-256color and a UTF-8 locale.
    public func start(width: Int, height: Int, argv: [String]) throws {
        try run(["new-session", "-d", "-s", session, "-x", "\(width)", "-y", "\(height)",
                 "env", "TERM=xterm-256color", "LANG=C.UTF-8"] + argv)
    }

    public func capture() -> String { (try? run(["capture-pane", "-p", "-t", session], output: true)) ?? "" }

    public func keys(_ keys: String...) { _ = try? run(["send-keys", "-t", session] + keys) }

    /// Ends the session; the server exits with it (a bare kill-server can leave tmux 3.3a running).
    public func close() {
        _ = try? run(["kill-session", "-t", session])
        _ = try? run(["kill-server"])
    }

    deinit { close() }

    /// Polls `condition` until it holds or `seconds` pass.
    public static func poll(seconds: Double, every micros: UInt32 = 20_000, until condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(micros)
        }
        return condition()
    }

    @discardableResult
    public func run(_ args: [String], output: Bool = false) throws -> String {
        try Self.spawn(["tmux", "-L", socket] + args, captureOutput: output)
    }

    /// posix_spawn and waitpid (Foundation's Process can miss a child's exit in a test
    /// runner); output through a file, and only when asked for, since a command that starts
    /// the tmux server would keep a pipe open forever.
    @discardableResult
    public static func spawn(_ argv: [String], captureOutput: Bool = false) throws -> String {
        let path = NSTemporaryDirectory() + "synchat-tmux-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).out"
        defer { unlink(path) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, captureOutput ? path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var cargs = argv.map { strdup($0) } + [nil]
        defer { for a in cargs { free(a) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, argv[0], &actions, nil, &cargs, environ)
        guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EIO) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        guard captureOutput, let data = FileManager.default.contents(atPath: path) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }
}
