import Foundation
import ServerProtocol
import Spawn

/// `synchat-bench hostile`: the built `synchat server` on loopback, attacked the
/// ways the hostile-client suite attacks it, measured in one run:
///
/// - under each flood, a normal user's latency (GET /v1/world on its own keep-alive
///   connection, from another peer address) and the server's growth in resident memory;
/// - 1 000 joins on `--data`, and a restart that resumes those 1 000 users;
/// - a full disk (a 1 MiB tmpfs; needs root): how many confirmed publishes a restart lost;
/// - one address's connection floods (`handshakes`); users who never come back (`idle-users`,
///   ten minutes: not in a whole run, named only).
///
/// The clients are plain POSIX sockets written here (`RawSocket`): no code of the server's.
/// The attacks, in the order a whole run makes them; `hostile crowd slow` runs only those named.
let hostileAttacks: [(name: String, run: @Sendable (String) -> Void)] = [
    ("floods", floods), ("crowd", crowds), ("slow", slowRequests), ("frames", controlFloods),
    ("invites", invitesGuessed), ("joins", joinsAndRestart), ("bodies", bodiesAcrossRestart),
    ("quota", quota), ("disk", fullDisk), ("together", together), ("handshakes", connectionFloods),
    ("idle-users", idleUsers),
]

func hostileBench(only names: [String] = []) {
    say("== hostile: synchat server on loopback against abusive clients")
    guard let binary = releaseBinary() else { return }
    raiseFileLimit()
    for attack in hostileAttacks where names.isEmpty || names.contains(attack.name) { attack.run(binary) }
}

/// One server through the attacks that hold memory, in turn: the crowd of upgraded sockets, the
/// crowd of heads, the requests left behind, the million frames. Its growth through all of
/// them, from before its first user joined (the crowd's 1 040 users included), and its peak.
func together(_ binary: String) {
    guard let server = BenchServer.start(binary, ["--speed", "60", "--contacts", "1", "--traffic", "0/h", "--open", "--peer-joins", "1000000"]) else { return }
    defer { server.stop() }
    usleep(300_000)
    let start = server.rssMB
    let peak = PeakMemory(of: server)
    say("== one server through the crowd, the requests left behind and the million frames, in turn")
    crowds(on: server)
    // With the crowd's thousand users, `GET /v1/world` is about 90 KB and costs 23 of a
    // user's 200 requests a second: the normal user asks every 150 ms, as in the crowd.
    slowRequests(on: server, interval: 0.15)
    controlFloods(on: server, interval: 0.15)
    let end = server.rssMB
    peak.stop()
    hrow("growth through all of them, one server", String(format: "%.1f MB (%.1f → %.1f MB)", end - start, start, end), "goal: ≤ 50 MB")
    hrow("  at its peak", String(format: "%+.1f MB", peak.value - start))
}

/// The largest resident size a server reached, sampled every 100 ms.
final class PeakMemory: @unchecked Sendable {
    private let lock = NSLock()
    private var peak = 0.0
    private let done = StopFlag()

    init(of server: BenchServer) {
        Thread { [self] in
            while !done.isSet {
                let now = server.rssMB
                lock.lock(); peak = max(peak, now); lock.unlock()
                usleep(100_000)
            }
        }.start()
    }

    func stop() { done.set() }
    var value: Double { lock.lock(); defer { lock.unlock() }; return peak }
}

/// Each flood for a few seconds, with a normal user measured beside it.
func floods(_ binary: String) {
    guard let server = BenchServer.start(binary, ["--speed", "1", "--contacts", "2", "--traffic", "0/h", "--open"]) else { return }
    defer { server.stop() }
    let port = server.port
    var secrets: [String: String] = [:]
    for name in ["calm", "abuser", "other"] { secrets[name] = server.join(name) }
    guard let calm = secrets["calm"], let abuser = secrets["abuser"] else { say("skipped: cannot join"); return }
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
        let (latencies, failures) = normalUser(port: port, secret: calm, seconds: seconds, on: RawSocket(port: port, from: "127.0.0.2"))
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
        let batch = Array(String(repeating: "GET \(Route.world) HTTP/1.1\r\nHost: x\r\n\(RawSocket.version)Authorization: Bearer \(abuser)\r\n\r\n", count: 200).utf8)
        while !stop(), s.send(batch) {}
        while !stop() { usleep(50_000) }
    }
    measure("binary frames on the node socket") { stop in
        let frames = Array(repeating: RawSocket.frame(0x2, [1]), count: 1000).flatMap { $0 }
        while !stop() {
            guard let ws = RawSocket.webSocket(port: port, path: Route.node, secret: abuser, from: "127.0.0.3") else { usleep(10_000); continue }
            while !stop(), ws.send(frames) {}
        }
    }
    measure("text frames past the rate limit") { stop in
        let frames = Array(repeating: RawSocket.frame(0x1, Array("{\"method\":\"ping\"}".utf8)), count: 500).flatMap { $0 }
        while !stop() {
            guard let ws = RawSocket.webSocket(port: port, path: Route.node, secret: abuser, from: "127.0.0.3") else { usleep(10_000); continue }
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
        for _ in 0..<60 { if let s = RawSocket(port: port, from: "127.0.0.4", timeout: 1) { s.send("GET \(Route.world) HTTP/1.1\r\nHost: x\r\n\(RawSocket.version)"); held.append(s) } }
        while !stop() {
            for s in held { s.send("X-a: b\r\n") }
            usleep(200_000)
        }
    }
    measure("a join flood from one address") { stop in
        var i = 0
        while !stop() {
            let body = "{\"user\": \"flood\(i)\"}"
            _ = RawSocket.exchange(port: port, from: "127.0.0.5", "POST \(Route.join) HTTP/1.1\r\nHost: x\r\n\(RawSocket.version)Connection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
            i += 1
        }
    }
    measure("GET \(Route.world) as fast as answered, another user") { stop in
        guard let s = RawSocket(port: port, from: "127.0.0.6") else { return }
        let request = "GET \(Route.world) HTTP/1.1\r\nHost: x\r\n\(RawSocket.version)Authorization: Bearer \(abuser)\r\n\r\n"
        while !stop(), s.send(request), s.answer() != nil {}
    }
    say(String(format: "server resident memory at the end: %.1f MB (growth through every flood: %.1f MB; goal ≤ 50 MB)", server.rssMB, server.rssMB - baseline))
}

final class StopFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
    func set() { lock.lock(); value = true; lock.unlock() }
}

/// 1 000 joins on `--data`, then a restart that resumes them.
func joinsAndRestart(_ binary: String) {
    let dir = NSTemporaryDirectory() + "synchat-bench-hostile-data-\(getpid())"
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let args = ["--speed", "1", "--contacts", "6", "--traffic", "24/h", "--open", "--peer-joins", "1000000", "--data", dir]
    guard let server = BenchServer.start(binary, args) else { return }
    let t0 = now()
    var joined = 0
    for i in 0..<1_000 where server.join("user\(i)") != nil { joined += 1 }
    let took = Double(now() - t0) / 1e9
    hrow("1 000 joins on --data (6 contacts each), one after another", String(format: "%.2f s (%d joined)", took, joined), "goal: ≤ 5 s")
    let world = RawSocket.exchange(port: server.port, "GET \(Route.adminTruth(user: "user0")) HTTP/1.1\r\nHost: x\r\n\(RawSocket.version)Connection: close\r\nAuthorization: Bearer \(server.token)\r\n\r\n")
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
func fullDisk(_ binary: String) {
    guard getuid() == 0 else { hrow("full disk", "skipped: needs root to mount a 1 MiB tmpfs"); return }
    let mount = NSTemporaryDirectory() + "synchat-bench-full-\(getpid())"
    try? FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
    guard (try? ChildProcess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mount]))?.status == 0 else { hrow("full disk", "skipped: mount failed"); return }
    defer { _ = try? ChildProcess.run(["umount", "-l", mount]); try? FileManager.default.removeItem(atPath: mount) }
    let data = mount + "/data"
    guard let server = BenchServer.start(binary, ["--speed", "1", "--contacts", "1", "--traffic", "0/h", "--open", "--data", data]) else { return }
    guard let secret = server.join("zed"), let world = RawSocket.exchange(port: server.port, "GET \(Route.world) HTTP/1.1\r\nHost: x\r\n\(RawSocket.version)Connection: close\r\nAuthorization: Bearer \(secret)\r\n\r\n"),
          let to = (((try? JSONSerialization.jsonObject(with: Data(world.body))) as? [String: Any])?["contacts"] as? [[String: Any]])?.first?["address"] as? String else {
        server.stop(SIGKILL); hrow("full disk", "skipped: cannot join"); return
    }
    var confirmed: [String] = [], refused = 0
    let filler = String(repeating: "x", count: 16_000)
    for i in 0..<150 {
        let body = "{\"to\": \"\(to)\", \"body\": \"m\(i) \(filler)\"}"
        guard let a = RawSocket.exchange(port: server.port, "POST \(Route.publish) HTTP/1.1\r\nHost: x\r\n\(RawSocket.version)Connection: close\r\nAuthorization: Bearer \(secret)\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)") else { continue }
        if a.status == 200 { confirmed.append("m\(i) ") } else if a.status == 503 { refused += 1 }
    }
    server.stop(SIGKILL)
    let copy = NSTemporaryDirectory() + "synchat-bench-full-copy-\(getpid())"
    defer { try? FileManager.default.removeItem(atPath: copy) }
    _ = try? ChildProcess.run(["cp", "-a", data, copy])
    guard let again = BenchServer.start(binary, ["--speed", "1", "--contacts", "1", "--traffic", "0/h", "--open", "--data", copy]) else { return }
    let truth = RawSocket.exchange(port: again.port, "GET \(Route.adminTruth(user: "zed")) HTTP/1.1\r\nHost: x\r\n\(RawSocket.version)Connection: close\r\nAuthorization: Bearer \(again.token)\r\n\r\n")
    again.stop()
    // The ledger lists txIds, not bodies: count the outgoing messages the restarted world holds.
    let ledger = ((truth.flatMap { try? JSONSerialization.jsonObject(with: Data($0.body)) } as? [String: Any])?["ledger"] as? [[String: Any]]) ?? []
    let kept = ledger.filter { $0["direction"] as? String == "outgoing" }.count
    hrow("full disk: publishes of 16 KB on a 1 MiB tmpfs", "\(confirmed.count) confirmed (200), \(refused) refused (503)")
    hrow("  confirmed messages lost after kill -9 and a restart", "\(max(0, confirmed.count - kept))", "goal: 0")
}

/// A figure's line: the name, the value, the goal, nothing cut.
func hrow(_ name: String, _ value: String, _ goal: String = "") {
    say(pad(name, 58) + pad(value, 28) + goal)
}

func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s + " " : s + String(repeating: " ", count: n - s.count) }
