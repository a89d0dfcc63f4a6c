import Foundation

/// Starts other programs: the one way synchat runs a child process — its tests, its crash
/// harness and its bench (tmux, the built `synchat`, `/bin/sh -c`, `mount`, `dd`), and the app
/// itself (`synchat --cast` runs the chat on a pseudo-terminal).
///
/// posix_spawn and waitpid, not Foundation's `Process`, which can miss a child's exit inside
/// the test runner. Not swift-subprocess either: its API is async only, every caller here is
/// synchronous, and waiting on it from synchronous code deadlocks once every thread of the
/// cooperative pool (two on a 2-core machine) is a test doing the same (docs/testing.md).
///
/// Standard input is /dev/null (or the child's terminal), and no other descriptor of the parent
/// reaches the child unless passed by name. Output goes to files, and only when asked for, never to
/// a pipe: a command that starts a daemon (the first `tmux new-session` starts the tmux
/// server) would keep a pipe's write end open, and a reader waiting for its end would wait
/// forever.
public enum ChildProcess {
    /// How a program that ran to its end ended, with what it printed when that was asked for.
    public struct Exit: Equatable, Sendable {
        /// The exit code, or 128 + the signal that ended it (as a shell says).
        public var status: Int32
        /// Standard output, or "" when it was not captured.
        public var out: String
        /// Standard error, or "" when it was not captured.
        public var err: String

        public init(status: Int32, out: String, err: String) {
            self.status = status
            self.out = out
            self.err = err
        }
    }

    /// Runs `argv` (its first element looked up on PATH) to its end and says how it ended.
    /// Output and errors are captured when asked for, and discarded otherwise. The child runs
    /// in a session of its own, with no controlling terminal: a program that opens `/dev/tty`
    /// (`asciinema cat` puts it in raw mode) would otherwise stop the whole test run
    /// (SIGTTOU) when `swift test` runs in a terminal.
    public static func run(_ argv: [String], captureOutput: Bool = false, captureErrors: Bool = false) throws -> Exit {
        let base = NSTemporaryDirectory() + "synchat-child-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let outPath = captureOutput ? base + ".out" : "/dev/null"
        let errPath = captureErrors ? base + ".err" : "/dev/null"
        defer {
            if captureOutput { unlink(outPath) }
            if captureErrors { unlink(errPath) }
        }
        let pid = try spawn(argv, streams: .files(stdout: outPath, stderr: errPath), newSession: true)
        let status = wait(pid)
        // Bytes that are not UTF-8 become U+FFFD rather than losing the whole output.
        func read(_ path: String, _ wanted: Bool) -> String {
            guard wanted, let data = FileManager.default.contents(atPath: path) else { return "" }
            return String(decoding: data, as: UTF8.self)
        }
        return Exit(status: status, out: read(outPath, captureOutput), err: read(errPath, captureErrors))
    }

    /// Starts `argv` with its output discarded and returns at once with its pid. The caller
    /// reaps it with `wait(_:)`, after a `kill` if it likes.
    public static func start(_ argv: [String]) throws -> pid_t {
        try spawn(argv, streams: .files(stdout: "/dev/null", stderr: "/dev/null"))
    }

    /// Starts `argv` with its output and errors written to the file `output` (created or
    /// truncated), and returns at once with its pid.
    public static func start(_ argv: [String], output: String) throws -> pid_t {
        try spawn(argv, streams: .files(stdout: output, stderr: output))
    }

    /// Waits for a child started by `start(_:)` to end: its exit code, or 128 + its signal.
    @discardableResult
    public static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    /// Where a child's standard descriptors go.
    public enum Streams: Sendable {
        /// Input from /dev/null; output and errors to these files (created or truncated; the
        /// same path: one file, one offset, so lines do not overwrite each other).
        case files(stdout: String, stderr: String)
        /// Input, output and errors on the terminal device at this path, opened after the new
        /// session began: it becomes the child's controlling terminal (`synchat --cast`'s
        /// chat on its pseudo-terminal).
        case terminal(String)
        /// Input and output on the parent's descriptors `input` and `output` (a pipe's ends: a
        /// program driven line by line, `tmux -C`), errors to /dev/null. The caller closes its
        /// copies of the child's ends once it is started.
        case descriptors(input: Int32, output: Int32)
    }

    /// Starts `argv` (its first element looked up on PATH unless it holds a `/`) and returns its
    /// pid at once; `wait(_:)` reaps it. The child holds its three standard descriptors, the
    /// parent's descriptors `passing` names (at the number given: `(from, to)`), and nothing
    /// more; it starts with no signal blocked and every signal at its default; in a session of
    /// its own when `newSession` (a `.terminal` child always); with `environment`, or the
    /// parent's. The one place synchat starts a program, for the product and the tests alike.
    public static func spawn(_ argv: [String], streams: Streams, newSession: Bool = false, environment: [String: String]? = nil,
                             passing: [(from: Int32, to: Int32)] = []) throws -> pid_t {
        precondition(!argv.isEmpty, "ChildProcess: no program to run")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var session = newSession
        switch streams {
        case .files(let stdout, let stderr):
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            if stderr == stdout {
                posix_spawn_file_actions_adddup2(&actions, 1, 2)
            } else {
                posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            }
        case .descriptors(let input, let output):
            posix_spawn_file_actions_adddup2(&actions, input, 0)
            posix_spawn_file_actions_adddup2(&actions, output, 1)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        case .terminal(let path):
            session = true  // opened after setsid: the terminal becomes the child's controlling terminal
            posix_spawn_file_actions_addopen(&actions, 0, path, O_RDWR, 0)
            posix_spawn_file_actions_adddup2(&actions, 0, 1)
            posix_spawn_file_actions_adddup2(&actions, 0, 2)
        }
        for d in passing { posix_spawn_file_actions_adddup2(&actions, d.from, d.to) }
        // Nothing else of the parent's. SwiftNIO opens its sockets without close-on-exec (an
        // accepted socket on Linux among them): inherited, a connection the parent closes stays
        // open in the child, and its peer never learns that it ended.
        closeInChild(from: max(3, (passing.map(\.to).max() ?? 2) + 1), &actions)
        var cargs = argv.map { strdup($0) } + [nil]
        defer { for a in cargs { free(a) } }
        let cenv = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { for e in cenv ?? [] { free(e) } }
        // The child starts with no signal blocked and every signal at its default: a test
        // runner's threads block signals (libdispatch waits in sigsuspend), posix_spawn would
        // hand that mask on, and a server child would then never die of SIGTERM.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        // glibc's POSIX_SPAWN_SETSID (2.26 and later), which Swift's Glibc module does not show.
        let setsid: Int32 = session ? 0x80 : 0
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | setsid))
        var pid: pid_t = 0
        let rc: Int32
        if var env = cenv {
            rc = posix_spawnp(&pid, argv[0], &actions, &attributes, &cargs, &env)
        } else {
            rc = posix_spawnp(&pid, argv[0], &actions, &attributes, &cargs, environ)
        }
        guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EIO) }
        return pid
    }

    /// Every descriptor from `from` up closed in the child, by glibc's
    /// `posix_spawn_file_actions_addclosefrom_np` (2.34 and later; Swift's Glibc module does not
    /// show it, so it is looked up by name). Where it is missing, nothing is added.
    public static func closeInChild(from: Int32, _ actions: inout posix_spawn_file_actions_t) {
        guard let add = addCloseFrom else { return }
        _ = add(&actions, from)
    }

    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let addCloseFrom: AddCloseFrom? =
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np").map { unsafeBitCast($0, to: AddCloseFrom.self) }
}
