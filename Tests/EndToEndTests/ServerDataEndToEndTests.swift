import Foundation
import GRDB
import Testing

/// The binary with `argv` as given (`direct`: the first word is the program, for `env`).
func runSynchat(_ argv: [String], direct: Bool) throws -> (status: Int32, out: String, err: String) {
    try TmuxSession.spawn(direct ? argv : [TmuxSession.binary] + argv, captureOutput: true, captureErrors: true)
}

/// The data folder through the binary: a second server on one `--data` is one line and
/// exit 1, naming the first one's pid; a folder other users can read is refused; the secret
/// of a join is in no file the server wrote.
@Suite("synchat server: its data folder", .serialized, .ownThread)
struct ServerDataEndToEndTests {
    init() throws {
        try #require(FileManager.default.isExecutableFile(atPath: TmuxSession.binary), "build synchat first: \(TmuxSession.binary)")
    }

    @Test("two servers on one --data: the second is refused in one line naming the first's pid; a 0755 folder too; no file holds a secret")
    func oneServerPrivateFolder() throws {
        let dir = try TemporaryDirectory("server-data")
        defer { dir.remove() }
        let data = dir.file("data")
        let first = try ServerEndToEndTests.Running(["--data", data, "--speed", "60"])
        var stopped = false
        defer { if !stopped { first.stop() } }
        let secret = try first.join("zed")
        let second = try runSynchat(["server", "--port", "0", "--data", data])
        #expect(second.status == 1)
        #expect(second.err == "synchat: server: the data directory \(data) is in use by another synchat server (pid \(first.pid)); stop it first, or choose another --data\n")
        let open = dir.file("open")
        try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let refused = try runSynchat(["server", "--port", "0", "--data", open])
        #expect(refused.status == 1 && refused.err.split(separator: "\n").count == 1 && refused.err.contains("run chmod 700 \(open)"))
        first.stop()
        stopped = true
        for file in try FileManager.default.contentsOfDirectory(atPath: data) {
            let bytes = try #require(FileManager.default.contents(atPath: (data as NSString).appendingPathComponent(file)))
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(file) holds the secret")
        }
        // Restarted on the same folder, the secret still opens the user.
        let again = try ServerEndToEndTests.Running(["--data", data, "--speed", "60"])
        defer { again.stop() }
        let (status, _) = try again.get("/v1/world", token: secret)
        #expect(status == 200)
        let (wrong, _) = try again.get("/v1/world", token: String(secret.reversed()))
        #expect(wrong == 401)
    }

    @Test("a corrupt world.sqlite (text in an INTEGER column, a clock of speed 1e308) is one line naming the file and the row, exit 1, never a trap")
    func corruptFile() throws {
        let dir = try TemporaryDirectory("server-data")
        defer { dir.remove() }
        let data = dir.file("data")
        do {
            let server = try ServerEndToEndTests.Running(["--data", data, "--speed", "60"])
            _ = try server.join("zed")
            server.stop()
        }
        let path = (data as NSString).appendingPathComponent("world.sqlite")
        for (damage, row) in [("UPDATE user SET seed = 'many'", "user row 1: seed is text"),
                              ("UPDATE meta SET value = '0 0 1e308' WHERE key = 'anchor'", "meta row 'anchor'")] {
            let db = try DatabaseQueue(path: path)
            try db.write { try $0.execute(sql: damage) }
            try db.close()
            let r = try runSynchat(["server", "--port", "0", "--data", data])
            #expect(r.status == 1, "\(damage): exit \(r.status)")
            #expect(r.err.split(separator: "\n").count == 1 && r.err.contains("\(path) is corrupt: \(row)"), "\(r.err)")
            try DatabaseQueue(path: path).write { try $0.execute(sql: "UPDATE user SET seed = 1") }
        }
    }

    @Test("operator directives: receive for a user's simulated contact lands in its ledger; an unknown contact, a timed line or a bad verb is a 400 saying why")
    func operatorDirectives() throws {
        let server = try ServerEndToEndTests.Running(["--speed", "60", "--contacts", "3", "--traffic", "0/h"])
        defer { server.stop() }
        _ = try server.join("zed")
        let before = try server.truth("zed")["ledger"] as? [[String: Any]] ?? []
        let ok = try server.get("/admin/fault?user=zed", token: server.token, method: "POST", body: Data("receive alice \"hi from the operator\"".utf8))
        #expect(ok.status == 200, "\(server.error(ok.data))")
        let after = try server.truth("zed")["ledger"] as? [[String: Any]] ?? []
        #expect(after.count == before.count + 1)
        #expect((after.last?["direction"] as? String) == "incoming" && (after.last?["kind"] as? String) == "contextual")
        for (line, answer) in [("receive nobody \"x\"", "receive nobody: no simulated contact of zed has that handle"),
                               ("at 5m indexer down", "one directive without its time (\"indexer down\", not \"at 5m indexer down\")"),
                               ("dance", "unknown verb \"dance\"")] {
            let r = try server.get("/admin/fault?user=zed", token: server.token, method: "POST", body: Data(line.utf8))
            #expect(r.status == 400, "\(line)")
            #expect(server.error(r.data).hasPrefix(answer), "\(line): \(server.error(r.data))")
        }
    }

    @Test("a refused join (401, 409) leaves no profile behind, WAL included; an unreachable server is said in a person's words, not NIO's")
    func refusedJoin() throws {
        let server = try ServerEndToEndTests.Running(["--speed", "60", "--contacts", "3", "--traffic", "0/h"])
        defer { server.stop() }
        _ = try server.join("zed")
        let dir = try TemporaryDirectory("refused-join")
        defer { dir.remove() }
        let url = "http://127.0.0.1:\(server.port)"
        for (user, answer) in [("zed", "rejoining needs Authorization"), ("alice", "is the name of a simulated contact")] {
            let r = try runSynchat(["/usr/bin/env", "XDG_DATA_HOME=\(dir.path)", TmuxSession.binary, "--server", url, "--user", user], direct: true)
            #expect(r.status == 1 && r.err.split(separator: "\n").count == 1 && r.err.contains(answer), "\(user): \(r.err)")
            let left = (try? FileManager.default.contentsOfDirectory(atPath: dir.file("synchat"))) ?? []
            #expect(left.isEmpty, "\(user): left \(left)")
        }
        let nobody = try runSynchat(["--server", "http://127.0.0.1:1", "--user", "zed", "--ephemeral"])
        #expect(nobody.status == 1)
        #expect(nobody.err == "synchat: cannot reach synchat server: nothing answers at 127.0.0.1:1 (is synchat server running there?)\n", "\(nobody.err)")
    }
}

/// `synchat fault --user NAME` for a user who joined from the TUI.
@Suite("synchat fault for a TUI user", .serialized, .timingSensitive)
struct FaultForTUIUserEndToEndTests {
    init() throws { try TmuxSession.requireReady() }

    @Test("a user who joined from the TUI can be given a fault by name, as the docs' example does")
    func faultByName() throws {
        let server = try ServerEndToEndTests.Running(["--speed", "60", "--contacts", "2", "--traffic", "0/h"])
        defer { server.stop() }
        let dir = try TemporaryDirectory("fault-tui")
        defer { dir.remove() }
        let url = "http://127.0.0.1:\(server.port)"
        let t = try TmuxSession(width: 120, height: 36, arguments: "--server \(url) --user ty", environment: ["XDG_DATA_HOME": dir.path])
        defer { t.close() }
        t.wait(for: "realtime live", seconds: 60)
        let r = try runSynchat(["/usr/bin/env", "XDG_DATA_HOME=\(dir.path)", TmuxSession.binary, "fault", "--server", url, "--user", "ty", "indexer", "down"], direct: true)
        #expect(r.status == 0, "\(r.err)")
        // The fault is on ty's world: its indexer answers 503 now (read with the secret kept).
        let file = dir.file("synchat/servers/127.0.0.1_\(server.port)/ty.secret")
        let secret = try #require(try? String(contentsOfFile: file, encoding: .utf8)).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try server.get("/v1/indexer/tip", token: secret).status == 503)
        // And its bar says so: the server tells the client its world's faults, whoever gave them.
        t.wait(for: "fault: indexer down", seconds: 30)
        let up = try runSynchat(["/usr/bin/env", "XDG_DATA_HOME=\(dir.path)", TmuxSession.binary, "fault", "--server", url, "--user", "ty", "indexer", "up"], direct: true)
        #expect(up.status == 0)
        t.wait("the fault gone from the bar") { !$0.contains("fault: indexer down") }
        try t.keys("q")
    }
}

/// The networked TUI's fault words go when the fault does.
@Suite("synchat --server: fault words that stay true", .serialized, .timingSensitive)
struct NetworkFaultWordsEndToEndTests {
    init() throws { try TmuxSession.requireReady() }

    @Test("t, b, f: the token registers again and 'fault: token expired' (the embedded world's words) leaves the bar")
    func tokenFaultEnds() throws {
        let server = try ServerEndToEndTests.Running(["--speed", "60", "--contacts", "2", "--traffic", "0/h"])
        defer { server.stop() }
        let t = try TmuxSession(width: 160, height: 40, arguments: "--server http://127.0.0.1:\(server.port) --user tk --ephemeral")
        defer { t.close() }
        t.wait(for: "token active", seconds: 60)
        try t.keys(".")  // the server's clock, not "press space"
        t.wait(for: "the clock is the server's: x60, not paused, stepped or changed from here")
        try t.keys("t")
        t.wait(for: "fault: token expired", seconds: 30)
        try t.keys("b")
        t.wait(for: " background │", seconds: 30)
        try t.keys("f")
        let back = t.wait("the token active again, the fault gone") { $0.contains("token active") && !$0.contains("fault: token") }
        #expect(back.contains(" foreground │"))
        try t.keys("q")
    }

    @Test("b, then f and b at once: the bar says the app is suspended (offline or stale), never connecting for good")
    func quickBackground() throws {
        let server = try ServerEndToEndTests.Running(["--speed", "60", "--contacts", "2", "--traffic", "0/h"])
        defer { server.stop() }
        let t = try TmuxSession(width: 160, height: 40, arguments: "--server http://127.0.0.1:\(server.port) --user qb --ephemeral")
        defer { t.close() }
        t.wait(for: "realtime live", seconds: 60)
        try t.keys("b")
        t.wait(for: " background │", seconds: 30)
        try t.keys("f", "b")
        let settled = t.wait("the background without a connect in flight") { screen in
            screen.contains(" background │") && !screen.split(separator: "\n").contains { $0.hasPrefix(" background │ connecting") }
        }
        #expect(!settled.contains(" background │ connecting"))
        try t.keys("q")
    }
}

/// A server restarted without its data folder no longer knows its users.
@Suite("synchat --server: a server that forgot you", .serialized, .timingSensitive)
struct ForgottenUserEndToEndTests {
    init() throws { try TmuxSession.requireReady() }

    @Test("after a restart without --data the TUI says in words that the server no longer knows its user, and what to do")
    func saysItInWords() throws {
        var server = try ServerEndToEndTests.Running(["--speed", "60", "--contacts", "2", "--traffic", "0/h"])
        let port = server.port
        let t = try TmuxSession(width: 160, height: 40, arguments: "--server http://127.0.0.1:\(port) --user ty --ephemeral")
        defer { t.close() }
        t.wait(for: "realtime live", seconds: 60)
        server.stop()
        server = try ServerEndToEndTests.Running(["--speed", "60", "--contacts", "2", "--traffic", "0/h"], port: port)
        defer { server.stop() }
        let screen = t.wait(for: "the server no longer knows ty", seconds: 60)
        #expect(screen.contains("join again as a new user"))
        // On the bar, and in the compose line, which takes no message there.
        let bar = t.wait(for: "server forgot you: join again", seconds: 30)
        #expect(bar.split(separator: "\n").contains { $0.hasPrefix(" the server no longer knows ty") })
        try t.keys("q")
    }

    @Test("a server killed under the TUI: within 20 s the bar says server unreachable and its fault words leave; the server back on its data, the bar says neither")
    func serverGone() throws {
        let dir = try TemporaryDirectory("server-gone-e2e")
        var server = try ServerEndToEndTests.Running(["--data", dir.file("data"), "--speed", "60", "--contacts", "2", "--traffic", "0/h"])
        let port = server.port
        let t = try TmuxSession(width: 160, height: 40, arguments: "--server http://127.0.0.1:\(port) --user ty --ephemeral")
        defer { t.close() }
        t.wait(for: "realtime live", seconds: 60)
        try t.keys("x")  // indexer down, given to the server
        t.wait(for: "fault: indexer down", seconds: 30)
        server.stop(signal: SIGKILL)
        let killed = Date()
        // The bar is the screen's last two rows (the log pane says it in words too).
        func bar(_ screen: String) -> String { screen.split(separator: "\n", omittingEmptySubsequences: false).suffix(3).joined(separator: "\n") }
        #expect(t.poll(seconds: 20) { bar($0).contains("server unreachable") }, "\(t.screen())")
        #expect(Date().timeIntervalSince(killed) <= 20)
        #expect(!bar(t.screen()).contains("fault: indexer down"), "the gone world's faults left the bar")
        server = try ServerEndToEndTests.Running(["--data", dir.file("data"), "--speed", "60", "--contacts", "2", "--traffic", "0/h"], port: port)
        defer { server.stop() }
        #expect(t.poll(seconds: 60) { !bar($0).contains("server unreachable") }, "reached again: \(t.screen())")
        try t.keys("q")
    }
}

/// A full disk never confirms what it has not saved. A real 1 MiB tmpfs holds
/// the server's folder; 16 KB messages fill it; the server is killed with SIGKILL and started
/// again on a copy with room; every publish it answered 200 is there, in both worlds.
@Suite("synchat server: a full disk", .serialized, .timingSensitive)
struct ServerFullDiskEndToEndTests {
    static let mountPoint = NSTemporaryDirectory() + "synchat-server-full-\(getpid())"

    @Test("publishes on a full disk: 503 saying why for what was not saved, and every 200 survives kill -9",
          .enabled(if: FullDiskEndToEndTests.canMount, "needs root to mount a small tmpfs"))
    func fullDiskConfirmsNothingUnsaved() throws {
        let mount = Self.mountPoint
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        try #require(TmuxSession.spawn(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mount]).status == 0)
        defer { _ = try? TmuxSession.spawn(["umount", "-l", mount]) }
        let data = mount + "/data"
        let server = try ServerEndToEndTests.Running(["--data", data, "--speed", "60", "--contacts", "2", "--traffic", "0/h"])
        var killed = false
        defer { if !killed { server.stop() } }
        let ada = try server.join("ada")
        _ = try server.join("bo")
        let bo = try #require((try server.truth("bo"))["address"] as? String)
        var confirmed: [String] = [], refused = 0, refusal = ""
        let text = String(repeating: "x", count: 16_000)
        for _ in 0..<120 {
            let body = try JSONSerialization.data(withJSONObject: ["to": bo, "body": text])
            let (status, data) = try server.get("/v1/publish", token: ada, method: "POST", body: body)
            if status == 200 {
                let message = try #require((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["message"] as? [String: Any])
                confirmed.append(try #require(message["txId"] as? String))
            } else {
                #expect(status == 503)
                refused += 1
                refusal = server.error(data)
            }
        }
        #expect(refused > 0, "the 1 MiB disk never filled")
        #expect(confirmed.count > 10)
        #expect(refusal.hasPrefix("the server cannot write its data directory ("), "\(refusal)")
        kill(server.pid, SIGKILL)
        _ = ChildProcess.wait(server.pid)
        killed = true
        let roomy = try TemporaryDirectory("server-full")
        defer { roomy.remove() }
        let copy = roomy.file("data")
        #expect(try TmuxSession.spawn(["cp", "-a", data, copy]).status == 0)
        let again = try ServerEndToEndTests.Running(["--data", copy, "--speed", "60", "--contacts", "2", "--traffic", "0/h"])
        defer { again.stop() }
        for (name, direction) in [("ada", "outgoing"), ("bo", "incoming")] {
            let ledger = try again.truth(name)["ledger"] as? [[String: Any]] ?? []
            let kept = Set(ledger.filter { $0["direction"] as? String == direction }.compactMap { $0["txId"] as? String })
            let lost = confirmed.filter { !kept.contains($0) }
            #expect(lost.isEmpty, "\(name): \(lost.count) of \(confirmed.count) confirmed messages lost")
        }
    }
}

/// Joining is gated by an invite unless the server is `--open`.
@Suite("synchat server: the invite", .serialized, .timingSensitive)
struct InviteEndToEndTests {
    init() throws { try TmuxSession.requireReady() }

    @Test("without --open a server makes an invite and prints it; a first join needs it (the TUI and the bot say so in one line), a rejoin needs only its secret; bad gate flags, and an invite shorter than 16 characters, are refused")
    func invite() throws {
        let made = try ServerEndToEndTests.Running(["--contacts", "1"], gated: true)
        #expect(made.invite?.wholeMatch(of: /[0-9a-f]{32}/) != nil, "\(made.invite ?? "no invite printed")")
        made.stop()
        let server = try ServerEndToEndTests.Running(["--speed", "60", "--contacts", "1", "--traffic", "0/h", "--invite", "letmein-123-house"])
        defer { server.stop() }
        #expect(server.invite == "letmein-123-house")
        let dir = try TemporaryDirectory("invite")
        defer { dir.remove() }
        let url = "http://127.0.0.1:\(server.port)"
        let tui = try runSynchat(["--server", url, "--user", "ivy", "--ephemeral"])
        #expect(tui.status == 1 && tui.err.split(separator: "\n").count == 1 && tui.err.contains("--invite CODE"), "\(tui.err)")
        func bot(_ extra: [String]) throws -> (status: Int32, out: String, err: String) {
            try runSynchat(["/usr/bin/env", "XDG_DATA_HOME=\(dir.path)", TmuxSession.binary, "bot", "--server", url, "--user", "ivy", "--for", "1"] + extra, direct: true)
        }
        let wrong = try bot(["--invite", "letmein-124-house"])
        #expect(wrong.status == 1 && wrong.err.contains("not this server's"), "\(wrong.err)")
        let right = try bot(["--invite", "letmein-123-house"])
        #expect(right.status == 0, "\(right.err)")
        let again = try bot([])
        #expect(again.status == 0, "a rejoin with the kept secret needs no invite: \(again.err)")
        #expect(try server.truthOfAll()["users"].map { ($0 as? [Any])?.count } == 1)
        for (args, says) in [(["server", "--open", "--invite", "letmein-123-house"], "--open"), (["server", "--invite", "short"], "--invite"),
                             (["server", "--invite", "fifteen-chars-1"], "16 to 128"),
                             (["--invite", "letmein-123-house"], "--invite")] {
            let r = try runSynchat(args)
            #expect(r.status == 2 && r.err.split(separator: "\n").count == 1 && r.err.contains(says), "\(args): \(r.err)")
        }
    }
}

/// TLS: `synchat server --tls-cert --tls-key` serves https and wss; clients take
/// `https://` and trust a private CA with `--ca`. The certificates are made here by the
/// `openssl` command, a CA and a server certificate for 127.0.0.1: nothing of synchat's.
@Suite("synchat server: TLS", .serialized, .timingSensitive)
struct TLSEndToEndTests {
    init() throws { try TmuxSession.requireReady() }

    /// A CA, and a certificate it signed for IP 127.0.0.1 and localhost, in `dir`: made by the
    /// recipe of docs/server.md's TLS section, run as written (its lines before the first that
    /// runs synchat).
    static func makeCertificates(in dir: TemporaryDirectory) throws {
        let docs = try String(contentsOf: TmuxSession.packageRoot.appendingPathComponent("docs/server.md"), encoding: .utf8)
        let section = try #require(docs.range(of: "## TLS\n").map { docs[$0.upperBound...] })
        let block = try #require(section.firstMatch(of: /```sh\n((?s).*?)```/)).1
        let recipe = block.replacingOccurrences(of: "\\\n", with: " ").split(separator: "\n")
            .prefix { !$0.hasPrefix("synchat") && !$0.hasPrefix("curl") }.joined(separator: "\n")
        #expect(recipe.contains("keyCertSign") && recipe.contains("extendedKeyUsage=serverAuth"), "\(recipe)")
        let r = try ChildProcess.run(["/bin/sh", "-e", "-c", "cd '\(dir.path)' && " + recipe], captureOutput: true, captureErrors: true)
        guard r.status == 0 else { throw Failed(what: "the docs' openssl recipe: \(r.err)") }
    }

    struct Failed: Error, CustomStringConvertible {
        var what: String
        var description: String { what }
    }

    @Test("https and wss with a private CA made by the docs' recipe: a bot given --ca joins, goes live on the node socket and gets its push token over TLS; without --ca, or over http, one line says what to do; TLS 1.2 offers only ECDHE with AEAD")
    func tls() throws {
        let dir = try TemporaryDirectory("tls")
        defer { dir.remove() }
        try Self.makeCertificates(in: dir)
        let server = try ServerEndToEndTests.Running(["--speed", "60", "--contacts", "1", "--traffic", "0/h",
                                                      "--tls-cert", dir.file("server.pem"), "--tls-key", dir.file("server.key")])
        defer { server.stop() }
        let https = "https://127.0.0.1:\(server.port)"
        func bot(_ url: String, _ user: String, _ extra: [String] = []) throws -> (status: Int32, out: String, err: String) {
            try runSynchat(["/usr/bin/env", "XDG_DATA_HOME=\(dir.path)", TmuxSession.binary, "bot", "--server", url, "--user", user, "--for", "3", "--events"] + extra,
                           direct: true)
        }
        let trusted = try bot(https, "tina", ["--ca", dir.file("ca.pem")])
        #expect(trusted.status == 0, "\(trusted.err)")
        #expect(trusted.out.contains("realtime live: subscribed") && trusted.out.contains("push token active"), "\(trusted.out.suffix(600))")
        // Its clock is the TUI's: a day and a time of day (d1 10:08:55.650), as the screen says them.
        let stamped = trusted.out.split(separator: "\n").filter { $0.contains("realtime live: subscribed") || $0.hasPrefix("synchat bot:") }
        #expect(stamped.count == 2 && stamped.allSatisfy { $0.range(of: #"d\d+ \d\d:\d\d:\d\d\.\d{3}"#, options: .regularExpression) != nil }, "\(stamped)")
        #expect(stamped.first { $0.contains("realtime live") }?.hasPrefix("d1 ") == true)
        let untrusted = try bot(https, "tino")
        #expect(untrusted.status == 1 && untrusted.err.split(separator: "\n").count == 1 && untrusted.err.contains("give --ca FILE"), "\(untrusted.err)")
        let plain = try bot("http://127.0.0.1:\(server.port)", "tino")
        #expect(plain.status == 1 && plain.err.contains("use https://"), "\(plain.err)")
        // curl, another TLS client, trusts the same CA and reads the truth: one user joined.
        let curl = try ChildProcess.run(["/usr/bin/env", "curl", "-sS", "--cacert", dir.file("ca.pem"), "-H", "Synchat-Protocol: 2", "-H", "Authorization: Bearer \(server.token)",
                                         "\(https)/admin/truth"], captureOutput: true, captureErrors: true)
        let truth = try JSONSerialization.jsonObject(with: Data(curl.out.utf8)) as? [String: Any]
        #expect((truth?["users"] as? [[String: Any]])?.map { $0["user"] as? String } == ["tina"], "\(curl.out.prefix(200)) \(curl.err)")
        // TLS 1.2 at least: an old client (OpenSSL with its own floor lowered) is refused by
        // the server's alert, not by its own settings; 1.2 is taken.
        func sClient(_ version: String) throws -> String {
            let r = try ChildProcess.run(["/bin/sh", "-c", "openssl s_client -\(version) -cipher 'DEFAULT@SECLEVEL=0' -connect 127.0.0.1:\(server.port) </dev/null 2>&1"],
                                         captureOutput: true)
            return r.out
        }
        let old = try sClient("tls1_1"), current = try sClient("tls1_2")
        #expect(old.contains("alert protocol version"), "\(old.suffix(300))")
        #expect(current.contains("TLSv1.2") && !current.contains("alert protocol version"), "\(current.suffix(300))")
        let curlUntrusted = try ChildProcess.run(["/usr/bin/env", "curl", "-sS", "\(https)/v1/world"], captureOutput: true, captureErrors: true)
        #expect(curlUntrusted.status != 0 && curlUntrusted.err.lowercased().contains("certificate"), "\(curlUntrusted.err)")
        // Over TLS 1.2, only Mozilla's "intermediate" suites: an ECDHE key exchange and an AEAD
        // cipher. Every suite OpenSSL has for an RSA certificate is tried alone.
        let all = try ChildProcess.run(["/usr/bin/env", "openssl", "ciphers", "-s", "-tls1_2", "aRSA:@SECLEVEL=0"], captureOutput: true)
        let suites = all.out.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ":").filter { !$0.hasPrefix("TLS_") }
        #expect(suites.count > 20, "\(all.out)")
        let accepted = try suites.filter { suite in
            let r = try ChildProcess.run(["/bin/sh", "-c", "openssl s_client -tls1_2 -cipher '\(suite):@SECLEVEL=0' -connect 127.0.0.1:\(server.port) </dev/null 2>&1"],
                                         captureOutput: true)
            return r.out.contains("Cipher is \(suite)")
        }
        #expect(Set(accepted) == ["ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-RSA-CHACHA20-POLY1305"],
                "suites accepted over TLS 1.2: \(accepted)")
    }

    @Test("the server refuses to carry secrets in clear off loopback, and bad TLS files are one line naming the file")
    func refusals() throws {
        let dir = try TemporaryDirectory("tls-refusals")
        defer { dir.remove() }
        try Self.makeCertificates(in: dir)
        try "not a certificate\n".write(toFile: dir.file("junk.pem"), atomically: true, encoding: .utf8)
        for (args, says, status) in [(["server", "--host", "0.0.0.0", "--port", "0"], "--insecure", Int32(2)),
                                     (["server", "--port", "0", "--tls-cert", dir.file("server.pem")], "--tls-key", 2),
                                     (["server", "--port", "0", "--tls-cert", dir.file("junk.pem"), "--tls-key", dir.file("server.key")], "junk.pem", 1),
                                     (["server", "--port", "0", "--tls-cert", dir.file("server.pem"), "--tls-key", dir.file("ca.key")], "is the key the certificate's", 1),
                                     (["bot", "--server", "http://127.0.0.1:1", "--user", "x", "--ca", dir.file("ca.pem")], "--ca is for https://", 2)] {
            let r = try runSynchat(args)
            #expect(r.status == status && r.err.split(separator: "\n").count == 1 && r.err.contains(says), "\(args): \(r.status) \(r.err)")
        }
    }
}
