import Foundation
import ServerProtocol
import Spawn

/// `synchat-bench hostile idle-users`: a server on `--data` with many joined users who never
/// come back, minute by minute: the server's CPU, resident memory and data folder, then a new
/// user's join timed. Users are joined from 64 loopback addresses (the per-address join limit
/// is the server's own, raised for the bench).
/// `SYNCHAT_BENCH_IDLE_USERS` (default 10 000), `SYNCHAT_BENCH_IDLE_MINUTES` (default 10), and
/// `SYNCHAT_BENCH_AWAY_AFTER` (the server's `--away-after`; `168h`: nobody is ever away),
/// `SYNCHAT_BENCH_SPEED` (the server's `--speed`, default 60: a minute of the world a
/// second, each user's contacts writing 24 messages an hour of it).
func idleUsers(_ binary: String) {
    let env = ProcessInfo.processInfo.environment
    let count = env["SYNCHAT_BENCH_IDLE_USERS"].flatMap(Int.init) ?? 10_000
    let minutes = env["SYNCHAT_BENCH_IDLE_MINUTES"].flatMap(Int.init) ?? 10
    let away = env["SYNCHAT_BENCH_AWAY_AFTER"] ?? "1m"
    let speed = env["SYNCHAT_BENCH_SPEED"] ?? "60"
    let dir = NSTemporaryDirectory() + "synchat-bench-idle-users-\(getpid())"
    defer { try? FileManager.default.removeItem(atPath: dir) }
    say("== \(count) users joined on --data who never come back, idle for \(minutes) minutes, --speed \(speed), --away-after \(away) (goal: CPU ≤ 5 %, memory and data folder flat, a join within 100 ms)")
    guard let server = BenchServer.start(binary, ["--speed", speed, "--open", "--peer-joins", "1000000", "--max-users", "\(count + 10)", "--away-after", away, "--data", dir]) else { return }
    defer { server.stop() }
    let t0 = now()
    var joined = 0
    for i in 0..<count where server.join("idle\(i)", from: "127.0.9.\(i % 64 + 1)") != nil { joined += 1 }
    hrow("\(count) joins, one after another", String(format: "%.1f s (%d joined)", Double(now() - t0) / 1e9, joined))
    func folder() -> Double {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        return Double(files.reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: dir + "/" + $1)[.size] as? Int) ?? 0) }) / 1_048_576
    }
    say("minute   server CPU   resident memory   data folder")
    var cpu = ProcessCPU(pid: "\(server.pid)")
    var last = now()
    var worst = 0.0
    for minute in 1...max(1, minutes) {
        sleep(60)
        let next = ProcessCPU(pid: "\(server.pid)")
        let wall = Double(now() - last) / 1e9
        let used = next.flatMap { n in cpu.flatMap { n.seconds(since: $0)?.seconds } } ?? 0
        if minute > 1 { worst = max(worst, used / wall * 100) }
        say(String(format: "%4d     %7.1f %%    %9.1f MB      %7.1f MB", minute, used / wall * 100, server.rssMB, folder()))
        cpu = next
        last = now()
    }
    // Each of three joins timed from its request to the end of its answer (every user is a
    // contact: the answer holds them all).
    var joins: [Double] = []
    for i in 0..<3 {
        let body = "{\"user\": \"latecomer\(i)\"}"
        let j0 = now()
        let answer = RawSocket.exchange(port: server.port, from: "127.0.9.200", "POST \(Route.join) HTTP/1.1\r\nHost: x\r\n\(RawSocket.version)Connection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        if answer?.status == 201 { joins.append(Double(now() - j0) / 1e6) }
        if i == 0 { hrow("  its answer", "\((answer?.body.count ?? 0) / 1024) KB") }
    }
    hrow("a join after the idle minutes, three", joins.count == 3 ? joins.map { String(format: "%.1f ms", $0) }.joined(separator: ", ") : "failed", "goal: ≤ 100 ms")
    hrow("the most CPU in a minute after the first", String(format: "%.1f %%", worst), "goal: ≤ 5 %")
}
