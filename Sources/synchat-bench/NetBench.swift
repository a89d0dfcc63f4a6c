import Foundation
import NIOHTTP1
import NIOPosix
import ServerProtocol
import SimulatedWorld
import Spawn
import SyncCore
import SyncEngine
import ServerClient

/// `synchat-bench net`: N headless clients (the engine on `NetworkWorld`, as `synchat bot`)
/// against the built `synchat server` on loopback, at speed 1 so that world time is wall
/// time. Each client writes to the others at `rate`; for every message a recipient's node
/// notifies, the overhead above the world's own simulated delays is
///
///     (arrival at the recipient's engine − the sender's send) − (sent by the node − published)
///
/// where "published" is the block time minus the world's confirmation (1 s): what is left is
/// the publish request, the server's loop, the socket and the client's own loop. Also: the
/// clients live at the end (subscribed, `live`), and CPU per message of the server process.
func netBench(clients: Int, seconds: Int, rate: Double, warmup: Int) {
    say("== net: \(clients) clients of synchat server on loopback, \(seconds) s at x1, each writing \(Int(rate))/h after \(warmup) s")
    guard let binary = releaseBinary() else { return }
    raiseFileLimit()  // sockets and pipes: a few per client on each side
    let out = NSTemporaryDirectory() + "synchat-bench-net-\(getpid()).out"
    defer { unlink(out) }
    guard let pid = try? ChildProcess.start([binary, "server", "--port", "0", "--speed", "1", "--contacts", "0", "--traffic", "0/h", "--peer-joins", "1000000", "--open"], output: out) else {
        say("skipped: cannot start \(binary) server"); return
    }
    defer { kill(pid, SIGTERM); _ = ChildProcess.wait(pid) }
    var line = ""
    for _ in 0..<500 where !line.contains("admin token") {
        usleep(10_000)
        line = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
    }
    guard let port = line.firstMatch(of: /127\.0\.0\.1:(\d+)/).flatMap({ Int($0.1) }) else { say("skipped: the server did not start: \(line)"); return }

    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    final class Client {
        let session: NetworkSession
        var world: NetworkWorld { session.world }
        var driver: SyncDriver { session.driver }
        init(session: NetworkSession) { self.session = session }
    }
    var all: [Client] = []
    var sentAt: [String: Instant] = [:]  // body → the sender's clock when it sent
    var overheads: [Double] = []
    var publishLegs: [Double] = [], notifyLegs: [Double] = []
    let joinStart = now()
    for i in 0..<clients {
        let io = NetIO(host: "127.0.0.1", port: port, group: group)
        guard let (session, _) = try? NetworkSession.join(io, user: "bench\(i)", invite: nil, secrets: SecretInMemory(), storage: InMemoryChatStorage(),
                                                          policy: .adaptive, os: { SimOperatingSystem(seed: UInt64(i), scheduler: $0, timings: WorldTimings()) })
        else { say("join \(i) failed"); return }
        session.keepsLog = false
        let world = session.world
        world.onNotified = { message, sent, arrived in
            guard message.direction == .incoming, let start = sentAt[message.body] else { return }
            let published = message.blockTime - .seconds(1)
            let total = Double((arrived - start).milliseconds)
            let world = Double((sent - published).milliseconds)
            overheads.append(total - world)
            publishLegs.append(Double((published - start).milliseconds))
            notifyLegs.append(Double((arrived - sent).milliseconds))
        }
        all.append(Client(session: session))
    }
    row("joined", "\(clients) in \(String(format: "%.2f s", Double(now() - joinStart) / 1e9))")
    for c in all {
        c.session.start()
    }
    // Poisson sends from 5 s on, each to one of the contacts it knows (those who joined before it).
    var random = SystemRandomNumberGenerator()
    var counter = 0
    for (i, c) in all.enumerated() where i > 0 {
        func next(after: Interval) {
            c.world.scheduler.schedule(after: after, "bench send") {
                let to = c.driver.contacts.randomElement(using: &random)!
                counter += 1
                let body = "bench \(i).\(counter)"
                sentAt[body] = c.world.virtualNow
                c.driver.send(to: to.address, text: body)
                next(after: .milliseconds(Int64(-log(Double.random(in: Double.ulpOfOne..<1, using: &random)) * 3_600_000 / rate)))
            }
        }
        next(after: .seconds(Int64(warmup)) + .milliseconds(Int64.random(in: 0...2000, using: &random)))
    }
    let cpuStart = processCPU(pid), benchStart = processCPU(getpid())
    let end = now() + UInt64(seconds) * 1_000_000_000
    var fds = all.map { pollfd(fd: $0.world.io.wakeDescriptor ?? -1, events: Int16(POLLIN), revents: 0) }
    while now() < end {
        for c in all { c.world.step() }
        let wait = all.map { $0.world.wallMillisecondsToNextEvent(cap: 50) }.min() ?? 50
        _ = poll(&fds, nfds_t(fds.count), wait)
    }
    for c in all { c.world.step() }
    let serverCPU = processCPU(pid) - cpuStart, clientsCPU = processCPU(getpid()) - benchStart
    let live = all.filter { $0.driver.engine.status.realtime == .live }.count
    row("clients live at the end (subscribed)", "\(live) of \(clients)", "goal: 1 000 held")
    row("messages sent", "\(counter)")
    row("notified to the recipient's engine", "\(overheads.count)")
    if !overheads.isEmpty {
        row("overhead above the world's delays, p50", fmt(percentile(overheads, 0.5)))
        row("overhead above the world's delays, p95", fmt(percentile(overheads, 0.95)), clients >= 100 ? "goal: ≤ 20 ms with 100 clients" : "")
        row("overhead above the world's delays, max", fmt(overheads.max()!))
        row("  of it: send → the server published it, p95", fmt(percentile(publishLegs, 0.95)))
        row("  of it: the node sent it → the engine has it, p95", fmt(percentile(notifyLegs, 0.95)))
        row("server CPU per message", String(format: "%.2f ms", serverCPU * 1000 / Double(overheads.count)))
    }
    row("server CPU, whole run", String(format: "%.2f s", serverCPU))
    row("clients' CPU (this process, \(clients) engines)", String(format: "%.2f s", clientsCPU))
    row("server resident memory", rssText(pid))
    if let token = line.firstMatch(of: /admin token ([0-9a-f]{32})/).map({ String($0.1) }) {
        // The truth comes 100 users a page: every page, followed by its nextPage.
        var users: [[String: Any]] = []
        var page: Int? = 0
        while let p = page, let answer = try? NetIO(host: "127.0.0.1", port: port, group: group).requestNow(.GET, Route.adminTruth + "?page=\(p)", token: token),
              let truth = try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any] {
            users += truth["users"] as? [[String: Any]] ?? []
            page = truth["nextPage"] as? Int
        }
        let requests = users.reduce(0) { $0 + (($1["requests"] as? [String: Int])?.values.reduce(0, +) ?? 0) }
        row("backend requests, all users", "\(requests) (\(users.count) users)")
    }
}

/// User + system CPU seconds of a process, from /proc.
func processCPU(_ pid: pid_t) -> Double {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return 0 }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

func rssText(_ pid: pid_t) -> String {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return "?" }
    let kb = Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    return String(format: "%.1f MB", kb / 1024)
}

/// Lets this process open as many files (sockets) as the system allows.
func raiseFileLimit() {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}
