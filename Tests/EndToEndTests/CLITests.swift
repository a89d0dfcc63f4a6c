import Foundation
import Testing

/// Runs the built binary with its output and errors captured.
func runSynchat(_ args: [String]) throws -> (status: Int32, out: String, err: String) {
    try TmuxSession.spawn([TmuxSession.binary] + args, captureOutput: true, captureErrors: true)
}

@Suite("Command line")
struct CLITests {
    init() throws {
        try #require(FileManager.default.isExecutableFile(atPath: TmuxSession.binary), "build synchat first: \(TmuxSession.binary)")
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

    @Test("bad flags: one line, exit code 2")
    func badFlags() throws {
        let r = try runSynchat(["simulate", "--scenario", "x", "--policy", "greedy"])
        #expect(r.status == 2)
        #expect(r.err.contains("--policy greedy") && r.err.filter { $0 == "\n" }.count == 1)
    }
}
