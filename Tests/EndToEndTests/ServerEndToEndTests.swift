import Foundation
import Spawn
import SyncCore
import SyncEngine
import Testing

/// `synchat server` on a real socket, its HTTP side: the
/// built binary on a free loopback port, asked over HTTP by a plain socket client written here. Its
/// answers are read by the engine's own strict decoders and held against the server's
/// ground truth (`/admin/truth`). Deadlines are generous; nothing here sleeps to wait.
@Suite("synchat server: HTTP (join, the indexer, publishing, truth, faults)", .serialized, .timingSensitive)
struct ServerEndToEndTests {
    /// The server, started with `args`: its port, admin token and pid.
    final class Running {
        let port: Int
        let token: String
        let pid: pid_t
        let output: String

        /// The invite a first join must show, when the server has one.
        let invite: String?

        /// `args` without `--invite`: the server is `--open` (the suites about something else
        /// join freely; `InviteTests` gate).
        init(_ args: [String], port wanted: Int = 0, gated: Bool = false) throws {
            output = NSTemporaryDirectory() + "synchat-server-\(getpid())-\(UInt32.random(in: 0 ... .max)).out"
            let gate = gated || args.contains("--invite") ? [] : ["--open"]
            pid = try ChildProcess.start([TmuxSession.binary, "server", "--port", "\(wanted)"] + args + gate, output: output)
            var line = ""
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline {
                line = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
                if line.contains("admin token") { break }
                usleep(20_000)
            }
            guard let p = line.firstMatch(of: /127\.0\.0\.1:(\d+)/), let t = line.firstMatch(of: /admin token ([0-9a-f]{32})/) else {
                kill(pid, SIGKILL)
                throw ServerDidNotStart(line: line)
            }
            port = Int(p.1)!
            token = String(t.1)
            invite = line.firstMatch(of: /; invite ([^;)\s]+)/).map { String($0.1) }
        }

        func stop(signal: Int32 = SIGTERM) {
            kill(pid, signal)
            _ = ChildProcess.wait(pid)
            unlink(output)
        }

        func get(_ path: String, token: String? = nil, method: String = "GET", body: Data? = nil) throws -> (status: Int, data: Data) {
            var headers = ["Host: 127.0.0.1:\(port)", "Synchat-Protocol: 2", "Connection: close", "Content-Length: \(body?.count ?? 0)"]
            if let token { headers.append("Authorization: Bearer \(token)") }
            return try httpExchange(port: port, request: Data(("\(method) \(path) HTTP/1.1\r\n" + headers.joined(separator: "\r\n") + "\r\n\r\n").utf8) + (body ?? Data()))
        }

        /// Joins as `name`: its secret.
        func join(_ name: String) throws -> String {
            let (status, data) = try get("/v1/join", method: "POST", body: Data("{\"user\": \"\(name)\"}".utf8))
            #expect(status == 201)
            return try #require((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["secret"] as? String)
        }

        func truth(_ user: String) throws -> [String: Any] {
            let (status, data) = try get("/admin/truth?user=\(user)", token: token)
            #expect(status == 200)
            return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        }

        func truthOfAll() throws -> [String: Any] {
            let (status, data) = try get("/admin/truth", token: token)
            #expect(status == 200)
            return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        }

        /// What the server wrote so far besides the line saying where it listens.
        var errors: String {
            ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").split(separator: "\n")
                .filter { !$0.hasPrefix("synchat server: listening") }.joined(separator: "\n")
        }

        func error(_ data: Data) -> String {
            ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any])?["error"] as? String ?? "(not an error document)"
        }
    }

    struct ServerDidNotStart: Error, CustomStringConvertible {
        var line: String
        var description: String { "synchat server did not print its port and token: \(line)" }
    }

    init() throws {
        try #require(FileManager.default.isExecutableFile(atPath: TmuxSession.binary), "build synchat first: \(TmuxSession.binary)")
    }

    @Test("every contact's messages as the indexer serves them: read by the engine's decoder, each in the ledger, none missing that was indexed")
    func servesTheLedger() throws {
        let server = try Running(["--seed", "7", "--speed", "600", "--contacts", "4", "--traffic", "120/h"])
        defer { server.stop() }
        let secret = try server.join("ada")
        // Ten simulated minutes or so of traffic.
        var truth = try server.truth("ada")
        let deadline = Date().addingTimeInterval(60)
        while ((truth["ledger"] as? [Any])?.count ?? 0) < 8, Date() < deadline {
            usleep(200_000)
            truth = try server.truth("ada")
        }
        let me = Address(truth["address"] as! String)
        let ledger = truth["ledger"] as! [[String: Any]]
        #expect(ledger.count >= 8)
        let clock = Instant(milliseconds: Int64((try server.truthOfAll())["clock"] as! Int))
        for contact in truth["contacts"] as! [[String: Any]] {
            let address = Address(contact["address"] as! String)
            let call = IndexerCall.contextual(address, .incoming, since: .zero)
            let (status, data) = try server.get("/v1/indexer/contextual?address=\(address.value)&direction=in&since=0", token: secret)
            #expect(status == 200)
            let page = try IndexerPage.read(data, for: call, me: me, now: nil)
            #expect(page.rejected.isEmpty)
            let served = Set(page.messages.map(\.txId))
            func incoming(_ ledger: [[String: Any]]) -> [[String: Any]] {
                ledger.filter { $0["conversation"] as? String == address.value && $0["direction"] as? String == "incoming" && $0["kind"] as? String == "contextual" }
            }
            let expected = incoming(ledger)
            // Served: only what the ledger holds — the ledger as read after the answer, since at
            // x600 a message lands every few tens of milliseconds of wall time. Indexed 3 s
            // after landing at the latest, by the clock read before the answer: all of those.
            let ledgerAfter = try server.truth("ada")["ledger"] as! [[String: Any]]
            #expect(served.isSubset(of: Set(incoming(ledgerAfter).map { $0["txId"] as! String })))
            for m in expected where Int64(m["blockTime"] as! Int) + 3_000 < clock.milliseconds {
                #expect(served.contains(m["txId"] as! String), "\(contact["handle"]!): \(m["txId"]!) landed before the truth was read and is not served")
            }
        }
        // The tip: the newest indexed block time, one of the ledger's (read after it: the
        // world went on), and no older than what was surely indexed before.
        let (status, data) = try server.get("/v1/indexer/tip", token: secret)
        #expect(status == 200)
        let tip = try #require(try IndexerTips.read(data, now: nil).latest)
        let after = try server.truth("ada")
        #expect((after["ledger"] as! [[String: Any]]).contains { Int64($0["blockTime"] as! Int) == tip.milliseconds })
        let surelyIndexed = ledger.map { Int64($0["blockTime"] as! Int) }.filter { $0 + 3_000 < clock.milliseconds }.max() ?? 0
        #expect(tip.milliseconds >= surelyIndexed)
        // Each request was counted by the world, by kind.
        let requests = after["requests"] as? [String: Int]
        #expect(requests?["contextual_in"] == 4 && requests?["tip"] == 1)
    }

    @Test("faults through /admin/fault: indexer down answers 503 and up answers again, for the named user only; latency delays the answer; a directive of the app says so")
    func faults() throws {
        let server = try Running(["--speed", "100"])
        defer { server.stop() }
        let ada = try server.join("ada"), bo = try server.join("bo")
        #expect(try server.get("/v1/indexer/tip", token: ada).status == 200)
        let down = try server.get("/admin/fault?user=ada", token: server.token, method: "POST", body: Data("indexer down".utf8))
        #expect(down.status == 200)
        let refused = try server.get("/v1/indexer/tip", token: ada)
        #expect(refused.status == 503)
        #expect(server.error(refused.data) == "indexer unavailable (503)")
        #expect(try server.get("/v1/indexer/tip", token: bo).status == 200)  // another user's world is untouched
        #expect(try server.get("/admin/fault?user=ada", token: server.token, method: "POST", body: Data("indexer up".utf8)).status == 200)
        #expect(try server.get("/v1/indexer/tip", token: ada).status == 200)
        // 200 s of world latency at x100: at least 2 s of wall time; for everyone without ?user.
        #expect(try server.get("/admin/fault", token: server.token, method: "POST", body: Data("indexer latency 200s".utf8)).status == 200)
        let start = Date()
        #expect(try server.get("/v1/indexer/tip", token: bo).status == 200)
        #expect(Date().timeIntervalSince(start) >= 1.9)
        let app = try server.get("/admin/fault?user=ada", token: server.token, method: "POST", body: Data("background".utf8))
        #expect(app.status == 400)
        #expect(server.error(app.data).contains("a directive of the app"))
        let bad = try server.get("/admin/fault", token: server.token, method: "POST", body: Data("indexer sideways".utf8))
        #expect(bad.status == 400)
        #expect(!server.error(bad.data).isEmpty && !server.error(bad.data).contains("\n"))
        #expect(try server.get("/admin/fault?user=nobody", token: server.token, method: "POST", body: Data("indexer up".utf8)).status == 404)
        // The command an operator types: synchat fault.
        let url = "http://127.0.0.1:\(server.port)"
        let applied = try ChildProcess.run([TmuxSession.binary, "fault", "--server", url, "--token", server.token, "--user", "bo", "indexer", "down"],
                                           captureOutput: true, captureErrors: true)
        #expect(applied.status == 0, "\(applied.err)")
        #expect(applied.out.contains("\"applied\":\"indexer down\""))
        #expect(try server.get("/v1/indexer/tip", token: bo).status == 503)
        let refusedLine = try ChildProcess.run([TmuxSession.binary, "fault", "--server", url, "--token", server.token, "indexer", "sideways"],
                                               captureOutput: true, captureErrors: true)
        #expect(refusedLine.status == 1)
        #expect(refusedLine.err.split(separator: "\n").count == 1 && refusedLine.err.contains("fault:"), "\(refusedLine.err)")
        let wrongToken = try ChildProcess.run([TmuxSession.binary, "fault", "--server", url, "--token", "nope", "indexer", "up"],
                                              captureOutput: true, captureErrors: true)
        #expect(wrongToken.status == 1 && wrongToken.err.contains("Authorization"))
    }

    @Test("--scenario plays the network's lines on the server's clock for every user (faults, receive), skips the app's with a line on stderr, and its contacts and traffic lines set the world")
    func playsAScenario() throws {
        let dir = try TemporaryDirectory("server-scenario")
        defer { dir.remove() }
        let file = dir.file("s.scenario")
        try Data("""
            contacts 2
            traffic 0/h
            at 0m foreground
            at 1m receive bob "from the script"
            at 2m indexer down

            """.utf8).write(to: URL(fileURLWithPath: file))
        let server = try Running(["--speed", "300", "--scenario", file])
        defer { server.stop() }
        #expect(server.errors.contains("1 lines of the app not played (a client's keys): lines 3"), "\(server.errors)")
        let ada = try server.join("ada")
        var truth = try server.truthOfAll()
        let deadline = Date().addingTimeInterval(30)
        while (truth["played"] as? [Any])?.count ?? 0 < 2, Date() < deadline {
            usleep(100_000)
            truth = try server.truthOfAll()
        }
        let played = try #require(truth["played"] as? [[String: Any]])
        #expect(played.map { $0["line"] as? String } == ["receive bob \"from the script\"", "indexer down"])
        #expect(played.map { $0["at"] as? Int } == [60_000, 120_000])
        let mine = try server.truth("ada")
        #expect((mine["contacts"] as? [Any])?.count == 2)
        let ledger = try #require(mine["ledger"] as? [[String: Any]])
        #expect(ledger.count == 1 && ledger.first?["blockTime"] as? Int == 60_000)
        #expect(try server.get("/v1/indexer/tip", token: ada).status == 503)
    }

    @Test("bad requests get one clear line and the right status, and the server goes on serving")
    func badRequests() throws {
        let server = try Running([])
        defer { server.stop() }
        let ada = try server.join("ada")
        let cases: [(String, String, String?, Data?, Int, String)] = [
            ("GET", "/v1/indexer/contextual?direction=in", ada, nil, 400, "missing parameter address"),
            ("GET", "/v1/indexer/handshakes?direction=sideways", ada, nil, 400, "direction must be in or out"),
            ("GET", "/v1/indexer/payments?since=-5", ada, nil, 400, "since must be a non-negative integer"),
            ("GET", "/v1/indexer/payments?since=1&since=2", ada, nil, 400, "given twice"),
            ("GET", "/v1/indexer/tip?x=1", ada, nil, 400, "unknown parameter x"),
            ("GET", "/v1/indexer/nothing", ada, nil, 404, "no such endpoint"),
            ("POST", "/v1/indexer/tip", ada, nil, 405, "answers GET"),
            ("GET", "/v1/indexer/tip", nil, nil, 401, "Authorization: Bearer SECRET"),
            ("GET", "/v1/indexer/tip", "not-a-secret", nil, 401, "Authorization: Bearer SECRET"),
            ("POST", "/v1/join", nil, Data("{\"user\": \"Ada Lovelace\"}".utf8), 400, "a user name is 1 to 32"),
            ("POST", "/v1/join", nil, Data("{\"user\": \"alice\"}".utf8), 409, "simulated contact"),
            ("POST", "/v1/join", nil, Data("{\"user\": \"ada\"}".utf8), 401, "rejoining needs"),
            ("POST", "/v1/join", nil, Data("[1, 2".utf8), 400, "must be a JSON object"),
            ("POST", "/v1/join", nil, Data("{\"user\": \"bo\", \"protocol\": 99}".utf8), 400, "this server speaks synchat protocol 2, the client speaks 99"),
            ("POST", "/v1/publish", ada, Data("{\"to\": \"kaspa:qnobody\", \"body\": \"hi\"}".utf8), 400, "is not a contact of ada"),
            ("POST", "/v1/publish", ada, Data("{\"body\": \"hi\"}".utf8), 400, "missing \"to\""),
            ("GET", "/v1/node", ada, nil, 426, "is a WebSocket"),
            ("GET", "/v1/push", nil, nil, 401, "Authorization: Bearer SECRET"),
            ("GET", "/admin/truth", nil, nil, 401, "Authorization: Bearer"),
            ("GET", "/admin/truth", "wrong", nil, 401, "Authorization: Bearer"),
            ("POST", "/admin/fault", server.token, Data(repeating: 0x41, count: 70_000), 413, "larger than"),
            ("GET", "/v1/indexer/tip?" + String(repeating: "a", count: 5_000), nil, nil, 414, "longer than"),
        ]
        for (method, path, token, body, status, words) in cases {
            let answer = try server.get(path, token: token, method: method, body: body)
            #expect(answer.status == status, "\(method) \(path.prefix(60))")
            let message = server.error(answer.data)
            #expect(message.contains(words), "\(method) \(path.prefix(60)): \(message)")
            #expect(!message.contains("\n"))
        }
        #expect(try server.get("/v1/indexer/tip", token: ada).status == 200)
        // The server says a client of another protocol in one line of its own too.
        let said = server.errors.split(separator: "\n").filter { $0.contains("protocol") }
        #expect(said == ["synchat server: bo: join: this server speaks synchat protocol 2, the client speaks 99: use the same version of synchat on both sides"])
    }
}

struct HTTPFailure: Error, CustomStringConvertible { var description: String }

/// A TCP socket connected to 127.0.0.1:`port`, its reads and writes waiting `seconds` at most.
func loopbackSocket(port: Int, seconds: Int) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw HTTPFailure(description: "socket: \(errno)") }
    var timeout = timeval(tv_sec: seconds, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) { p in
        p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else {
        close(fd)
        throw HTTPFailure(description: "connect to port \(port): \(errno)")
    }
    return fd
}

/// One HTTP/1.1 exchange on a plain loopback socket (`Connection: close`: the answer ends
/// with the connection). Written here so that the test shares no client code with the
/// server and needs no HTTP library; 30 s deadlines.
func httpExchange(port: Int, request: Data) throws -> (status: Int, data: Data) {
    let fd = try loopbackSocket(port: port, seconds: 30)
    defer { close(fd) }
    var sent = 0
    try request.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
        while sent < raw.count {
            let n = send(fd, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
            // The server may answer (413) and close before reading a body it refuses.
            if n <= 0 { if errno == EPIPE || errno == ECONNRESET { break } else { throw HTTPFailure(description: "send: \(errno)") } }
            sent += n
        }
    }
    var response = Data()
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let n = recv(fd, &buffer, buffer.count, 0)
        if n < 0 { if errno == ECONNRESET { break } else { throw HTTPFailure(description: "recv: \(errno) after \(response.count) bytes") } }
        if n == 0 { break }
        response.append(contentsOf: buffer[0..<n])
    }
    guard let split = response.range(of: Data("\r\n\r\n".utf8)),
          let head = String(data: response[..<split.lowerBound], encoding: .utf8),
          let status = head.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else {
        throw HTTPFailure(description: "not an HTTP answer: \(response.count) bytes")
    }
    return (status, Data(response[split.upperBound...]))
}
