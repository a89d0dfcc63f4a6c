import Foundation
import Testing

/// Runs the built binary with its output captured (posix_spawn; files, not pipes).
func runSynchat(_ args: [String]) throws -> (status: Int32, out: String, err: String) {
    let tmp = NSTemporaryDirectory() + "synchat-cli-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    defer { unlink(tmp + ".out"); unlink(tmp + ".err") }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, tmp + ".out", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, tmp + ".err", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    let argv = [TmuxSession.binary] + args
    var cargs = argv.map { strdup($0) } + [nil]
    defer { for a in cargs { free(a) } }
    var pid: pid_t = 0
    guard posix_spawn(&pid, argv[0], &actions, nil, &cargs, environ) == 0 else { throw POSIXError(.ENOENT) }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    let read = { (p: String) in (try? String(contentsOfFile: p, encoding: .utf8)) ?? "" }
    return ((status >> 8) & 0xFF, read(tmp + ".out"), read(tmp + ".err"))
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
