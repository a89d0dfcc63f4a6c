import Foundation
import Testing
import TestSupport

/// Through the binary: `simulate --shrink` and `simulate --report DIR`, on a small
/// session with a push outage (each run a fraction of a second).
@Suite("Command line: shrink and report", .timingSensitive)
struct ShrinkReportCLITests {
    /// A small session with a push outage (Scenarios/sessions/small-outage.scenario, shared with
    /// the other shrinker suite).
    static let session = (try? String(contentsOf: BuiltProducts.packageRoot.appendingPathComponent("Scenarios/sessions/small-outage.scenario"), encoding: .utf8)) ?? ""

    init() throws {
        try #require(FileManager.default.isExecutableFile(atPath: TmuxSession.binary), "build synchat first: \(TmuxSession.binary)")
    }

    /// Whether `text`'s `--events` output under `policy` has a line containing `until`.
    func shows(_ text: String, _ until: String, policy: String, in dir: TemporaryDirectory) throws -> Bool {
        let file = dir.file("probe.scenario")
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        let r = try runSynchat(["simulate", "--scenario", file, "--policy", policy, "--events"])
        #expect(r.status == 0, "\(r.err)")
        return r.out.split(separator: "\n").contains { $0.contains(until) }
    }

    @Test("--shrink --until prints a 1-minimal scenario that still shows the line, with a header naming the file and the runs; progress on stderr",
          arguments: [("reliable → unreliable", "adaptive"), ("catch-up skipped", "seed")])
    func shrinkIsOneMinimal(until: String, policy: String) throws {
        let dir = try TemporaryDirectory("shrink")
        defer { dir.remove() }
        let file = dir.file("session.scenario")
        try Self.session.write(toFile: file, atomically: true, encoding: .utf8)
        let r = try runSynchat(["simulate", "--scenario", file, "--shrink", "--until", until, "--policy", policy])
        #expect(r.status == 0, "\(r.err)")
        let lines = r.out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0].hasPrefix("# shrunk by synchat simulate --shrink from session.scenario: 10 → "))
        #expect(lines[0].firstMatch(of: /timed lines in \d+ runs$/) != nil, "\(lines[0])")
        #expect(r.err.hasPrefix("shrink: \(file): 10 timed lines") && r.err.contains("shrink: done: 10 → "))
        let timed = lines.indices.filter { lines[$0].hasPrefix("at ") }
        #expect(!timed.isEmpty && timed.count < 10)
        #expect(try shows(r.out, until, policy: policy, in: dir))
        for i in timed {
            let less = lines.enumerated().filter { $0.offset != i }.map(\.element).joined(separator: "\n")
            #expect(try !shows(less, until, policy: policy, in: dir), "not 1-minimal: \(lines[i]) can go")
        }
    }

    @Test("bad shrink flags: one line naming the flag, exit code 2, nothing on stdout")
    func badShrinkFlags() throws {
        let dir = try TemporaryDirectory("shrink-flags")
        defer { dir.remove() }
        let file = dir.file("session.scenario")
        try Self.session.write(toFile: file, atomically: true, encoding: .utf8)
        let cases: [([String], String)] = [
            (["--shrink", "--until-invariant", "slow"], "synchat: --until-invariant slow: expected lost, duplicate or false-unreliable"),
            (["--shrink"], "synchat: --shrink needs --until TEXT or --until-invariant"),
            (["--shrink", "--until", "x", "--until-invariant", "lost"], "synchat: --until and --until-invariant: give one or the other"),
            (["--until", "x"], "synchat: --until goes with --shrink"),
            (["--shrink", "--until", "x", "--compare"], "synchat: --shrink prints a scenario"),
            (["--shrink", "--until", "no such line"], "synchat: --until no such line: no line of the --events output of \(file) (policy adaptive) contains it"),
            (["--shrink", "--until-invariant", "lost"], "synchat: --until-invariant lost: \(file) keeps it under policy adaptive"),
        ]
        for (args, message) in cases {
            let r = try runSynchat(["simulate", "--scenario", file] + args)
            #expect(r.status == 2, "\(args)")
            #expect(r.err.hasPrefix(message) && r.err.filter { $0 == "\n" }.count == 1, "\(args): \(r.err)")
            #expect(r.out.isEmpty, "\(args)")
        }
    }

    @Test("--report DIR writes the scenario, its event log, the comparison, the chart and a README whose replay commands give the same files")
    func report() throws {
        let dir = try TemporaryDirectory("report")
        defer { dir.remove() }
        let file = dir.file("session.scenario")
        try Self.session.write(toFile: file, atomically: true, encoding: .utf8)
        let out = dir.file("report")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)  // empty: taken
        let r = try runSynchat(["simulate", "--scenario", file, "--policy", "seed", "--report", out])
        #expect(r.status == 0, "\(r.err)")
        // One line, ended by a newline (not a visible ^J).
        #expect(r.out.hasSuffix(" written to \(out): session.scenario, events.log, compare.txt, chart.svg, README.md\n") && !r.out.contains("^J"))
        #expect(r.out.split(separator: "\n").count == 1)
        let written = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        #expect(written == ["README.md", "chart.svg", "compare.txt", "events.log", "session.scenario"])
        #expect(try String(contentsOfFile: out + "/session.scenario", encoding: .utf8) == Self.session)
        let events = try runSynchat(["simulate", "--scenario", file, "--policy", "seed", "--events"])
        #expect(try String(contentsOfFile: out + "/events.log", encoding: .utf8) == events.out)
        let compare = try runSynchat(["simulate", "--scenario", file, "--compare"])
        #expect(try String(contentsOfFile: out + "/compare.txt", encoding: .utf8) == compare.out)
        #expect(try String(contentsOfFile: out + "/chart.svg", encoding: .utf8).contains(">adaptive<"))
        // The README's commands, run from the folder with this binary, agree with the files.
        let readme = try String(contentsOfFile: out + "/README.md", encoding: .utf8)
        let commands = readme.split(separator: "\n").map(String.init).filter { $0.hasPrefix("synchat simulate ") }
        #expect(commands.count == 3)
        #expect(commands[0] == "synchat simulate --scenario session.scenario --policy seed --events | diff - events.log")
        for command in commands {
            let shell = "cd '\(out)' && " + command.replacingOccurrences(of: "synchat simulate", with: "'\(TmuxSession.binary)' simulate")
            let replay = try TmuxSession.spawn(["/bin/sh", "-c", shell], captureOutput: true, captureErrors: true)
            #expect(replay.status == 0 && replay.out.isEmpty, "\(command): \(replay.out) \(replay.err)")
        }
        // Now the folder is not empty: refused, one line, nothing changed.
        let again = try runSynchat(["simulate", "--scenario", file, "--report", out])
        #expect(again.status == 2)
        #expect(again.err == "synchat: --report \(out): exists and is not empty (give a new or an empty folder)\n")
        // A scenario named as a file of the report is copied under another name, not overwritten.
        let clash = dir.file("README.md")
        try Self.session.write(toFile: clash, atomically: true, encoding: .utf8)
        let second = dir.file("second")
        let named = try runSynchat(["simulate", "--scenario", clash, "--report", second])
        #expect(named.status == 0, "\(named.err)")
        #expect(try String(contentsOfFile: second + "/scenario.scenario", encoding: .utf8) == Self.session)
        #expect(try String(contentsOfFile: second + "/README.md", encoding: .utf8).contains("--scenario scenario.scenario"))
        // A file where the folder should be: one line, exit 2.
        let notFolder = try runSynchat(["simulate", "--scenario", file, "--report", file])
        #expect(notFolder.status == 2 && notFolder.err == "synchat: --report \(file): exists and is not a folder\n")
    }
}
