import Foundation
import Testing

/// Every command line the docs tell a person to type, typed as written: each line of the
/// ```sh blocks of README.md and docs/*.md that starts with `synchat`, `swift run synchat` or
/// `swift run -c release synchat` (never `synchat-bench`, but for its `soak` line, a check run
/// when `SYNCHAT_DOC_COMMANDS=all`), and each `curl` line, run by a shell
/// in a folder of its own with `synchat` on its PATH (the built binary) — the arguments as the
/// docs have them, pipes and redirections included. Held to what it promises by kind: a TUI
/// line reaches its status bar in tmux; a `simulate` line exits 0; a `server` line prints its
/// listening line; `bot`, `fault` and `curl` lines work against the server the lines before
/// them started. The lines of one file run in order, in one folder, as a reader goes down it
/// (the TLS recipe's `openssl` and `printf` lines too: the next lines need their files).
///
/// What the test fills in, and nothing else: the port (`7420`: each `server` line listens on a
/// free one, `--port 0`, and the lines after it use that), `CODE` (the server's invite),
/// `TOKEN` and `$TOKEN` (its admin token; `SYNCHAT_ADMIN_TOKEN` holds it too), and a home of
/// its own (`HOME`, `XDG_DATA_HOME`, `XDG_CONFIG_HOME`). The full fault-matrix lines (82 worlds
/// × 3 policies, each about 10 s on 2 cores in a debug build) run when
/// `SYNCHAT_DOC_COMMANDS=all`, as `.ci/run` sets it; `swift test` runs every other line.
@Suite("The docs' command lines, typed as written", .serialized, .ownThread)
struct DocCommandsTests {
    struct Line: CustomStringConvertible {
        var file: String
        var number: Int
        var text: String
        var description: String { "\(file):\(number): \(text)" }
    }

    enum Kind: Equatable {
        case tui, simulate, server, bot, fault, curl, helper
        /// `synchat-bench soak`: the one bench line the docs promise as a check (docs/reliability.md).
        case soak
    }

    static let root = BuiltProducts.packageRoot

    static var docs: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)) ?? []
        return ["README.md"] + names.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    /// The command lines of `file`'s ```sh blocks, continuation lines joined, comments cut.
    static func lines(of file: String) throws -> [Line] {
        let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
        var out: [Line] = []
        var inBlock = false
        var pending: (number: Int, text: String)?
        for (i, raw) in text.components(separatedBy: "\n").enumerated() {
            if raw.hasPrefix("```") {
                inBlock = !inBlock && raw == "```sh"
                pending = nil
                continue
            }
            guard inBlock else { continue }
            var line = raw
            let start = pending?.number ?? i + 1
            if let p = pending { line = p.text + " " + raw.trimmingCharacters(in: .whitespaces) }
            if line.hasSuffix("\\") {
                pending = (start, String(line.dropLast()).trimmingCharacters(in: .whitespaces))
                continue
            }
            pending = nil
            let command = withoutComment(line).trimmingCharacters(in: .whitespaces)
            if !command.isEmpty { out.append(Line(file: file, number: start, text: command)) }
        }
        return out
    }

    /// A line without its `# comment` (a `#` after a space, outside quotes).
    static func withoutComment(_ line: String) -> String {
        var quote: Character?
        var previous: Character = " "
        var out = ""
        for c in line {
            if let q = quote {
                if c == q { quote = nil }
            } else if c == "'" || c == "\"" {
                quote = c
            } else if c == "#", previous == " " || previous == "\t" {
                break
            }
            out.append(c)
            previous = c
        }
        return out
    }

    /// What a line is, and the line a shell runs (`swift run [-c release] synchat` is the
    /// built `synchat`); nil for a line this test does not run (another tool's).
    static func classify(_ text: String) -> (kind: Kind, command: String)? {
        var command = text
        for prefix in ["swift run -c release synchat-bench soak ", "synchat-bench soak "] where command.hasPrefix(prefix) {
            return (.soak, "synchat-bench soak " + command.dropFirst(prefix.count))
        }
        for prefix in ["swift run -c release synchat ", "swift run synchat "] where command.hasPrefix(prefix) {
            command = "synchat " + command.dropFirst(prefix.count)
        }
        if command == "swift run synchat" || command == "swift run -c release synchat" { command = "synchat" }
        let words = command.split(separator: " ").map(String.init)
        guard let first = words.first else { return nil }
        switch first {
        case "synchat":
            switch words.dropFirst().first {
            case "simulate": return (.simulate, command)
            case "server": return (.server, command)
            case "bot": return (.bot, command)
            case "fault": return (.fault, command)
            default: return (.tui, command)
            }
        case "curl": return (.curl, command)
        case "openssl", "printf": return (.helper, command)
        default: return nil
        }
    }

    static var runsAll: Bool { ProcessInfo.processInfo.environment["SYNCHAT_DOC_COMMANDS"] == "all" }

    /// The full grid of the fault matrix: left to `.ci/run` unless asked for.
    static func isFullMatrix(_ command: String) -> Bool {
        command.contains("--matrix") && !command.contains("--matrix-cell")
    }

    @Test("every README and docs line that runs synchat or curl is found, and none is another tool's in disguise")
    func found() throws {
        var counts: [Kind: Int] = [:]
        for file in Self.docs {
            for line in try Self.lines(of: file) {
                guard let (kind, command) = Self.classify(line.text) else { continue }
                counts[kind, default: 0] += 1
                #expect(!command.hasPrefix("synchat-bench") || kind == .soak, "\(line)")
            }
        }
        // What the docs hold today; a count going down means a line stopped being found.
        #expect(counts[.tui, default: 0] >= 9, "\(counts)")
        #expect(counts[.simulate, default: 0] >= 12, "\(counts)")
        #expect(counts[.server, default: 0] >= 5, "\(counts)")
        #expect(counts[.bot, default: 0] >= 3 && counts[.fault, default: 0] >= 4 && counts[.curl, default: 0] >= 4, "\(counts)")
        #expect(Self.classify("swift run -c release synchat-bench fuzz") == nil)
        #expect(Self.classify("swift run -c release synchat-bench soak --minutes 3 --bots 10 --check")?.kind == .soak)
        #expect(counts[.soak, default: 0] >= 1, "docs/reliability.md's soak line: \(counts)")
        #expect(Self.classify("swift run synchat -- --ephemeral")?.command == "synchat -- --ephemeral")
        #expect(Self.withoutComment("synchat --user ada   # a comment") == "synchat --user ada   ")
        #expect(Self.withoutComment("grep -v '^# ' session.log") == "grep -v '^# ' session.log")
    }

    static var filesWithCommands: [String] {
        docs.filter { file in ((try? lines(of: file)) ?? []).contains { classify($0.text).map { $0.kind != .helper } ?? false } }
    }

    @Test("each file's command lines, in its order, do what they promise", arguments: filesWithCommands)
    func typed(_ file: String) throws {
        try TmuxSession.requireReady()
        let reader = try Reader(file: file)
        defer { reader.close() }
        var ran = 0, leftToCI = 0
        for line in try Self.lines(of: file) {
            guard let (kind, command) = Self.classify(line.text) else { continue }
            if Self.isFullMatrix(command) || kind == .soak, !Self.runsAll {
                leftToCI += 1
                continue
            }
            try reader.run(kind, command, line)
            ran += 1
        }
        #expect(ran > 0 || leftToCI > 0, "\(file): no line ran")
        for failure in reader.failures { Issue.record(Comment(rawValue: failure)) }
    }

    /// A reader going down one file: its folder, the server its lines started, the TUIs open.
    final class Reader {
        let dir: TemporaryDirectory
        let bin: String
        var server: (pid: pid_t, port: Int, token: String, invite: String?)?
        var background: [pid_t] = []
        var screens: [(user: String, session: TmuxSession)] = []
        var failures: [String] = []
        var counter = 0

        init(file: String) throws {
            dir = try TemporaryDirectory("doc-" + file.replacingOccurrences(of: "/", with: "-"))
            bin = dir.file("bin")
            try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: bin + "/synchat", withDestinationPath: TmuxSession.binary)
            let bench = URL(fileURLWithPath: TmuxSession.binary).deletingLastPathComponent().appendingPathComponent("synchat-bench").path
            try FileManager.default.createSymbolicLink(atPath: bin + "/synchat-bench", withDestinationPath: bench)
            try FileManager.default.createDirectory(atPath: dir.file("work"), withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: dir.file("work/Scenarios"),
                                                       withDestinationPath: DocCommandsTests.root.appendingPathComponent("Scenarios").path)
        }

        var work: String { dir.file("work") }

        var environment: [String: String] {
            var env = ["PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
                       "HOME": dir.file("home"), "XDG_DATA_HOME": dir.file("data"), "XDG_CONFIG_HOME": dir.file("config")]
            if let server {
                env["SYNCHAT_ADMIN_TOKEN"] = server.token
                env["TOKEN"] = server.token
            }
            return env
        }

        /// The line as the test types it: the port, the invite and the token filled in.
        func filled(_ command: String, _ kind: Kind) -> String {
            var c = command
            if kind == .server {
                c = c.replacingOccurrences(of: "--port 7420", with: "--port 0")
                if c.hasSuffix("&") { c = String(c.dropLast()).trimmingCharacters(in: .whitespaces) }
                if !c.contains("--port") { c += " --port 0" }
                return c
            }
            if let server {
                c = c.replacingOccurrences(of: ":7420", with: ":\(server.port)")
                c = c.replacingOccurrences(of: "$TOKEN", with: server.token)
                c = c.replacingOccurrences(of: #"\bTOKEN\b"#, with: server.token, options: .regularExpression)
                if let invite = server.invite { c = c.replacingOccurrences(of: #"\bCODE\b"#, with: invite, options: .regularExpression) }
            }
            return c
        }

        func shell(_ command: String, seconds: Int = 300) throws -> (status: Int32, out: String, err: String) {
            let env = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            return try TmuxSession.spawn(["timeout", "\(seconds)", "env", "-C", work] + env + ["bash", "-c", command],
                                         captureOutput: true, captureErrors: true)
        }

        func startBackground(_ command: String) throws -> (pid: pid_t, output: String) {
            counter += 1
            let output = dir.file("background-\(counter).out")
            let env = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            let pid = try ChildProcess.start(["env", "-C", work] + env + ["bash", "-c", "exec " + command], output: output)
            background.append(pid)
            return (pid, output)
        }

        func read(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

        func waitFor(seconds: Double, _ condition: () -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if condition() { return true }
                usleep(100_000)
            }
            return condition()
        }

        func fail(_ line: Line, _ why: String) { failures.append("\(line)\n  \(why)") }

        func run(_ kind: Kind, _ raw: String, _ line: Line) throws {
            let command = filled(raw, kind)
            let backgrounded = command.hasSuffix("&")
            let foreground = backgrounded ? String(command.dropLast()).trimmingCharacters(in: .whitespaces) : command
            switch kind {
            case .helper:
                let r = try shell(command)
                if r.status != 0 { fail(line, "exit \(r.status): \(r.err.suffix(400))") }
            case .soak:
                // Its own server, bots and TUIs; `--check` makes a finding its exit status.
                let r = try shell(foreground, seconds: 1_800)
                if r.status != 0 { fail(line, "exit \(r.status): \(r.out.suffix(1200)) \(r.err.suffix(400))") }
            case .simulate, .fault, .curl:
                let r = try shell(foreground)
                if r.status != 0 { return fail(line, "exit \(r.status): \(r.err.suffix(600))") }
                if kind == .curl, r.out.isEmpty || r.out.contains("\"error\"") { fail(line, "curl answered: \(r.out.prefix(300))") }
                if kind == .fault, r.out.isEmpty && r.err.isEmpty { fail(line, "synchat fault said nothing") }
            case .server:
                if let old = server { kill(old.pid, SIGTERM); _ = ChildProcess.wait(old.pid); server = nil }
                let (pid, output) = try startBackground(command)
                guard waitFor(seconds: 30, { read(output).contains("listening on") }),
                      let match = read(output).firstMatch(of: /listening on https?:\/\/127\.0\.0\.1:(\d+) \(admin token ([0-9a-zA-Z]+);/),
                      let port = Int(match.1) else {
                    return fail(line, "no listening line within 30 s: \(read(output).suffix(400))")
                }
                let invite = read(output).firstMatch(of: /; invite ([^;)\s]+)/).map { String($0.1) }
                server = (pid, port, String(match.2), invite)
            case .bot:
                if backgrounded {
                    let (pid, output) = try startBackground(foreground)
                    // Joined and chatting: still running a few seconds on (a child that ended
                    // is a zombie until waited for, which `kill(pid, 0)` would call alive).
                    usleep(3_000_000)
                    var status: Int32 = 0
                    if waitpid(pid, &status, WNOHANG) == pid {
                        background.removeAll { $0 == pid }
                        fail(line, "the bot ended: \(read(output).suffix(400))")
                    }
                } else {
                    let r = try shell(foreground, seconds: 120)
                    if r.status != 0 { return fail(line, "exit \(r.status): \(r.err.suffix(600))") }
                    if let report = foreground.firstMatch(of: /--report (\S+)/).map({ String($0.1) }) {
                        if !read(work + "/" + report).contains("{") { fail(line, "no report in \(report)") }
                    }
                }
            case .tui:
                // The same user again (or the same profile): the reader quit the first one.
                let user = foreground.firstMatch(of: /--user (\S+)/).map { String($0.1) } ?? ""
                for (i, earlier) in screens.enumerated().reversed() where earlier.user == user {
                    try earlier.session.keys("q")
                    if !earlier.session.poll(seconds: 20, until: { $0.contains("EXIT=") }) { fail(line, "the one before did not quit") }
                    earlier.session.close()
                    screens.remove(at: i)
                }
                let t = try TmuxSession(width: 140, height: 40, command: foreground, environment: environment, directory: work)
                screens.append((user, t))
                guard t.poll(seconds: 60, until: { $0.contains(" foreground │") || $0.contains(" background │") }) else {
                    return fail(line, "no status bar within 60 s; screen:\n\(t.screen())")
                }
                if let record = foreground.firstMatch(of: /--record (\S+) --log (\S+)/) {
                    try playRecording(t, log: work + "/" + String(record.2), line)
                }
            }
        }

        /// What docs/testing-by-hand.md tells the reader to do once recording: use the app,
        /// break push (`p`) until the log shows what the next lines look for, then `q`.
        func playRecording(_ t: TmuxSession, log: String, _ line: Line) throws {
            for _ in 0..<4 { try t.keys("+"); usleep(200_000) }  // x10 → x300: minutes of the world in seconds
            guard waitFor(seconds: 90, { read(log).contains("→ reliable") }) else { return fail(line, "push never became reliable") }
            try t.keys("p")
            if !waitFor(seconds: 120, { read(log).contains("reliable → unreliable") }) { fail(line, "push never fell after p") }
            try t.keys("q")
            if !t.poll(seconds: 30, until: { $0.contains("EXIT=0") }) { fail(line, "did not quit: \(t.screen())") }
        }

        func close() {
            for t in screens { t.session.close() }
            for pid in background { kill(pid, SIGTERM) }
            for pid in background { _ = ChildProcess.wait(pid) }
            dir.remove()
        }
    }
}
