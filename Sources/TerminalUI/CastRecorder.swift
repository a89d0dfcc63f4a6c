import CNCurses
import ChatUI
import Foundation
import Spawn

/// `synchat --cast FILE`: the session recorded as an asciicast v2 file — every byte the
/// terminal received, with its timing — as `asciinema rec` records a program. The chat runs as
/// a child on a pseudo-terminal of the real terminal's size (the same command line without
/// `--cast`); this process relays the keys to it and its output to the terminal, writing each
/// chunk of output to the cast (`Asciicast`) as it passes, and each resize. So the cast holds
/// exactly what the terminal got, from the width probe to the screen restored at the end.
///
/// A cast is played by terminals nobody can ask, so the child is given `--emoji safe` unless
/// `--emoji` or `SYNCHAT_EMOJI` says otherwise; the child tells what it used (on the
/// descriptor `SYNCHAT_CAST_REPORT_FD` names) and the header says it.
public enum CastRecorder {
    /// The environment variable naming the descriptor on which the child says its width mode.
    public static let reportVariable = "SYNCHAT_CAST_REPORT_FD"

    /// The child's side: tells the recorder what `finding` is (nothing when not recorded).
    static func tellRecorder(_ finding: TerminalProbe.Finding, request: TerminalProbe.Request) {
        guard let text = ProcessInfo.processInfo.environment[reportVariable], let fd = Int32(text), fd > 2 else { return }
        let line = modeWord(finding.widths, request: request) + "\t" + finding.widths.description + "\n"
        _ = line.utf8CString.withUnsafeBufferPointer { Foundation.write(fd, $0.baseAddress, $0.count - 1) }
        close(fd)
    }

    /// The header's `SYNCHAT_EMOJI`: the setting that draws the cast as it was drawn.
    static func modeWord(_ w: EmojiWidths, request: TerminalProbe.Request) -> String {
        switch w {
        case .safe: return "safe"
        case .clusters: return "full"
        case .measured(let a):
            return "measured flag=\(a.flag) modifier=\(a.modifier) joined=\(a.joined ? 1 : 0) vs16=\(a.presentation) keycap=\(a.keycap) tag=\(a.tag)"
        }
    }

    /// Why the recording cannot start (one line), as the app itself says it.
    public struct Refusal: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs `arguments` (the chat's, without `--cast`) as a child under a pseudo-terminal and
    /// records it into `path`. Returns the child's exit status (128 + the signal that ended it).
    public static func record(to path: String, arguments: [String]) throws -> Int32 {
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else {
            throw Refusal(description: "not a terminal: the TUI needs an interactive terminal (try synchat simulate --cast)")
        }
        guard FileManager.default.createFile(atPath: path, contents: nil), let file = FileHandle(forWritingAtPath: path) else {
            throw Refusal(description: "--cast: cannot write \(path)")
        }
        var size = winsize()
        _ = ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size)
        var saved = termios()
        tcgetattr(STDIN_FILENO, &saved)
        var path = [CChar](repeating: 0, count: 256)
        let master = synchat_open_pty(&path, path.count)
        guard master >= 0 else { throw Refusal(description: "--cast: no pseudo-terminal to run the chat on (\(String(cString: strerror(errno))))") }
        let name = String(decoding: path.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        _ = ioctl(master, UInt(TIOCSWINSZ), &size)
        // The child's terminal starts as this one is (its modes), before curses changes them.
        let slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)
        if slave >= 0 { tcsetattr(slave, TCSANOW, &saved) }
        var report: [Int32] = [0, 0]
        _ = synchat_pipe(&report, 0)
        let child = try spawn(name: name, arguments: arguments, reportFD: report[1])
        if slave >= 0 { close(slave) }
        close(report[1])

        // This terminal passes every key through untouched (the child's line discipline does
        // the rest), and is put back as it was at the end.
        var raw = saved
        cfmakeraw(&raw)
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        defer { tcsetattr(STDIN_FILENO, TCSANOW, &saved) }
        let signals = SignalPipe.open([SIGWINCH, SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGTSTP])
        // The modes the child set (the alternate screen, the mouse…), read from what it writes:
        // put back at the end whatever the child did, and around a stop.
        var modes = TerminalModes()
        defer { writeAll(STDOUT_FILENO, modes.resetBytes) }

        let started = DispatchTime.now().uptimeNanoseconds
        func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 }
        let sink: @Sendable (String) -> Void = { file.write(Data($0.utf8)) }
        // The header waits for the child's width mode (it comes right after the probe); the
        // output meanwhile is kept in order.
        var cast: Asciicast?
        var early: [(Double, [UInt8])] = []
        var reportText = ""
        var reportOpen = true
        func startCast(mode: String?) {
            guard cast == nil else { return }
            let fields = mode?.split(separator: "\t", maxSplits: 1).map(String.init) ?? []
            let word = fields.first ?? "safe"
            var header = Asciicast.Header(width: Int(size.ws_col), height: Int(size.ws_row), timestamp: Int(Date().timeIntervalSince1970),
                                          title: "synchat" + (fields.count > 1 ? ": \(fields[1])" : ""))  // one pair of brackets at most
            header.env = [("TERM", ProcessInfo.processInfo.environment["TERM"] ?? ""), ("SYNCHAT_EMOJI", word)]
            var c = Asciicast(header, sink: sink)
            for (t, bytes) in early { c.output(bytes, at: t) }
            early = []
            cast = c
        }

        var fds = [pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0), pollfd(fd: master, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: signals.read, events: Int16(POLLIN), revents: 0), pollfd(fd: report[0], events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var status: Int32 = 0
        relay: while true {
            // The header is written at once if the child says nothing within two seconds.
            if cast == nil, !reportOpen || now() > 2 { startCast(mode: reportText.isEmpty ? nil : reportText) }
            let n = poll(&fds, nfds_t(fds.count), 200)
            if n < 0, errno != EINTR { break }
            if fds[1].revents != 0 {
                let got = buffer.withUnsafeMutableBufferPointer { Foundation.read(master, $0.baseAddress, $0.count) }
                if got <= 0 { break relay }  // the child's side is closed: it ended
                let bytes = Array(buffer[0..<got])
                modes.read(bytes)
                writeAll(STDOUT_FILENO, bytes)
                if cast != nil { cast!.output(bytes, at: now()) } else { early.append((now(), bytes)) }
            }
            if fds[0].revents != 0 {
                let got = buffer.withUnsafeMutableBufferPointer { Foundation.read(STDIN_FILENO, $0.baseAddress, $0.count) }
                if got > 0 { writeAll(master, Array(buffer[0..<got])) } else { fds[0].fd = -1 }  // the terminal went away
            }
            if fds[3].revents != 0 {
                let got = buffer.withUnsafeMutableBufferPointer { Foundation.read(report[0], $0.baseAddress, $0.count) }
                if got > 0 { reportText += String(decoding: buffer[0..<got], as: UTF8.self) }
                if got <= 0 || reportText.hasSuffix("\n") {
                    reportOpen = false
                    fds[3].fd = -1
                    startCast(mode: reportText.isEmpty ? nil : String(reportText.dropLast()))
                }
            }
            if fds[2].revents != 0 {
                for sig in signals.drain() {
                    if sig == SIGTSTP {
                        // Stopped as a shell stops a job (kill -TSTP): the chat is held, the
                        // terminal given back as the shell had it; at `fg`, taken again and
                        // the chat drawn whole at the terminal's size then.
                        kill(child, SIGSTOP)
                        writeAll(STDOUT_FILENO, modes.resetBytes)
                        tcsetattr(STDIN_FILENO, TCSANOW, &saved)
                        kill(getpid(), SIGSTOP)
                        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
                        writeAll(STDOUT_FILENO, modes.restoreBytes)
                        var resumed = winsize()
                        _ = ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &resumed)
                        if resumed.ws_col != size.ws_col || resumed.ws_row != size.ws_row {
                            size = resumed
                            _ = ioctl(master, UInt(TIOCSWINSZ), &size)
                            if cast == nil { startCast(mode: nil) }
                            cast!.resize(width: Int(size.ws_col), height: Int(size.ws_row), at: now())
                        }
                        kill(child, SIGCONT)
                        kill(child, SIGWINCH)  // a full redraw: the screen it had is gone
                    } else if sig == SIGWINCH {
                        _ = ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size)
                        _ = ioctl(master, UInt(TIOCSWINSZ), &size)  // the child gets its own SIGWINCH
                        if cast == nil { startCast(mode: nil) }
                        cast!.resize(width: Int(size.ws_col), height: Int(size.ws_row), at: now())
                    } else {
                        kill(child, sig)  // the chat ends as it would, restoring its screen; relayed to the end
                    }
                }
            }
            var s: Int32 = 0
            if waitpid(child, &s, WNOHANG) == child {
                status = s
                // What it wrote last is still in the pseudo-terminal.
                while true {
                    var p = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
                    guard poll(&p, 1, 50) > 0 else { break }
                    let got = buffer.withUnsafeMutableBufferPointer { Foundation.read(master, $0.baseAddress, $0.count) }
                    if got <= 0 { break }
                    modes.read(buffer[0..<got])
                    writeAll(STDOUT_FILENO, Array(buffer[0..<got]))
                    if cast == nil { startCast(mode: nil) }
                    cast!.output(Array(buffer[0..<got]), at: now())
                }
                break relay
            }
        }
        if status == 0 { waitpid(child, &status, 0) }
        if cast == nil { startCast(mode: reportText.isEmpty ? nil : reportText.trimmingCharacters(in: .newlines)) }
        cast!.finish(at: now())
        close(master)
        try? file.close()
        // WIFEXITED / WTERMSIG, spelled out (glibc's are macros).
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    /// Starts this program with `arguments` on the pseudo-terminal `name`, in a session of
    /// its own whose controlling terminal it is; `reportFD` becomes its descriptor 3.
    static func spawn(name: String, arguments: [String], reportFD: Int32) throws -> pid_t {
        var environment = ProcessInfo.processInfo.environment
        environment[reportVariable] = "3"
        do {
            return try ChildProcess.spawn(["/proc/self/exe"] + arguments, streams: .terminal(name), environment: environment,
                                          passing: [(from: reportFD, to: 3)])
        } catch let error as POSIXError {
            throw Refusal(description: "--cast: cannot start the chat (\(String(cString: strerror(error.code.rawValue))))")
        }
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBufferPointer { Foundation.write(fd, $0.baseAddress! + off, $0.count - off) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 { return }
            off += n
        }
    }

    /// `arguments` without `--cast FILE` (or `--cast=FILE`), and with `--emoji safe` unless
    /// the width mode was asked for (`--emoji`, or `SYNCHAT_EMOJI` in `environment`), and
    /// `--notify off` unless notifications were (`--notify`, `SYNCHAT_NOTIFY`): a cast played
    /// later must not pop its notifications on its viewer's desktop.
    public static func childArguments(_ arguments: [String], environment: [String: String]) -> [String] {
        var out: [String] = []
        var i = 0
        var asked = environment["SYNCHAT_EMOJI"].map { !$0.isEmpty } ?? false
        var notifyAsked = environment["SYNCHAT_NOTIFY"].map { !$0.isEmpty } ?? false
        while i < arguments.count {
            let a = arguments[i]
            if a == "--cast" { i += 2; continue }
            if a.hasPrefix("--cast=") { i += 1; continue }
            if a == "--emoji" || a.hasPrefix("--emoji=") { asked = true }
            if a == "--notify" || a.hasPrefix("--notify=") { notifyAsked = true }
            out.append(a)
            i += 1
        }
        return out + (asked ? [] : ["--emoji", "safe"]) + (notifyAsked ? [] : ["--notify", "off"])
    }
}

/// Signals turned into bytes on a pipe (the self-pipe trick), so the relay's `poll` wakes for
/// them: a resize, or a request to end that the chat must hear.
struct SignalPipe {
    let read: Int32
    nonisolated(unsafe) static var writeEnd: Int32 = -1

    static func open(_ signals: [Int32]) -> SignalPipe {
        var fds: [Int32] = [0, 0]
        _ = synchat_pipe(&fds, 1)
        writeEnd = fds[1]
        for s in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { sig in
                var byte = UInt8(truncatingIfNeeded: sig)
                _ = Foundation.write(SignalPipe.writeEnd, &byte, 1)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(s, &action, nil)
        }
        return SignalPipe(read: fds[0])
    }

    /// The signals that came since the last time.
    func drain() -> [Int32] {
        var out: [Int32] = []
        var byte: UInt8 = 0
        while Foundation.read(read, &byte, 1) == 1 { out.append(Int32(byte)) }
        return out
    }
}
