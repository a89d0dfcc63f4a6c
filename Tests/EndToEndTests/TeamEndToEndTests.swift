import Foundation
import Spawn
import Testing

/// A team on one server, as real processes: many people behind one address (an office NAT,
/// one machine) each running `synchat bot` against a server with its default limits. Each
/// client keeps a small pool of keep-alive connections, and the server counts a connection
/// that shows a user's secret against that user, not against the address.
@Suite("A team behind one address, real processes", .serialized, .timingSensitive)
struct TeamEndToEndTests {
    init() throws {
        try #require(FileManager.default.isExecutableFile(atPath: TmuxSession.binary), "build synchat first: \(TmuxSession.binary)")
    }

    /// Runs `count` bots at once against `server` for `seconds`: each one's `--events` output.
    /// `ca`: the server serves TLS, and this CA signed its certificate.
    static func bots(_ count: Int, on server: ServerEndToEndTests.Running, seconds: Int, in dir: TemporaryDirectory, ca: String? = nil) throws -> [String] {
        let url = "\(ca == nil ? "http" : "https")://127.0.0.1:\(server.port)"
        var pids: [pid_t] = []
        for i in 1...count {
            pids.append(try ChildProcess.start(["/usr/bin/env", "XDG_DATA_HOME=\(dir.path)/b\(i)", TmuxSession.binary, "bot", "--server", url,
                                                "--user", "member\(i)", "--events", "--for", "\(seconds)"] + (ca.map { ["--ca", $0] } ?? []),
                                               output: dir.file("bot\(i).out")))
        }
        var outputs: [String] = []
        for (i, pid) in pids.enumerated() {
            let status = ChildProcess.wait(pid)
            let out = (try? String(contentsOfFile: dir.file("bot\(i + 1).out"), encoding: .utf8)) ?? ""
            #expect(status == 0, "bot \(i + 1) ended with \(status): \(out.suffix(400))")
            outputs.append(out)
        }
        return outputs
    }

    @Test("a connection refused or closed by a per-address limit is told which, by flag and value, and that its request was not read (no bare close to guess about)")
    func limitsSayWhich() throws {
        let server = try ServerEndToEndTests.Running(["--peer-connections", "2", "--peer-heads", "1"])
        defer { server.stop() }
        // --peer-heads 1: a second connection waiting for its first head closes the first.
        let a = try RawConnection(port: server.port)
        let b = try RawConnection(port: server.port)
        let shed = a.readToEnd()
        #expect(shed.hasPrefix("HTTP/1.1 503") && shed.contains("Synchat-Request-Not-Read: 1") && shed.contains("(--peer-heads 1)"), "\(shed)")
        // --peer-connections 2: two connections whose heads showed no secret (answered 401, kept
        // alive), then a third is refused as it comes.
        let request = "GET /v1/world HTTP/1.1\r\nHost: 127.0.0.1\r\nSynchat-Protocol: 2\r\n\r\n"
        b.send(request)
        let toB = b.readAnswer()
        let c = try RawConnection(port: server.port)  // after b's head was read: b no longer waits
        c.send(request)
        let toC = c.readAnswer()
        #expect(toB.hasPrefix("HTTP/1.1 401") && toC.hasPrefix("HTTP/1.1 401"), "\(toB)\n\(toC)")
        let refused = try RawConnection(port: server.port).readToEnd()
        #expect(refused.hasPrefix("HTTP/1.1 503") && refused.contains("Synchat-Request-Not-Read: 1")
                    && refused.contains("holds 2 connections that have shown no user's secret (--peer-connections 2)"), "\(refused)")
    }

    @Test("ten users behind one address, started at once against a server with its default limits: every first catch-up completes with 0 failed requests, and no request of theirs fails")
    func tenBehindOneAddress() throws {
        let dir = try TemporaryDirectory("team")
        defer { dir.remove() }
        // The default limits, contacts and speed: at speed 1 the world's latency (80–300 ms) keeps
        // each request's connection open longest; a connection a request took 250 at once.
        let server = try ServerEndToEndTests.Running([])
        defer { server.stop() }
        let outputs = try Self.bots(10, on: server, seconds: 10, in: dir)
        for (i, out) in outputs.enumerated() {
            let lines = out.split(separator: "\n")
            let first = lines.first { $0.contains("catch-up finished") }
            #expect(first != nil && !(first ?? "").contains("failed"), "member\(i + 1)'s first catch-up: \(first ?? "none in \(out.suffix(600))")")
            let errors = lines.filter { $0.contains(" error (") || $0.contains("failed") && $0.contains("catch-up finished") }
            #expect(errors.isEmpty, "member\(i + 1): \(errors.prefix(4).joined(separator: "\n"))")
        }
    }
}

/// The same team over TLS, in a suite of its own so that it runs beside the other real-process
/// suites rather than after the plain-HTTP team.
@Suite("A team behind one address over TLS, real processes", .serialized, .timingSensitive)
struct TLSTeamEndToEndTests {
    init() throws {
        try #require(FileManager.default.isExecutableFile(atPath: TmuxSession.binary), "build synchat first: \(TmuxSession.binary)")
    }

    @Test("over TLS, connections behind one address past --peer-heads 2: a connection waits for its first request only once its handshake is done, so the one closed is told why (503, not read) and its request goes again; one reset as it opens goes again too: eight users started at once all join and no request of theirs fails (the soak's first hour: 16 of 50 bots could not join)")
    func shedInTheHandshake() throws {
        let dir = try TemporaryDirectory("team-tls")
        defer { dir.remove() }
        try TLSEndToEndTests.makeCertificates(in: dir)
        let server = try ServerEndToEndTests.Running(["--peer-heads", "2", "--tls-cert", dir.file("server.pem"), "--tls-key", dir.file("server.key")])
        defer { server.stop() }
        let outputs = try TeamEndToEndTests.bots(8, on: server, seconds: 8, in: dir, ca: dir.file("ca.pem"))
        var caughtUp = 0
        for (i, out) in outputs.enumerated() {
            let lines = out.split(separator: "\n")
            if lines.contains(where: { $0.contains("catch-up finished") && !$0.contains("failed") }) { caughtUp += 1 }
            let errors = lines.filter { $0.contains(" error (") || $0.contains("failed") && $0.contains("catch-up finished") }
            #expect(errors.isEmpty, "member\(i + 1): \(errors.prefix(4).joined(separator: "\n"))")
        }
        #expect(caughtUp == 8)
    }
}

/// A plain loopback TCP connection the test drives byte by byte (shares no code with the
/// client or the server); reads wait 10 s at most.
final class RawConnection {
    private let fd: Int32

    init(port: Int) throws { fd = try loopbackSocket(port: port, seconds: 10) }

    deinit { close() }

    private var open = true
    func close() {
        guard open else { return }
        open = false
        Glibc.close(fd)
    }

    func send(_ text: String) {
        _ = text.withCString { Glibc.send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
    }

    /// What arrives until the server closes (or 10 s pass).
    func readToEnd() -> String {
        var out = Data()
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            out.append(contentsOf: buffer[0..<n])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// One answer of a keep-alive connection: its head and the body its Content-Length says.
    func readAnswer() -> String {
        var out = Data()
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while true {
            if let split = out.range(of: Data("\r\n\r\n".utf8)) {
                let head = String(decoding: out[..<split.lowerBound], as: UTF8.self)
                let length = head.firstMatch(of: /Content-Length: (\d+)/).flatMap { Int($0.1) } ?? 0
                if out.count - split.upperBound >= length { break }
            }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            out.append(contentsOf: buffer[0..<n])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// A server killed with `kill -9` and started again on its `--data`, round after round, under
/// traffic, while a real `synchat bot` runs on: the restart blames no channel. Rounds:
/// `$SYNCHAT_RESTART_ROUNDS` (CI runs 20; 3 by default, for the person editing).
@Suite("A restart blames no one, real processes", .serialized, .timingSensitive)
struct RestartEndToEndTests {
    static var rounds: Int { ProcessInfo.processInfo.environment["SYNCHAT_RESTART_ROUNDS"].flatMap(Int.init) ?? 3 }

    init() throws {
        try #require(FileManager.default.isExecutableFile(atPath: TmuxSession.binary), "build synchat first: \(TmuxSession.binary)")
    }

    @Test("kill -9 and a restart on the same data, round after round, under traffic: the bot's push stays reliable, no miss is counted, nothing is lost")
    func killedAndRestarted() throws {
        let dir = try TemporaryDirectory("restart-e2e")
        defer { dir.remove() }
        let args = ["--data", dir.file("server"), "--speed", "60", "--contacts", "3", "--traffic", "600/h"]
        var server = try ServerEndToEndTests.Running(args)
        let port = server.port
        defer { server.stop(signal: SIGKILL) }
        let output = dir.file("bot.out"), report = dir.file("report.json")
        let bot = try ChildProcess.start(["/usr/bin/env", "XDG_DATA_HOME=\(dir.path)/bot", TmuxSession.binary, "bot", "--server",
                                          "http://127.0.0.1:\(port)", "--user", "ivy", "--events", "--rate", "120/h", "--report", report],
                                         output: output)
        var botEnded = false
        defer { if !botEnded { kill(bot, SIGKILL); _ = ChildProcess.wait(bot) } }
        func said() -> String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
        func until(_ seconds: Double, _ condition: () -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline { if condition() { return true }; usleep(100_000) }
            return condition()
        }
        #expect(until(30) { said().contains("→ reliable") }, "push never became reliable: \(said().suffix(600))")
        for _ in 1...Self.rounds {
            usleep(2_000_000)
            server.stop(signal: SIGKILL)
            usleep(1_000_000)  // a world minute with nobody to hear
            server = try ServerEndToEndTests.Running(args, port: port)
        }
        usleep(6_000_000)  // the reconnects' catch-ups, and a grace of the world's for the last pushes
        let truth = try server.truth("ivy")
        kill(bot, SIGTERM)
        #expect(ChildProcess.wait(bot) == 0)
        botEnded = true
        let out = said()
        let misses = out.split(separator: "\n").filter { $0.contains("observation miss") }
        #expect(misses.isEmpty, "\(misses.count) misses:\n\(misses.prefix(4).joined(separator: "\n"))")
        #expect(out.contains("push path closed"), "the relay's closing reached the engine: \(out.suffix(400))")
        let stored = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any] ?? [:]
        #expect(stored["reliability"] as? String == "reliable", "\(stored["reliability"] ?? "none")")
        let have = Set(stored["stored"] as? [String] ?? [])
        let clock = (try server.truthOfAll()["clock"] as? Int) ?? 0
        let due = (truth["ledger"] as? [[String: Any]] ?? []).filter {
            $0["direction"] as? String == "incoming" && ($0["blockTime"] as? Int ?? .max) < clock - 120_000
        }.compactMap { $0["txId"] as? String }
        #expect(due.count > 10, "too little traffic to judge: \(due.count)")
        let lost = due.filter { !have.contains($0) }
        #expect(lost.isEmpty, "lost \(lost.count) of \(due.count): \(lost.prefix(5))")
    }
}
