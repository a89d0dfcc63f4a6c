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

    /// A bot as "ada" on a new server (x60, three simulated contacts writing 400/h), with
    /// faults sent for it on a timeline of wall seconds: its run, its lines and the truth.
    func adaUnderFaults(_ label: String, seconds: Int, _ timeline: [(wait: Double, faults: [String])]) throws
        -> (run: BotRun, lines: [String], truth: [String: Any]) {
        let server = try ServerEndToEndTests.Running(["--speed", "60", "--contacts", "3", "--traffic", "400/h"])
        defer { server.stop() }
        let dir = try TemporaryDirectory(label)
        defer { dir.remove() }
        let ada = try startBot(server, "ada", seconds: seconds, rate: "0/h", data: dir.path)
        for step in timeline {
            usleep(UInt32(step.wait * 1_000_000))
            for line in step.faults {
                let answer = try server.get("/admin/fault?user=ada", token: server.token, method: "POST", body: Data(line.utf8))
                #expect(answer.status == 200, "\(line): \(server.error(answer.data))")
            }
        }
        let run = try finish(ada, "ada")
        return (run, run.output.split(separator: "\n").map(String.init), try server.truth("ada"))
    }

    @Test("two users exchange messages both ways, beside simulated contacts: 0 lost, 0 duplicates, each user's messages in the other's world")
    func twoUsersChat() throws {
        let server = try ServerEndToEndTests.Running(["--speed", "60", "--contacts", "2", "--traffic", "60/h"])
        defer { server.stop() }
        let dir = try TemporaryDirectory("network-chat")
        defer { dir.remove() }
        let data = dir.path
        let ada = try startBot(server, "ada", seconds: 14, rate: "240/h", data: data)
        let bo = try startBot(server, "bo", seconds: 13, rate: "240/h", data: data)
        let adaRun = try finish(ada, "ada"), boRun = try finish(bo, "bo")
        let adaTruth = try server.truth("ada"), boTruth = try server.truth("bo")
        let adaAddress = adaTruth["address"] as! String, boAddress = boTruth["address"] as! String
        for (run, truth, other) in [(adaRun, adaTruth, boAddress), (boRun, boTruth, adaAddress)] {
            let (lost, duplicates, incoming) = lostAndDuplicated(run, truth, settle: 90_000)
            #expect(lost.isEmpty, "\(run.user) lost \(lost.count) of \(incoming.count): \(lost.prefix(5))\n\(run.output.suffix(1500))")
            #expect(duplicates == 0)
            // Both ways: the other user's messages reached this one, through the server.
            let fromOther = incoming.filter { $0["conversation"] as? String == other }
            #expect(fromOther.count >= 2, "\(run.user) got \(fromOther.count) messages from the other user")
            #expect(fromOther.allSatisfy { m in run.stored.contains(m["txId"] as! String) || Int64(m["blockTime"] as! Int) >= run.clock - 90_000 })
        }
        // What one user received from the other is exactly what the other sent, as the same
        // transactions: the world writes nothing in a person's name.
        for (sender, receiverTruth, senderAddress) in [(adaRun, boTruth, adaAddress), (boRun, adaTruth, boAddress)] {
            let sent = Set(sender.report["sent"] as? [String] ?? [])
            let received = Set((receiverTruth["ledger"] as! [[String: Any]])
                .filter { $0["conversation"] as? String == senderAddress && $0["direction"] as? String == "incoming" }.map { $0["txId"] as! String })
            #expect(received.count >= 2 && received.isSubset(of: sent), "\(sender.user): \(received.subtracting(sent).count) received that it never sent")
        }
    }

    @Test("push drop 100% for one user: its engine turns push unreliable and its forced catch-up fetches what push missed; then a stale socket is found by the keepalive and reconnected while the indexer is down: that catch-up fails and moves no cursor, a later one fetches what the silent socket missed: 0 lost")
    func faultsOnOneUser() throws {
        let (run, lines, truth) = try adaUnderFaults("network-faults", seconds: 24, [
            (2, ["push drop 100%"]), (6, ["realtime stale", "indexer down"]), (6, ["indexer up", "push up"]),
        ])
        // Push dropped: the engine finds out by itself and forces a catch-up.
        let unreliable = try #require(lines.firstIndex { $0.contains("→ unreliable") }, "push never turned unreliable:\n\(run.output.suffix(2000))")
        #expect(lines[unreliable...].contains { $0.contains("catch-up started") })
        // Stale: the keepalive goes unanswered, the engine reconnects, realtime is live again.
        let stale = try #require(lines.firstIndex { $0.contains("realtime stale: no keepalive answer") },
                                 "the stale socket was not found by the keepalive:\n\(run.output.suffix(2000))")
        #expect(lines[stale...].contains { $0.contains("realtime live") }, "no live subscription after the stale one")
        // The indexer went down with the stale socket, push still dropped: what landed while
        // the socket was silent has no way in but a catch-up, and the catch-up of the new
        // subscription fails. A failed sync leaves the cursors where they were (rule 9), so a
        // catch-up once the indexer is up fetches it: stored via fetch, none lost.
        let failed = try #require(lines[stale...].firstIndex { $0.contains("catch-up finished") && $0.contains("failed") },
                                  "no sync failed while the indexer was down:\n\(run.output.suffix(3000))")
        #expect(lines[failed...].contains { $0.contains("via fetch") }, "nothing came by a catch-up after the indexer was up")
        let (lost, duplicates, incoming) = lostAndDuplicated(run, truth, settle: 120_000)
        #expect(incoming.count >= 20)
        #expect(lost.isEmpty, "lost \(lost.count) of \(incoming.count): \(lost.prefix(5))\n\(run.output.suffix(2000))")
        #expect(duplicates == 0)
    }

    @Test("directives of the app passed by the server to the client (background, foreground), then the other network faults on one user: realtime down (the node closes the socket, the engine retries with backoff, each attempt once), realtime flaky (dropped sockets, reconnected), push delay, an expired token (registered again): 0 lost, 0 duplicates")
    func moreFaultsOnOneUser() throws {
        let (run, lines, truth) = try adaUnderFaults("network-more-faults", seconds: 27, [
            (2, ["background"]), (2, ["foreground"]),  // directives of the app: the server passes them to ada's client
            (1, ["realtime down"]), (5, ["realtime up", "realtime flaky 50%"]), (5, ["realtime up", "push delay 90s", "token expire"]),
            (4, ["push up"]),
        ])
        // The app's directives reached the client through the server and acted as its keys.
        let background = try #require(lines.firstIndex { $0.contains("lifecycle background") }, "\(run.output.prefix(3000))")
        #expect(lines[background...].contains { $0.contains("lifecycle foreground") })
        // Down: the node closes the subscription (1011, its reason); the engine retries with
        // backoff, each failed attempt counted once, and is live again once the node is up.
        let down = try #require(lines.firstIndex { $0.contains("realtime offline: disconnected: node went down") }, "\(run.output)")
        let attempts = lines[down...].compactMap { $0.firstMatch(of: /reconnect attempt (\d+)/).flatMap { Int($0.1) } }
        // Runs of attempts, each from 1 after a drop: consecutive within a run (a failure
        // reported twice would skip a number, as it did: 1, 3, 5…).
        var runs: [[Int]] = []
        for a in attempts { if a == 1 || runs.isEmpty { runs.append([a]) } else { runs[runs.count - 1].append(a) } }
        #expect(attempts.count >= 2 && runs.allSatisfy { $0 == Array(1...$0.count) }, "each failed connect counted once: attempts \(attempts)")
        let failures = lines[down...].filter { $0.contains("connect failed") }
        #expect(Set(failures.map { $0.prefix(12) }).count == failures.count, "a failed connect reported twice at one instant: \(failures.prefix(4))")
        #expect(lines[down...].contains { $0.contains("realtime live") })
        // Flaky: dropped sockets, and live again.
        #expect(lines[down...].filter { $0.contains("realtime live") }.count >= 2)
        let expired = try #require(lines.firstIndex { $0.contains("push token expired") }, "the expired token never reached the engine:\n\(run.output.suffix(2000))")
        #expect(lines[expired...].contains { $0.contains("push token registration") })
        let (lost, duplicates, incoming) = lostAndDuplicated(run, truth, settle: 150_000)
        #expect(incoming.count >= 20)
        #expect(lost.isEmpty, "lost \(lost.count) of \(incoming.count): \(lost.prefix(5))\n\(run.output.suffix(2000))")
        #expect(duplicates == 0)
    }

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
