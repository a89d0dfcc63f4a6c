import Foundation
import Testing
import TestSupport

/// Runs the built binary with its output and errors captured.
func runSynchat(_ args: [String]) throws -> (status: Int32, out: String, err: String) {
    try TmuxSession.spawn([TmuxSession.binary] + args, captureOutput: true, captureErrors: true)
}

@Suite("Command line", .timingSensitive)
struct CLITests {
    init() throws {
        try #require(FileManager.default.isExecutableFile(atPath: TmuxSession.binary), "build synchat first: \(TmuxSession.binary)")
    }

    @Test("the binary's simulate --events prints the golden logs byte for byte (GoldenEventLogTests holds all of them in process)",
          arguments: [("push-outage", "seed"), ("blind-spot", "adaptive")])
    func goldenThroughTheBinary(scenario: String, policy: String) throws {
        let root = BuiltProducts.packageRoot
        let r = try runSynchat(["simulate", "--scenario", root.appendingPathComponent("Scenarios/\(scenario).scenario").path, "--policy", policy, "--events"])
        let golden = try String(contentsOf: root.appendingPathComponent("TestData/golden-events/\(scenario).\(policy).events"), encoding: .utf8)
        #expect(r.status == 0 && r.out == golden, "\(scenario) \(policy): \(r.err)")
    }

    @Test("--compare on a bad scenario path or line: one line on stderr, exit code 2")
    func badScenario() throws {
        let missing = try runSynchat(["simulate", "--scenario", "/nonexistent/x.scenario", "--compare"])
        #expect(missing.status == 2)
        #expect(missing.err == "synchat: /nonexistent/x.scenario: no such file\n")
        let file = NSTemporaryDirectory() + "bad-\(getpid()).scenario"
        try "duration 1h\nat 5m foreground\nat 6m dance\n".write(toFile: file, atomically: true, encoding: .utf8)
        defer { unlink(file) }
        let bad = try runSynchat(["simulate", "--scenario", file, "--compare"])
        #expect(bad.status == 2)
        #expect(bad.err.hasPrefix("synchat: \(file):3: unknown verb \"dance\""))
        #expect(bad.err.filter { $0 == "\n" }.count == 1)
        #expect(bad.out.isEmpty)
    }

    @Test("broken scenario files through the binary: exit 2, one line on stderr naming FILE:LINE, no byte a terminal would act on")
    func brokenScenarioFiles() throws {
        let good = Array("seed 3\nduration 30m\ncontacts 2\nat 1m background\nat 2m receive alice \"hi\"\nat 3m foreground\n".utf8)
        let breakages: [(line: Int, bytes: [UInt8])] = [
            (5, Array("at 2m receive alice \"\u{1B}]0;pwned\u{07}".utf8)),          // unterminated, with an OSC in it
            (4, Array("at 1m \u{1B}[2Jbackground".utf8)),                                // a raw CSI glued to the verb
            (5, Array("at 2m receive \u{9B}6n \"hi\"".utf8)),                           // an 8-bit CSI as a contact name
            (4, [0x61, 0x74, 0x20, 0x31, 0x6D, 0x20, 0xFF, 0xFE]),                        // not UTF-8
            (3, Array("contacts \u{202E}2".utf8)),                                        // a bidi override
            (6, Array("at 3m foreground\r\rx".utf8)),                                   // carriage returns
            (2, Array(("duration " + String(repeating: "9", count: 5000)).utf8)),       // a huge number
            (6, Array("at 1m foreground".utf8)),                                           // time going backwards
        ]
        for (n, (line, bytes)) in breakages.enumerated() {
            var lines = good.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
            lines[line - 1] = bytes
            let file = NSTemporaryDirectory() + "broken-\(getpid())-\(n).scenario"
            #expect(FileManager.default.createFile(atPath: file, contents: Data(lines.joined(separator: [0x0A]))))
            defer { unlink(file) }
            let result = try runSynchat(["simulate", "--scenario", file])
            #expect(result.status == 2, "case \(n)")
            #expect(result.err.hasPrefix("synchat: \(file):\(line): "), "case \(n): \(result.err)")
            #expect(result.err.filter { $0 == "\n" }.count == 1, "case \(n)")
            #expect(!result.err.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || (0x7F...0x9F).contains($0.value) || $0.value == 0x202E },
                    "case \(n): raw control in \(result.err.debugDescription)")
            #expect(result.out.isEmpty)
        }
    }

    @Test("simulate reads a scenario with a UTF-8 BOM and CRLF line ends as the same scenario: the same output")
    func crlfScenario() throws {
        let path = TmuxSession.packageRoot.appendingPathComponent("Scenarios/demo.scenario").path
        let lf = try String(contentsOfFile: path, encoding: .utf8)
        let copy = NSTemporaryDirectory() + "crlf-\(getpid()).scenario"
        try #require(FileManager.default.createFile(atPath: copy, contents: Data([0xEF, 0xBB, 0xBF]) + Data(lf.replacingOccurrences(of: "\n", with: "\r\n").utf8)))
        defer { unlink(copy) }
        for extra in [["--events"], ["--compare"]] {
            let original = try runSynchat(["simulate", "--scenario", path] + extra)
            let converted = try runSynchat(["simulate", "--scenario", copy] + extra)
            #expect(original.status == 0 && !original.out.isEmpty)
            #expect(converted.status == 0, "\(extra): \(converted.err)")
            #expect(converted.out == original.out, "\(extra)")
        }
    }

    @Test("no usable data directory (HOME unset or empty, XDG_DATA_HOME unset or relative): one line naming why, exit code 1, nothing written")
    func noDataDirectory() throws {
        let cwd = FileManager.default.currentDirectoryPath
        let cases: [([String], String)] = [
            (["-u", "HOME", "-u", "XDG_DATA_HOME"], "XDG_DATA_HOME is not set and HOME is not set"),
            (["-u", "XDG_DATA_HOME", "HOME="], "XDG_DATA_HOME is not set and HOME is empty"),
            (["-u", "HOME", "XDG_DATA_HOME=synchat-relative-\(getpid())"], "XDG_DATA_HOME (synchat-relative-\(getpid())) is not an absolute path and HOME is not set"),
        ]
        for (env, why) in cases {
            for profile in [[], ["--profile", "e2e-\(getpid())"]] {
                let r = try TmuxSession.spawn(["/usr/bin/env"] + env + [TmuxSession.binary] + profile, captureOutput: true, captureErrors: true)
                #expect(r.status == 1, "\(env)")
                #expect(r.err == "synchat: no data directory for profiles: \(why); set HOME, or XDG_DATA_HOME to an absolute path, or run with --ephemeral\n", "\(env)")
                #expect(r.out.isEmpty)
            }
        }
        #expect(!FileManager.default.fileExists(atPath: cwd + "/synchat-relative-\(getpid())"))
    }

    @Test("a profile error quotes the path from XDG_DATA_HOME made visible, never its raw bytes")
    func profileErrorIsVisible() throws {
        let blocker = NSTemporaryDirectory() + "blocker-\(getpid())"
        try #require(FileManager.default.createFile(atPath: blocker, contents: Data("a file".utf8)))
        defer { unlink(blocker) }
        let r = try TmuxSession.spawn(["/usr/bin/env", "XDG_DATA_HOME=\(blocker)/\u{1B}[31mred", TmuxSession.binary], captureOutput: true, captureErrors: true)
        #expect(r.status == 1)
        #expect(r.err == "synchat: \(blocker)/^[[31mred/synchat: cannot create the data directory; check its permissions, or run with --ephemeral\n")
    }

    @Test("--compare --format json: an array of one object per policy")
    func compareJSON() throws {
        let path = TmuxSession.packageRoot.appendingPathComponent("Scenarios/demo.scenario").path
        let r = try runSynchat(["simulate", "--scenario", path, "--compare", "--format", "json"])
        #expect(r.status == 0)
        let list = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [[String: Any]])
        #expect(list.map { $0["policy"] as? String } == ["naive", "seed", "adaptive"])
        let table = try runSynchat(["simulate", "--scenario", path, "--compare"])
        #expect(table.out.split(separator: "\n").first?.contains("adaptive/naive  adaptive/seed") == true)
    }

    @Test("simulate --store: memory and disk print the same measures and the same event log through the binary; a bad value is one line, exit code 2")
    func store() throws {
        let file = TmuxSession.packageRoot.appendingPathComponent("Scenarios/push-outage.scenario").path
        for args in [["--compare", "--format", "json"], ["--policy", "seed", "--events"]] {
            let memory = try runSynchat(["simulate", "--scenario", file, "--store", "memory"] + args)
            let disk = try runSynchat(["simulate", "--scenario", file, "--store", "disk"] + args)
            #expect(memory.status == 0 && disk.status == 0)
            #expect(memory.out.count > 200 && memory.out == disk.out, "\(args)")
        }
        let bad = try runSynchat(["simulate", "--scenario", file, "--store", "tape"])
        #expect(bad.status == 2)
        #expect(bad.err.split(separator: "\n").count == 1 && bad.err.contains("--store tape"))
    }

    @Test("bad flags: one line, exit code 2")
    func badFlags() throws {
        let r = try runSynchat(["simulate", "--scenario", "x", "--policy", "greedy"])
        #expect(r.status == 2)
        #expect(r.err.contains("--policy greedy") && r.err.filter { $0 == "\n" }.count == 1)
    }

    @Test("--admin-token and synchat fault --token: never in clear to another host, never taken from the environment unasked, only with --server: one line, exit 2, before anything connects")
    func adminTokenFlags() throws {
        let cases: [([String], String, [String: String])] = [
            (["--server", "http://192.0.2.7:7420", "--user", "ada", "--admin-token", "t0k"], "would carry the operator's token in clear", [:]),
            (["--server", "http://example.net:7420", "--user", "ada", "--admin-token", "env"], "would carry the operator's token in clear", ["SYNCHAT_ADMIN_TOKEN": "t0k"]),
            (["--server", "http://127.0.0.1:7420", "--user", "ada", "--admin-token", "env"], "--admin-token env: SYNCHAT_ADMIN_TOKEN is not set", [:]),
            (["--admin-token", "t0k", "--ephemeral"], "--admin-token is a server's", [:]),
            // synchat fault's token is held to the same rule, from the flag or the environment.
            (["fault", "--server", "http://192.0.2.7:7420", "--token", "t0k", "push", "down"], "would carry the operator's token in clear", [:]),
            (["fault", "--server", "http://example.net:7420", "--user", "ada", "indexer", "down"], "would carry the operator's token in clear", ["SYNCHAT_ADMIN_TOKEN": "t0k"]),
        ]
        for (args, says, env) in cases {
            let r = try TmuxSession.spawn(["/usr/bin/env", "-u", "SYNCHAT_ADMIN_TOKEN"] + env.map { "\($0.key)=\($0.value)" } + [TmuxSession.binary] + args,
                                          captureOutput: true, captureErrors: true)
            #expect(r.status == 2, "\(args): \(r.err)")
            #expect(r.err.contains(says) && r.err.filter { $0 == "\n" }.count == 1, "\(args): \(r.err)")
            #expect(!r.err.contains("t0k"), "the token was echoed: \(r.err)")
        }
    }

    @Test("synchat fault reads its line at the command line: a bad or hostile line is one visible line, exit 1, before anything connects")
    func faultLineReadFirst() throws {
        for (words, says) in [(["dance"], "fault: unknown verb \"dance\""), (["push", "drop", "150%"], "fault: bad percentage \"150%\""),
                              (["indexer", "latency", "9999999999999999"], "is too long (at most 3650d)"),
                              (["receive", "alice", "\u{1B}]0;pwned\u{07}"], "fault: ")] {
            // Port 9 (discard) on loopback answers nothing: a line that got that far would say it cannot reach the server.
            let r = try runSynchat(["fault", "--server", "http://127.0.0.1:9", "--token", "t0k"] + words)
            #expect(r.status == 1, "\(words): \(r.err)")
            #expect(r.err.contains(says) && !r.err.contains("cannot reach"), "\(words): \(r.err)")
            #expect(r.err.filter { $0 == "\n" }.count == 1 && !r.err.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 }, "\(r.err.debugDescription)")
        }
    }

    @Test("synchat server --help gives each limit's default as docs/server.md's table of flags does, from the one owner of the defaults")
    func serverLimitDefaults() throws {
        let help = try runSynchat(["server", "--help"])
        #expect(help.status == 0)
        let flat = help.out.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        func shown(_ flag: String) -> String? {
            guard let start = flat.range(of: "\(flag) <") else { return nil }
            let rest = flat[start.upperBound...]
            let end = rest.range(of: " --")?.lowerBound ?? rest.endIndex
            return rest[..<end].firstMatch(of: /\(default: ([^)]+)\)/).map { String($0.output.1) }
        }
        // The row of docs/server.md's flags table that gives them, in its own words.
        let docs = try String(contentsOf: BuiltProducts.packageRoot.appendingPathComponent("docs/server.md"), encoding: .utf8)
        let row = try #require(docs.split(separator: "\n").first { $0.hasPrefix("| `--max-connections N`") })
        let documented = row.matches(of: /\((\d+\w*|\d+MiB)\)/).map { String($0.output.1) }
        let flags = ["--max-connections", "--ping-after", "--pong-timeout", "--pending-answers", "--fault-max", "--user-quota", "--failed-invites"]
        #expect(documented.count == flags.count, "\(row)")
        for (flag, words) in zip(flags, documented) { #expect(shown(flag) == words, "\(flag): help \(shown(flag) ?? "none"), docs \(words)") }
        // And the others, as the help's own prose and the limits table say them.
        for (flag, words) in [("--peer-connections", "64"), ("--user-connections", "32"), ("--peer-heads", "16"), ("--peer-rate", "100"),
                              ("--max-users", "10000"), ("--away-after", "1m"), ("--head-timeout", "10s"), ("--idle-timeout", "30s"), ("--peer-joins", "60")] {
            #expect(shown(flag) == words, "\(flag): help \(shown(flag) ?? "none")")
        }
    }

    @Test("synchat --help lists the chat's own flags, and the subcommands")
    func helpListsChatFlags() throws {
        let r = try runSynchat(["--help"])
        #expect(r.status == 0)
        for flag in ["--profile", "--ephemeral", "--seed", "--speed", "--policy", "--mode", "--scenario", "--theme", "--log", "--version", "simulate"] {
            #expect(r.out.contains(flag), "\(flag) is missing from:\n\(r.out)")
        }
        #expect(!r.out.contains("--history") && !r.out.contains("crash-child"))  // hidden
        #expect(try runSynchat(["-h"]).out == r.out)
    }

    @Test("every subcommand's help reads as prose: no line-continuation backslash")
    func helpIsProse() throws {
        for sub in ["simulate", "server", "bot", "fault"] {
            let r = try runSynchat(["help", sub])
            #expect(r.status == 0, "\(sub)")
            #expect(r.out.contains("USAGE"), "\(sub)")
            let stray = r.out.split(separator: "\n").filter { $0.contains(" \\") || $0.hasSuffix("\\") }
            #expect(stray.isEmpty, "synchat help \(sub): \(stray)")
        }
    }

    @Test("shell completion scripts for bash, zsh and fish know the chat's flags and simulate's; the manual page does too")
    func completionAndManual() throws {
        for shell in ["bash", "zsh", "fish"] {
            let r = try runSynchat(["--generate-completion-script", shell])
            #expect(r.status == 0, "\(shell)")
            for word in ["profile", "ephemeral", "theme", "simulate", "compare"] {  // fish writes -l profile, not --profile
                #expect(r.out.contains(word), "\(shell): \(word)")
            }
            #expect(!r.out.contains("crash-child"), "\(shell)")
        }
        let manual = try String(contentsOf: TmuxSession.packageRoot.appendingPathComponent("docs/man/synchat.1"), encoding: .utf8)
        for flag in ["profile", "ephemeral", "theme", "simulate", "compare"] { #expect(manual.contains(flag), "\(flag)") }
        #expect(!manual.contains("crash-child"))
        // Without a subcommand synchat is the chat: the SYNOPSIS must not read as if one were needed.
        let synopsis = manual.components(separatedBy: ".Sh SYNOPSIS")[1].components(separatedBy: ".Sh DESCRIPTION")[0]
        #expect(synopsis.contains(".Op Ar subcommand") && !synopsis.contains("\n.Ar subcommand"))
    }

    @Test("simulate --compare --chart FILE.svg writes the SVG timeline and still prints the table; an unwritable path is one line, exit 2")
    func chart() throws {
        let dir = try TemporaryDirectory("chart")
        defer { dir.remove() }
        let demo = TmuxSession.packageRoot.appendingPathComponent("Scenarios/demo.scenario").path
        let r = try runSynchat(["simulate", "--scenario", demo, "--compare", "--chart", dir.file("demo.svg")])
        #expect(r.status == 0)
        #expect(r.out.contains("adaptive/naive"))
        let svg = try String(contentsOfFile: dir.file("demo.svg"), encoding: .utf8)
        #expect(svg.hasPrefix("<svg ") && svg.hasSuffix("</svg>\n"))
        #expect(svg.contains(">naive<") && svg.contains(">seed<") && svg.contains(">adaptive<"))
        let one = try runSynchat(["simulate", "--scenario", demo, "--policy", "seed", "--chart", dir.file("seed.svg")])
        #expect(one.status == 0)
        #expect(try String(contentsOfFile: dir.file("seed.svg"), encoding: .utf8).contains(">seed<"))
        let bad = try runSynchat(["simulate", "--scenario", demo, "--chart", dir.path + "/no/such/dir/x.svg"])
        #expect(bad.status == 2)
        #expect(bad.err == "synchat: --chart: cannot write \(dir.path)/no/such/dir/x.svg\n")
    }

    @Test("a bad number is one line saying what is wrong with it, exit code 2, negative numbers included")
    func badNumbers() throws {
        let demo = TmuxSession.packageRoot.appendingPathComponent("Scenarios/demo.scenario").path
        let speed = "must be from 0.001 to 10000"
        let seed = "expected a whole number from 0 to 18446744073709551615"
        let cases: [([String], String)] = [
            (["--speed", "-5"], "--speed -5: \(speed)"),
            (["--speed", "0"], "--speed 0: \(speed)"),
            (["--speed", "0.0005"], "--speed 0.0005: \(speed)"),
            (["--speed", "inf"], "--speed inf: \(speed)"),
            (["--speed", "10001"], "--speed 10001: \(speed)"),
            (["--speed", "fast"], "--speed fast: \(speed)"),
            (["--speed", "nan"], "--speed nan: \(speed)"),
            (["--ephemeral", "--speed", "-0.5"], "--speed -0.5: \(speed)"),
            (["--seed", "-1"], "--seed -1: \(seed)"),
            (["--seed", "18446744073709551616"], "--seed 18446744073709551616: \(seed)"),
            (["--seed", "1.5"], "--seed 1.5: \(seed)"),
            (["simulate", "--scenario", demo, "--seed", "-1"], "--seed -1: \(seed)"),
            (["simulate", "--scenario", demo, "--bogus"], "Unknown option '--bogus'"),
            (["simulate", "--scenario", demo, "extra"], "Unexpected argument 'extra'"),
        ]
        for (args, message) in cases {
            let r = try runSynchat(args)
            #expect(r.status == 2, "\(args)")
            #expect(r.err.hasPrefix("synchat: \(message)") && r.err.filter { $0 == "\n" }.count == 1, "\(args): \(r.err)")
            #expect(r.out.isEmpty, "\(args)")
            // The help that has the flag: the subcommand's own.
            let help = args.first == "simulate" ? "(see synchat simulate --help)" : "(see synchat --help)"
            #expect(r.err.hasSuffix(help + "\n"), "\(args): \(r.err)")
        }
        // Through swift run's leading `--` too.
        let dashed = try runSynchat(["--", "simulate", "--scenario", demo, "--bogus"])
        #expect(dashed.status == 2 && dashed.err == "synchat: Unknown option '--bogus' (see synchat simulate --help)\n")
        // The help speaks of what the flags do, not of the libraries behind them.
        let help = try runSynchat(["--help"])
        #expect(help.status == 0 && !help.out.contains("swift-log"))
    }

    @Test("the subcommands keep their own flags: simulate's --seed and --policy are not the chat's; --version, help simulate")
    func subcommandsKeepTheirFlags() throws {
        let demo = TmuxSession.packageRoot.appendingPathComponent("Scenarios/demo.scenario").path
        let json = try runSynchat(["simulate", "--scenario", demo, "--policy", "seed", "--format", "json"])
        #expect(json.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        #expect(object["policy"] as? String == "seed")
        let five = try runSynchat(["simulate", "--scenario", demo, "--seed", "5", "--events"])
        let six = try runSynchat(["simulate", "--scenario", demo, "--seed", "6", "--events"])
        #expect(five.status == 0 && six.status == 0)
        #expect(five.out != six.out)
        #expect(try runSynchat(["simulate", "--seed", "5", "--events", "--scenario", demo]).out == five.out)
        let version = try runSynchat(["--version"])
        #expect(version.status == 0 && version.out == "synchat 0.1.0\n")
        let help = try runSynchat(["help", "simulate"])
        #expect(help.status == 0 && help.out.contains("USAGE: synchat simulate") && help.out.contains("--scenario <scenario>") && help.out.contains("--matrix"))
    }

    @Test("a terminal that cannot move its cursor (TERM=dumb) or an unknown TERM: one line, exit code 1, before anything is drawn")
    func terminalWithoutCursorAddressing() throws {
        try #require(TmuxSession.available, "tmux is not installed (apt-get install tmux)")
        let cases = [
            ("dumb", "synchat: terminal type TERM=dumb cannot move the cursor (no cup in its terminfo): the TUI needs a full-screen terminal, such as TERM=xterm-256color\n"),
            ("no-such-terminal", "synchat: unknown terminal type TERM=no-such-terminal\n"),
        ]
        for (term, message) in cases {
            // In tmux, so that stdin and stdout are a terminal and the check is TERM's.
            let errors = NSTemporaryDirectory() + "term-\(getpid())-\(term).err"
            defer { unlink(errors) }
            let t = try TmuxSession(arguments: "--ephemeral 2>\(errors)", environment: ["TERM": term])
            defer { t.close() }
            t.wait(for: "EXIT=1", seconds: 15)
            #expect(try String(contentsOfFile: errors, encoding: .utf8) == message)
        }
    }

    @Test("synchat-bench: an unknown section, flag or value is one line on stderr and exit code 2, before anything runs")
    func benchArguments() throws {
        let bench = BuiltProducts.bench
        try #require(FileManager.default.isExecutableFile(atPath: bench), "build synchat-bench first: \(bench)")
        let cases: [([String], String)] = [
            (["fuz"], "synchat-bench: unknown section fuz"),
            (["fuzz", "--count", "many"], "synchat-bench: --count many: expected a positive number of cases"),
            (["fuzz", "--count"], "synchat-bench: --count needs a value"),
            (["fuzz", "--bogus"], "synchat-bench: unknown argument --bogus"),
            (["crash", "0"], "synchat-bench: crash takes one positive number of kills"),
            (["speed", "now"], "synchat-bench: speed takes no arguments"),
        ]
        for (args, message) in cases {
            let r = try TmuxSession.spawn([bench] + args, captureOutput: true, captureErrors: true)
            #expect(r.status == 2, "\(args)")
            #expect(r.err.hasPrefix(message) && r.err.filter { $0 == "\n" }.count == 1, "\(args): \(r.err)")
            #expect(r.out.isEmpty, "\(args): ran anyway")
        }
        // --help after any section is the usage too, never an unknown argument.
        for args in [["--help"], ["fuzz", "--help"], ["soak", "-h"], ["proxy", "--help"], ["widths", "--help"]] {
            let help = try TmuxSession.spawn([bench] + args, captureOutput: true, captureErrors: true)
            #expect(help.status == 0 && help.out.hasPrefix("usage: synchat-bench") && help.err.isEmpty, "\(args): \(help.err)")
        }
    }
}
