import Foundation
import Testing
// Every file of this target sees TestSupport's helpers (`ChildProcess`, `TemporaryDirectory`, `.timingSensitive`, …).
@_exported import TestSupport

/// The real binary in a private tmux server (docs/testing.md, `Tests/EndToEndTests`): `send-keys` to type,
/// `capture-pane` to read, and a deadline when waiting for the screen — never a blind sleep.
///
/// A suite that uses it is `@Suite("…", .serialized, .timingSensitive)`: its tests one at a
/// time, each on a thread of its own, and beside one other process suite at most, so that
/// deadlines and timings are not skewed by a crowd (TestSupport's `.timingSensitive`).
final class TmuxSession {
    let socket: String
    let name = "e2e"

    static var packageRoot: URL { BuiltProducts.packageRoot }

    /// The `synchat` under test: `$SYNCHAT_BIN`, or the debug build.
    static var binary: String { BuiltProducts.synchat }

    /// What every end-to-end suite needs first: tmux, and the built binary.
    static func requireReady() throws {
        try #require(available, "tmux is not installed (apt-get install tmux)")
        try #require(FileManager.default.isExecutableFile(atPath: binary), "build synchat first: \(binary)")
    }

    static var available: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") || FileManager.default.isExecutableFile(atPath: "/usr/local/bin/tmux")
    }

    /// Starts a shell in a `width`×`height` pane and runs synchat in it.
    /// `directory`: the shell's (and so synchat's) current directory; the test's by default.
    convenience init(width: Int = 100, height: Int = 30, arguments: String, environment: [String: String] = [:], directory: String? = nil,
                     title: String? = nil) throws {
        try self.init(width: width, height: height, command: "\(Self.binary) \(arguments)", environment: environment, directory: directory, title: title)
    }

    /// Starts a shell in a `width`×`height` pane and types `command` in it, as a person would
    /// (a line of the docs, with `synchat` on the shell's PATH).
    /// `title`: the pane's title before the command starts (a test of what the app leaves of it).
    init(width: Int = 100, height: Int = 30, command: String, environment: [String: String] = [:], directory: String? = nil, title: String? = nil) throws {
        socket = "synchat-e2e-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let env = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let start = directory.map { ["-c", $0] } ?? []
        try tmux(["new-session", "-d", "-s", name, "-x", "\(width)", "-y", "\(height)"] + start + ["env", "PS1=$ ", "TERM=xterm-256color"] + env + ["sh"])
        if let title { try tmux(["select-pane", "-t", name, "-T", title]) }
        try tmux(["send-keys", "-t", name, "-l", "\(command); echo \"EXIT=$?\""])
        try tmux(["send-keys", "-t", name, "Enter"])
    }

    deinit { close() }

    /// Runs a tmux command on this session's private server.
    @discardableResult
    func tmux(_ args: [String], output: Bool = false) throws -> String {
        try Self.run(["tmux", "-L", socket] + args, output: output)
    }

    /// Runs a program and returns its stdout.
    @discardableResult
    static func run(_ argv: [String], output: Bool = false) throws -> String {
        try spawn(argv, captureOutput: output).out
    }

    /// Runs a program to its end (`ChildProcess.run`): its exit status, and its output and
    /// errors when asked for.
    static func spawn(_ argv: [String], captureOutput: Bool = false, captureErrors: Bool = false) throws -> (status: Int32, out: String, err: String) {
        let exit = try ChildProcess.run(argv, captureOutput: captureOutput, captureErrors: captureErrors)
        return (exit.status, exit.out, exit.err)
    }

    /// The process running in the pane (synchat, the child of the pane's shell).
    func appPid() throws -> pid_t? {
        let shell = try tmux(["display-message", "-p", "-t", name, "#{pane_pid}"], output: true)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let children = try Self.run(["pgrep", "-P", shell], output: true)
        return children.split(separator: "\n").first.flatMap { pid_t($0) }
    }

    /// Ends the session; the private server exits with its last session. (`kill-server`
    /// answers 0 but leaves the server running on tmux 3.3a.)
    func close() {
        _ = try? tmux(["kill-session", "-t", name])
        _ = try? tmux(["kill-server"])
    }

    func screen() -> String { (try? tmux(["capture-pane", "-t", name, "-p"], output: true)) ?? "" }

    func keys(_ keys: String...) throws { try tmux(["send-keys", "-t", name] + keys) }

    func type(_ text: String) throws { try tmux(["send-keys", "-t", name, "-l", text]) }

    func resize(width: Int, height: Int) throws {
        try tmux(["resize-window", "-t", name, "-x", "\(width)", "-y", "\(height)"])
    }

    /// Polls the screen until `condition` holds; false after `seconds` (records nothing).
    func poll(seconds: Double, until condition: (String) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition(screen()) { return true }
            usleep(50_000)
        }
        return false
    }

    /// Polls the screen until `condition` holds, or fails the test after `seconds`.
    @discardableResult
    func wait(_ what: String, seconds: Double = 30, sourceLocation: SourceLocation = #_sourceLocation,
              until condition: (String) -> Bool) -> String {
        let deadline = Date().addingTimeInterval(seconds)
        var last = ""
        while Date() < deadline {
            last = screen()
            if condition(last) { return last }
            usleep(100_000)
        }
        Issue.record("timed out after \(seconds)s waiting for \(what); screen:\n\(last)", sourceLocation: sourceLocation)
        return last
    }

    /// Opens each conversation of the list in turn (Enter, then Esc and ↓) until `text`
    /// shows in the message pane; false when none of the first `tries` shows it.
    func openConversations(until text: String, tries: Int = 8) throws -> Bool {
        for _ in 0..<tries {
            try keys("Enter")
            let found = poll(seconds: 1.5) { $0.contains(text) }
            try keys("Escape")
            if found { return true }
            try keys("Down")
        }
        return false
    }

    @discardableResult
    func wait(for text: String, seconds: Double = 30, sourceLocation: SourceLocation = #_sourceLocation) -> String {
        wait("\"\(text)\"", seconds: seconds, sourceLocation: sourceLocation) { $0.contains(text) }
    }
}
