import Foundation
import Spawn

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

    /// The process of the pane (the command given to `start`: `env` runs it in its place).
    public func panePid() -> pid_t? {
        (try? run(["display-message", "-p", "-t", session, "#{pane_pid}"], output: true))
            .flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// Starts `argv` under a shell that waits for it, and returns its pid once it runs. tmux
    /// continues a pane's own process when it stops, so a program to be stopped for a capture
    /// (`quiescentCapture`) must be the shell's child, not the pane's.
    public func startStoppable(width: Int, height: Int, argv: [String]) throws -> pid_t {
        try start(width: width, height: height, argv: ["sh", "-c", "\"$@\"; echo EXIT=$?", "sh"] + argv)
        var child: pid_t?
        _ = Self.poll(seconds: 10) {
            child = panePid().flatMap { shell in
                (try? Self.spawn(["pgrep", "-P", "\(shell)"], captureOutput: true)).flatMap { pid_t($0.split(separator: "\n").first ?? "") }
            }
            return child != nil
        }
        guard let child else { throw Corpus.FormatError(description: "\(argv[0]) did not start in tmux") }
        return child
    }

    /// What `quiescentCapture` got.
    public enum Capture: Equatable {
        /// A whole frame.
        case screen(String)
        /// The program ran on without once waiting for input while it was tried (a busy
        /// stretch, a loaded machine): no frame this time; try again.
        case busy
        /// The program has gone.
        case gone
    }

    /// A screen that is a whole frame, never one torn between two writes: the program is
    /// stopped (SIGSTOP) at a moment it waits for input in poll (its last frame written out
    /// whole), tmux is read until it has taken in all of it, then the program goes on
    /// (SIGCONT). Tried for `seconds`; `.busy` when no such moment came in that time, `.gone`
    /// when the program has exited.
    public func quiescentCapture(pid: pid_t, seconds: Double = 2) -> Capture {
        let deadline = Date().addingTimeInterval(seconds)
        repeat {
            guard kill(pid, SIGSTOP) == 0 else { return .gone }
            defer { kill(pid, SIGCONT) }
            guard Self.poll(seconds: 1, every: 200, until: { Self.state(pid) == "T" }) else {
                if Self.state(pid) == nil || Self.state(pid) == "Z" { return .gone }
                continue
            }
            // Waiting for input: poll(7) with a timeout (a poll with none is a check inside a
            // refresh), select(23), pselect6(270), ppoll(271), or a wait restarted after our last stop (219).
            guard let (number, args) = Self.syscall(pid), [7, 23, 219, 270, 271].contains(number), number != 7 || args.count > 2 && args[2] != "0x0" else {
                kill(pid, SIGCONT)
                usleep(1_000)
                continue
            }
            var last = capture()
            while true {
                let next = capture()
                if next == last { return .screen(next) }
                last = next
            }
        } while Date() < deadline
        return kill(pid, 0) == 0 && Self.state(pid) != "Z" ? .busy : .gone
    }

    static func state(_ pid: pid_t) -> Character? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].dropFirst().first
    }

    /// The system call a stopped process is in, and its arguments (hex, as the kernel gives them).
    static func syscall(_ pid: pid_t) -> (Int, [Substring])? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/syscall", encoding: .utf8) else { return nil }
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard let number = fields.first.flatMap({ Int($0) }) else { return nil }
        return (number, Array(fields.dropFirst()))
    }

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

    /// Runs a program to its end (`ChildProcess.run`: output through a file, never a pipe
    /// the tmux server would keep open); what it printed, when asked for.
    @discardableResult
    public static func spawn(_ argv: [String], captureOutput: Bool = false) throws -> String {
        try ChildProcess.run(argv, captureOutput: captureOutput).out
    }
}
