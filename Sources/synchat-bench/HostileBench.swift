import Foundation
import Spawn

/// `synchat-bench hostile` (issue 28): the built `synchat server` on loopback, attacked the
/// ways the hostile-client suite attacks it, measured in one run:
///
/// - under each flood, a normal user's latency (GET /v1/world on its own keep-alive
///   connection, from another peer address) and the server's growth in resident memory;
/// - 1 000 joins on `--data`, and a restart that resumes those 1 000 users;
/// - a full disk (a 1 MiB tmpfs; needs root): how many confirmed publishes a restart lost.
///
/// The clients are plain POSIX sockets written here (`RawSocket`): no code of the server's.
func hostileBench() {
    say("== hostile: synchat server on loopback against abusive clients")
    guard let binary = releaseBinary() else { return }
    raiseFileLimit()
    floods(binary)
    joinsAndRestart(binary)
    fullDisk(binary)
}

/// A running server: its pid, port and the line it printed.
private struct BenchServer {
    let pid: pid_t
    let port: Int
    let output: String
    let startedIn: Double

    static func start(_ binary: String, _ args: [String]) -> BenchServer? {
        let output = NSTemporaryDirectory() + "synchat-bench-hostile-\(getpid())-\(UInt32.random(in: 0 ... .max)).out"
        let t0 = now()
        guard let pid = try? ChildProcess.start([binary, "server", "--port", "0"] + args, output: output) else { return nil }
        var line = ""
        for _ in 0..<3000 where !line.contains("admin token") {
            usleep(1_000)
            line = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        }
        let took = Double(now() - t0) / 1e9
        guard let port = line.firstMatch(of: /127\.0\.0\.1:(\d+)/).flatMap({ Int($0.1) }) else {
            say("skipped: the server did not start: \(line.prefix(300))")
            kill(pid, SIGKILL)
            _ = ChildProcess.wait(pid)
            return nil
        }
        return BenchServer(pid: pid, port: port, output: output, startedIn: took)
    }

    var token: String { ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").firstMatch(of: /admin token ([0-9a-f]{32})/).map { String($0.1) } ?? "" }

    func stop(_ signal: Int32 = SIGTERM) {
        kill(pid, signal)
        _ = ChildProcess.wait(pid)
        unlink(output)
    }

    var rssMB: Double {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return 0 }
        return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
    }

    /// Joins `name`: its secret.
    func join(_ name: String, from source: String = "127.0.0.1") -> String? {
        let body = "{\"user\": \"\(name)\"}"
        guard let answer = RawSocket.exchange(port: port, from: source, "POST /v1/join HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"),
              answer.status == 201 || answer.status == 200 else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])?["secret"] as? String
    }
}

/// One blocking TCP connection from a chosen loopback address, with timeouts.
final class RawSocket {
    let fd: Int32
    private var buffer: [UInt8] = []

    init?(port: Int, from source: String = "127.0.0.1", timeout: Double = 10) {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, source, &local.sin_addr)
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr)
        let ok = withUnsafePointer(to: &local) { l in
            l.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        } && withUnsafePointer(to: &remote) { r in
            r.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard ok else { Foundation.close(fd); return nil }
    }

    deinit { Foundation.close(fd) }

    /// Sends all of `bytes`; false when the peer is gone or the send timed out.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBufferPointer { Foundation.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return false }
            sent += n
        }
        return true
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = recv(fd, &chunk, chunk.count, 0)
        guard n > 0 else { return false }
        buffer += chunk[0..<n]
        return true
    }

    /// The next HTTP answer: its status and body (by Content-Length).
    func answer() -> (status: Int, head: String, body: [UInt8])? {
        let end: [UInt8] = [13, 10, 13, 10]
        var at: Int?
        while at == nil {
            if buffer.count >= 4 { at = (0...(buffer.count - 4)).first { buffer[$0..<($0 + 4)].elementsEqual(end) } }
            if at == nil, !fill() { return nil }
        }
        let head = String(decoding: buffer[0..<at!], as: UTF8.self)
        buffer.removeFirst(at! + 4)
        let length = head.firstMatch(of: /(?i)content-length:\s*(\d+)/).flatMap { Int($0.1) } ?? 0
        while buffer.count < length { if !fill() { return nil } }
        let body = Array(buffer[0..<length])
        buffer.removeFirst(length)
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        return (status, head, body)
    }

    /// One request on a new connection.
    static func exchange(port: Int, from source: String = "127.0.0.1", _ request: String) -> (status: Int, head: String, body: [UInt8])? {
        guard let s = RawSocket(port: port, from: source), s.send(request) else { return nil }
        return s.answer()
    }

    /// A WebSocket on `path`, upgraded (101), or nil.
    static func webSocket(port: Int, path: String, secret: String, from source: String = "127.0.0.1") -> RawSocket? {
        guard let s = RawSocket(port: port, from: source) else { return nil }
        let key = Data((0..<16).map { _ in UInt8.random(in: 0 ... 255) }).base64EncodedString()
        s.send("GET \(path) HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: \(key)\r\n"
               + "Sec-WebSocket-Version: 13\r\nAuthorization: Bearer \(secret)\r\n\r\n")
        guard let a = s.answer(), a.status == 101 else { return nil }
        return s
    }

    /// A masked client frame.
    static func frame(_ opcode: UInt8, _ payload: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x80 | opcode]
        if payload.count < 126 { out.append(0x80 | UInt8(payload.count)) } else {
            out.append(0x80 | 126)
            out += [UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        let mask = (0..<4).map { _ in UInt8.random(in: 0 ... 255) }
        out += mask
        out += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        return out
    }
}

/// Each flood for a few seconds, with a normal user measured beside it.
private func floods(_ binary: String) {
    guard let server = BenchServer.start(binary, ["--speed", "1", "--contacts", "2", "--traffic", "0/h", "--open"]) else { return }
    defer { server.stop() }
    let port = server.port
    var secrets: [String: String] = [:]
    for name in ["calm", "abuser", "other"] { secrets[name] = server.join(name) }
    guard let calm = secrets["calm"], let abuser = secrets["abuser"] else { say("skipped: cannot join"); return }
    let probe = "GET /v1/world HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(calm)\r\n\r\n"
    let baseline = server.rssMB
    say(String(format: "server resident memory at start: %.1f MB", baseline))
    say("flood (one abusive client, ~4 s)                 normal user: answers   p50        p95        max      server growth")

    /// Runs `abuse` on its own thread for `seconds` while the normal user asks, one request at
    /// a time on one keep-alive connection from 127.0.0.2.
    func measure(_ name: String, seconds: Double = 4, goalP95: Double = 50, _ abuse: @escaping @Sendable (_ stop: @escaping @Sendable () -> Bool) -> Void) {
        let before = server.rssMB
        let done = StopFlag()
        let thread = Thread { abuse { done.isSet } }
        thread.start()
        usleep(300_000)  // the flood under way
        var latencies: [Double] = []
        var failures = 0
        var normal = RawSocket(port: port, from: "127.0.0.2")
        let end = now() + UInt64(seconds * 1e9)
        while now() < end {
            let t0 = now()
            if let s = normal, s.send(probe), let a = s.answer(), a.status == 200 {
                latencies.append(Double(now() - t0) / 1e6)
            } else {
                failures += 1
                normal = RawSocket(port: port, from: "127.0.0.2")
            }
            usleep(20_000)
        }
        done.set()
        usleep(500_000)
        let growth = server.rssMB - before
        let p50 = latencies.isEmpty ? .infinity : percentile(latencies, 0.5), p95 = latencies.isEmpty ? .infinity : percentile(latencies, 0.95)
        let verdict = p95 <= goalP95 && growth <= 50 ? "" : "  (goal: p95 ≤ \(Int(goalP95)) ms, growth ≤ 50 MB)"
        say(pad(name, 50)
            + String(format: "%6d %@ %9.1f ms %9.1f ms %9.1f ms %9.1f MB", latencies.count, failures > 0 ? "(\(failures) failed)" : "", p50, p95,
                     latencies.max() ?? .infinity, growth) + verdict)
    }

    measure("none (the baseline)") { stop in while !stop() { usleep(50_000) } }
    measure("pipelined GETs, answers never read") { stop in
        guard let s = RawSocket(port: port, from: "127.0.0.3", timeout: 0.2) else { return }
        let batch = Array(String(repeating: "GET /v1/world HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(abuser)\r\n\r\n", count: 200).utf8)
        while !stop(), s.send(batch) {}
        while !stop() { usleep(50_000) }
    }
    measure("binary frames on the node socket") { stop in
        let frames = Array(repeating: RawSocket.frame(0x2, [1]), count: 1000).flatMap { $0 }
        while !stop() {
            guard let ws = RawSocket.webSocket(port: port, path: "/v1/node", secret: abuser, from: "127.0.0.3") else { usleep(10_000); continue }
            while !stop(), ws.send(frames) {}
        }
    }
    measure("text frames past the rate limit") { stop in
        let frames = Array(repeating: RawSocket.frame(0x1, Array("{\"method\":\"ping\"}".utf8)), count: 500).flatMap { $0 }
        while !stop() {
            guard let ws = RawSocket.webSocket(port: port, path: "/v1/node", secret: abuser, from: "127.0.0.3") else { usleep(10_000); continue }
            while !stop(), ws.send(frames) {}
        }
    }
    measure("2 000 idle connections from 40 addresses") { stop in
        var held: [RawSocket] = []
        for i in 0..<2_000 where !stop() {
            if let s = RawSocket(port: port, from: "127.0.3.\(i % 40 + 1)", timeout: 1) { held.append(s) }
        }
        while !stop() { usleep(50_000) }
        withExtendedLifetime(held) {}
    }
    measure("heads that never complete (slowloris), 60 sockets") { stop in
        var held: [RawSocket] = []
        for _ in 0..<60 { if let s = RawSocket(port: port, from: "127.0.0.4", timeout: 1) { s.send("GET /v1/world HTTP/1.1\r\nHost: x\r\n"); held.append(s) } }
        while !stop() {
            for s in held { s.send("X-a: b\r\n") }
            usleep(200_000)
        }
    }
    measure("a join flood from one address") { stop in
        var i = 0
        while !stop() {
            let body = "{\"user\": \"flood\(i)\"}"
            _ = RawSocket.exchange(port: port, from: "127.0.0.5", "POST /v1/join HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
            i += 1
        }
    }
    measure("GET /v1/world as fast as answered, another user") { stop in
        guard let s = RawSocket(port: port, from: "127.0.0.6") else { return }
        let request = "GET /v1/world HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(abuser)\r\n\r\n"
        while !stop(), s.send(request), s.answer() != nil {}
    }
    say(String(format: "server resident memory at the end: %.1f MB (growth through every flood: %.1f MB; goal ≤ 50 MB)", server.rssMB, server.rssMB - baseline))
}

private final class StopFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
    func set() { lock.lock(); value = true; lock.unlock() }
}

/// 1 000 joins on `--data`, then a restart that resumes them.
private func joinsAndRestart(_ binary: String) {
    let dir = NSTemporaryDirectory() + "synchat-bench-hostile-data-\(getpid())"
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let args = ["--speed", "1", "--contacts", "6", "--traffic", "24/h", "--open", "--peer-joins", "1000000", "--data", dir]
    guard let server = BenchServer.start(binary, args) else { return }
    let t0 = now()
    var joined = 0
    for i in 0..<1_000 where server.join("user\(i)") != nil { joined += 1 }
    let took = Double(now() - t0) / 1e9
    hrow("1 000 joins on --data (6 contacts each), one after another", String(format: "%.2f s (%d joined)", took, joined), "goal: ≤ 5 s")
    let world = RawSocket.exchange(port: server.port, "GET /admin/truth?user=user0 HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer \(server.token)\r\n\r\n")
    let contacts = ((world.flatMap { try? JSONSerialization.jsonObject(with: Data($0.body)) } as? [String: Any])?["contacts"] as? [Any])?.count ?? 0
    hrow("  contacts of the first user after them", "\(contacts)", "6 simulated + 999 people")
    server.stop()
    guard let again = BenchServer.start(binary, args) else { return }
    hrow("restart resuming 1 000 users: until it listens", String(format: "%.2f s", again.startedIn), "goal: ≤ 3 s")
    hrow("  server resident memory with 1 000 users", String(format: "%.1f MB", again.rssMB))
    again.stop()
}

/// Publishes on a 1 MiB tmpfs until the disk is full, kills the server, restarts it on a larger
/// copy, and counts the confirmed (200) publishes the world lost.
private func fullDisk(_ binary: String) {
    guard getuid() == 0 else { hrow("full disk", "skipped: needs root to mount a 1 MiB tmpfs"); return }
    let mount = NSTemporaryDirectory() + "synchat-bench-full-\(getpid())"
    try? FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
    guard (try? ChildProcess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mount]))?.status == 0 else { hrow("full disk", "skipped: mount failed"); return }
    defer { _ = try? ChildProcess.run(["umount", "-l", mount]); try? FileManager.default.removeItem(atPath: mount) }
    let data = mount + "/data"
    guard let server = BenchServer.start(binary, ["--speed", "1", "--contacts", "1", "--traffic", "0/h", "--open", "--data", data]) else { return }
    guard let secret = server.join("zed"), let world = RawSocket.exchange(port: server.port, "GET /v1/world HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer \(secret)\r\n\r\n"),
          let to = (((try? JSONSerialization.jsonObject(with: Data(world.body))) as? [String: Any])?["contacts"] as? [[String: Any]])?.first?["address"] as? String else {
        server.stop(SIGKILL); hrow("full disk", "skipped: cannot join"); return
    }
    var confirmed: [String] = [], refused = 0
    let filler = String(repeating: "x", count: 16_000)
    for i in 0..<150 {
        let body = "{\"to\": \"\(to)\", \"body\": \"m\(i) \(filler)\"}"
        guard let a = RawSocket.exchange(port: server.port, "POST /v1/publish HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer \(secret)\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)") else { continue }
        if a.status == 200 { confirmed.append("m\(i) ") } else if a.status == 503 { refused += 1 }
    }
    server.stop(SIGKILL)
    let copy = NSTemporaryDirectory() + "synchat-bench-full-copy-\(getpid())"
    defer { try? FileManager.default.removeItem(atPath: copy) }
    _ = try? ChildProcess.run(["cp", "-a", data, copy])
    guard let again = BenchServer.start(binary, ["--speed", "1", "--contacts", "1", "--traffic", "0/h", "--open", "--data", copy]) else { return }
    let truth = RawSocket.exchange(port: again.port, "GET /admin/truth?user=zed HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer \(again.token)\r\n\r\n")
    again.stop()
    // The ledger lists txIds, not bodies: count the outgoing messages the restarted world holds.
    let ledger = ((truth.flatMap { try? JSONSerialization.jsonObject(with: Data($0.body)) } as? [String: Any])?["ledger"] as? [[String: Any]]) ?? []
    let kept = ledger.filter { $0["direction"] as? String == "outgoing" }.count
    hrow("full disk: publishes of 16 KB on a 1 MiB tmpfs", "\(confirmed.count) confirmed (200), \(refused) refused (503)")
    hrow("  confirmed messages lost after kill -9 and a restart", "\(max(0, confirmed.count - kept))", "goal: 0")
}

/// A figure's line: the name, the value, the goal, nothing cut.
private func hrow(_ name: String, _ value: String, _ goal: String = "") {
    say(pad(name, 58) + pad(value, 28) + goal)
}

private func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s + " " : s + String(repeating: " ", count: n - s.count) }
