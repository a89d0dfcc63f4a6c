import Foundation
import Spawn
import Testing
import TestSupport

/// Several people chatting through one `synchat server` on loopback (issue 17): the built
/// binary as the server and as headless clients (`synchat bot`: the engine of the TUI on the
/// server's sockets), faults sent as an operator would, and the outcome held against the
/// server's ground truth (`/admin/truth`) the way `simulate` counts it: every incoming
/// message of the ledger that landed well before the end is stored, once. Deadlines are
/// wall-clock and generous; the world runs at x60 so a few seconds are minutes of chat.
@Suite("synchat server: people chatting through one world, on real sockets", .serialized, .timingSensitive)
struct NetworkChatTests {
    init() throws {
        try #require(FileManager.default.isExecutableFile(atPath: TmuxSession.binary), "build synchat first: \(TmuxSession.binary)")
    }

    /// A bot run to its end: what it printed and reported.
    struct BotRun {
        let user: String
        let output: String
        let report: [String: Any]
        var stored: [String] { report["stored"] as? [String] ?? [] }
        var clock: Int64 { Int64(report["clock"] as? Int ?? 0) }
    }

    /// Starts a bot for `seconds` of wall time; returns its pid and files.
    func startBot(_ server: ServerEndToEndTests.Running, _ user: String, seconds: Int, rate: String, data: String) throws -> (pid: pid_t, out: String, report: String) {
        let out = data + "/\(user).out", report = data + "/\(user).json"
        // Its own data directory (where it keeps its secret), through env: not this process's.
        let pid = try ChildProcess.start(["/usr/bin/env", "XDG_DATA_HOME=\(data)", TmuxSession.binary, "bot", "--server", "http://127.0.0.1:\(server.port)", "--user", user,
                                          "--rate", rate, "--for", "\(seconds)", "--report", report, "--events"], output: out)
        // Joined once it printed its first line.
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, !((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").contains("synchat bot:") { usleep(20_000) }
        return (pid, out, report)
    }

    func finish(_ bot: (pid: pid_t, out: String, report: String), _ user: String) throws -> BotRun {
        let status = ChildProcess.wait(bot.pid)
        let output = (try? String(contentsOfFile: bot.out, encoding: .utf8)) ?? ""
        #expect(status == 0, "bot \(user) exited with \(status): \(output.suffix(400))")
        let data = try #require(FileManager.default.contents(atPath: bot.report), "bot \(user) wrote no report: \(output.suffix(400))")
        let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return BotRun(user: user, output: output, report: report)
    }

    /// Lost and duplicated, as `simulate` counts them: incoming messages of the ledger that
    /// landed at least `settle` ms before the client's last instant and are not stored; and
    /// messages stored twice.
    func lostAndDuplicated(_ run: BotRun, _ truth: [String: Any], settle: Int64) -> (lost: [String], duplicates: Int, incoming: [[String: Any]]) {
        let ledger = truth["ledger"] as? [[String: Any]] ?? []
        let incoming = ledger.filter { $0["direction"] as? String == "incoming" }
        let stored = Set(run.stored)
        let due = incoming.filter { Int64($0["blockTime"] as! Int) < run.clock - settle }
        let lost = due.map { $0["txId"] as! String }.filter { !stored.contains($0) }
        return (lost, run.stored.count - stored.count, incoming)
    }

    // Two users chatting, every fault on one user and the join race run in one process and in
    // virtual time now (Tests/NetworkTests, issue 29 #1); here stay the real sockets and
    // processes: two TUIs in tmux, and a real kill -9.

    @Test("two terminals chat through one server: each sees the other's line, a backgrounded one gets it when it comes back, one under every fault key (s, p, t, r, x) gets every line once, once the network is back; the clock is the server's")
    func twoTerminals() throws {
        try TmuxSession.requireReady()
        let server = try ServerEndToEndTests.Running(["--speed", "10", "--contacts", "0"])
        defer { server.stop() }
        let url = "http://127.0.0.1:\(server.port)"
        let ada = try TmuxSession(width: 120, height: 32, arguments: "--server \(url) --user ada --ephemeral")
        defer { ada.close() }
        ada.wait(for: " live │", seconds: 60)
        let bo = try TmuxSession(width: 120, height: 32, arguments: "--server \(url) --user bo --ephemeral")
        defer { bo.close() }
        bo.wait(for: " live │", seconds: 60)
        #expect(bo.screen().contains("on \(url) as bo (joined): the server's clock, x10"))
        // Ada learns of bo (another user joined) and writes.
        ada.wait("bo in ada's list") { $0.split(separator: "\n").contains { $0.hasPrefix("▸ bo") || $0.hasPrefix("› bo") } }
        try ada.keys("Enter")
        try ada.type("hello bo, from ada ✓")
        try ada.keys("Enter")
        ada.wait(for: "› you: hello bo, from ada ✓")
        bo.wait("ada's line in bo's list") { $0.contains("ada") && $0.contains(" 1 ") || $0.contains("ada                       1") }
        try bo.keys("Enter")
        bo.wait(for: "ada: hello bo, from ada ✓")
        try bo.type("hi ada!")
        try bo.keys("Enter")
        ada.wait(for: "bo: hi ada!")
        // Bo goes to the background: the OS stops listening; a line written meanwhile is there when bo comes back.
        try bo.keys("Escape", "b")
        bo.wait(for: "background")
        try ada.type("are you there?")
        try ada.keys("Enter")
        ada.wait(for: "› you: are you there?")
        try bo.keys("f")
        bo.wait(for: "ada: are you there?", seconds: 60)
        // A fault key goes to the server for this user: the status bar shows it once the server took it.
        try ada.keys("Escape", "x")
        ada.wait(for: "fault: indexer down")
        try ada.keys("x")
        ada.wait("the indexer up again") { !$0.contains("indexer down │") && $0.contains("world: indexer up") }
        // Every fault key of ada's at once (push dropped, realtime down, stale, token expired):
        // bo's lines written meanwhile are all on ada's screen once the network is back.
        try ada.keys("s")
        ada.wait(for: "realtime stale")
        try ada.keys("p")
        ada.wait(for: "push drop 100%")
        try ada.keys("t")
        try ada.keys("r")
        ada.wait(for: "realtime down")
        try bo.keys("Escape", "Enter")  // back to bo's compose line (keys typed elsewhere are commands)
        bo.wait("bo's compose prompt") { $0.split(separator: "\n").contains { $0.hasPrefix("to ") && $0.hasSuffix(">") } }
        for i in 1...3 {
            try bo.type("under faults \(i)")
            try bo.keys("Enter")
            bo.wait(for: "› you: under faults \(i)")
        }
        try ada.keys("r", "p", "p")  // realtime up; push: drop all → delay 90s → ok
        let after = ada.wait("the three lines written under faults", seconds: 90) { screen in (1...3).allSatisfy { screen.contains("bo: under faults \($0)") } }
        for i in 1...3 {  // once each: no duplicate
            #expect(after.components(separatedBy: "bo: under faults \(i)").count == 2, "line \(i) shown \(after.components(separatedBy: "bo: under faults \(i)").count - 1) times")
        }
        // Speed keys do not change the server's clock.
        try bo.keys("Escape", "+")
        bo.wait(for: "the clock is the server's")
        // The world's truth agrees: nothing lost on either side, nothing written in a person's name.
        for user in ["ada", "bo"] {
            let ledger = try server.truth(user)["ledger"] as! [[String: Any]]
            #expect(ledger.count == 6, "\(user): \(ledger.count) messages in the world")
        }
        try ada.keys("Escape", "q")
        ada.wait(for: "EXIT=0")
        try bo.keys("Escape", "q")
        bo.wait(for: "EXIT=0")
    }

    @Test("the server killed (SIGKILL) and started again on its data directory loses nothing: users, secrets and messages resume, the clients reconnect by themselves, 0 lost and 0 duplicates")
    func restartLosesNothing() throws {
        let dir = try TemporaryDirectory("network-restart")
        defer { dir.remove() }
        let args = ["--speed", "60", "--contacts", "2", "--traffic", "120/h", "--data", dir.file("server")]
        var server = try ServerEndToEndTests.Running(args)
        let port = server.port
        let ada = try startBot(server, "ada", seconds: 24, rate: "240/h", data: dir.path)
        let bo = try startBot(server, "bo", seconds: 23, rate: "240/h", data: dir.path)
        usleep(7_000_000)
        let before = try server.truth("ada")["ledger"] as! [[String: Any]]
        server.stop(signal: SIGKILL)
        usleep(2_000_000)  // down for two minutes of world time: sends fail, sockets drop
        server = try ServerEndToEndTests.Running(args, port: port)
        defer { server.stop() }
        let restartedAt = Int64(try server.truthOfAll()["clock"] as! Int)
        let adaRun = try finish(ada, "ada"), boRun = try finish(bo, "bo")
        let adaTruth = try server.truth("ada"), boTruth = try server.truth("bo")
        // Everything the world had before the kill is still there.
        let after = Set((adaTruth["ledger"] as! [[String: Any]]).map { $0["txId"] as! String })
        #expect(before.count >= 5 && before.allSatisfy { after.contains($0["txId"] as! String) })
        for (run, truth) in [(adaRun, adaTruth), (boRun, boTruth)] {
            let (lost, duplicates, incoming) = lostAndDuplicated(run, truth, settle: 120_000)
            #expect(lost.isEmpty, "\(run.user) lost \(lost.count) of \(incoming.count): \(lost.prefix(5))\n\(run.output.suffix(2500))")
            #expect(duplicates == 0)
            // What it sent is in the world, some of it after the restart (the secret still
            // opens the user, publishing goes on).
            let outgoing = (truth["ledger"] as! [[String: Any]]).filter { $0["direction"] as? String == "outgoing" }
            #expect(Set(run.report["sent"] as? [String] ?? []).isSubset(of: Set(outgoing.map { $0["txId"] as! String })))
            #expect(outgoing.contains { Int64($0["blockTime"] as! Int) > restartedAt }, "\(run.user) sent nothing after the restart")
        }
    }
}
