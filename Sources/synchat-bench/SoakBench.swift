import ChatStore
import FaultProxy
import Foundation
import ServerProtocol
import SimulatedWorld
import Spawn
import SyncCore

/// `synchat-bench soak`: a team's hours of chaos, judged message by message from outside.
/// Real processes only: `synchat server --data DIR` over TLS, `bots` × `synchat bot` and `tuis`
/// TUIs in tmux (which write too), all on 127.0.0.1. A nemesis drawn from the seed breaks
/// something every 5–20 s (`SoakNemesis`); then everything heals, every client comes to the
/// foreground for a quiet period, and the checker (`SoakChecker`) holds each client's store
/// against the server's ledger (`/admin/truth`). The figures go to `--out` as JSON, with an SVG
/// timeline and the TUIs' last screens. The anchors: Jepsen's set-full checker and nemesis,
/// Maelstrom's quiet period before final reads, TigerBeetle's VOPR (a seed replays the run).
struct SoakSettings {
    var minutes = 60.0, bots = 50, tuis = 2, seed: UInt64 = 1, quiet = 60.0, speed = 1.0
    var out = "soak"
    /// Exit 1 when a message is lost, unexpected, duplicated or shown sent and never confirmed,
    /// or a request failed outside a fault window (CI's short soak).
    var check = false
}

func soakArguments(_ rest: [String]) -> SoakSettings {
    var s = SoakSettings()
    var i = 0
    func value() -> String {
        guard i + 1 < rest.count else { usage("soak: \(rest[i]) needs a value") }
        i += 1
        return rest[i]
    }
    while i < rest.count {
        switch rest[i] {
        case "--minutes": guard let v = Double(value()), v > 0, v <= 24 * 60 else { usage("soak: --minutes takes 0 to 1440") }; s.minutes = v
        case "--bots": guard let v = Int(value()), (0...500).contains(v) else { usage("soak: --bots takes 0 to 500") }; s.bots = v
        case "--tuis": guard let v = Int(value()), (0...4).contains(v) else { usage("soak: --tuis takes 0 to 4") }; s.tuis = v
        case "--seed": guard let v = UInt64(value()) else { usage("soak: --seed takes a number") }; s.seed = v
        case "--quiet": guard let v = Double(value()), v >= 10, v <= 600 else { usage("soak: --quiet takes 10 to 600 seconds") }; s.quiet = v
        case "--out": s.out = value()
        case "--check": s.check = true
        default: usage("soak takes --minutes M, --bots N, --tuis N, --seed S, --quiet SECONDS, --out DIR, --check; not \(rest[i])")
        }
        i += 1
    }
    return s
}

/// One running program of the soak: how to start it, its pid and its output, restarted in place.
final class SoakProcess {
    enum Kind: String { case server, bot, tui }
    let kind: Kind
    let name: String
    let start: (Int) -> pid_t?  // incarnation → pid
    private(set) var pid: pid_t = 0
    private(set) var incarnation = 0
    /// When its last incarnation started, in the run's wall seconds.
    private(set) var launchedAt = 0.0
    let clock: () -> Double
    /// Resident memory samples (wall seconds since the start, MB).
    var rss: [(at: Double, mb: Double)] = []
    /// Stopped with SIGSTOP until then.
    var stoppedUntil: Double?

    init(_ kind: Kind, _ name: String, clock: @escaping () -> Double, start: @escaping (Int) -> pid_t?) {
        self.kind = kind
        self.name = name
        self.clock = clock
        self.start = start
    }

    @discardableResult func launch() -> Bool {
        incarnation += 1
        launchedAt = clock()
        guard let p = start(incarnation) else { return false }
        pid = p
        return true
    }

    func signal(_ s: Int32) { if pid > 0 { kill(pid, s) } }

    /// kill -9, reaped (a TUI's pid is tmux's pane: it is reaped by tmux).
    func killHard() {
        guard pid > 0 else { return }
        kill(pid, SIGCONT)
        kill(pid, SIGKILL)
        if kind != .tui { _ = ChildProcess.wait(pid) }
        pid = 0
    }

    var rssMB: Double {
        guard pid > 0, let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return 0 }
        return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
    }
}

/// The soak's world: where its files are, the server's port and token, the clock's anchor.
final class SoakRun {
    let settings: SoakSettings
    let binary: String
    let dir: String
    let port: Int
    var token = ""
    let t0 = now()
    var server: SoakProcess!
    var bots: [SoakProcess] = []
    var tuis: [SoakProcess] = []
    let tmux: String
    /// The world's clock (ms) at the wall instant `anchorWall` (seconds since the start).
    var anchor: (wall: Double, world: Int64) = (0, 0)

    init(settings: SoakSettings, binary: String) {
        self.settings = settings
        self.binary = binary
        dir = (settings.out as NSString).standardizingPath
        port = Int.random(in: 20_000...40_000)
        tmux = "tmux -L synchat-soak-\(getpid())"
    }

    var wall: Double { Double(now() - t0) / 1e9 }
    var url: String { "https://127.0.0.1:\(port)" }
    /// Every client reaches the server through the proxy, on its own port (`FaultProxy`).
    var proxy: FaultProxy!
    var proxyPorts: [String: Int] = [:]
    /// The proxy's counts, read before it stops: connections carried, reset, cut.
    var wire = (accepted: 0, resets: 0, cuts: 0)
    func clientURL(_ name: String) -> String { "https://127.0.0.1:\(proxyPorts[name] ?? port)" }
    var ca: String { dir + "/tls/ca.pem" }

    /// The world's instant now, from the anchor.
    func worldNow() -> Int64 { anchor.world + Int64((wall - anchor.wall) * 1000 * settings.speed) }

    /// The world's instant at a wall instant (seconds since the start).
    func worldOf(wall at: Double) -> Int64 { anchor.world + Int64((at - anchor.wall) * 1000 * settings.speed) }

    /// Wall seconds since the start of a world instant.
    func wallOf(world ms: Int64) -> Double { anchor.wall + Double(ms - anchor.world) / 1000 / settings.speed }

    /// The CA and the server's certificate, by the docs' recipe (docs/server.md, TLS).
    func makeCertificates() -> Bool { makeTestCertificates(in: dir + "/tls") }

    /// The server, on its data folder; waits for its first line and reads its admin token.
    func startServer(_ incarnation: Int) -> pid_t? {
        let output = dir + "/server/out-\(incarnation).log"
        try? FileManager.default.createDirectory(atPath: dir + "/server", withIntermediateDirectories: true)
        guard let pid = try? ChildProcess.start([binary, "server", "--port", "\(port)", "--data", dir + "/server/data", "--open",
                                                 "--speed", "\(settings.speed)", "--traffic", "120/h", "--tls-cert", dir + "/tls/server.pem",
                                                 "--tls-key", dir + "/tls/server.key"], output: output) else { return nil }
        for _ in 0..<3000 {
            let line = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            if let t = line.firstMatch(of: /admin token ([0-9a-f]{32})/) {
                token = String(t.1)
                return pid
            }
            usleep(10_000)
        }
        return pid
    }

    func startBot(_ i: Int, _ incarnation: Int) -> pid_t? {
        let home = dir + "/bots/bot\(i)"
        try? FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        return try? ChildProcess.start(["/usr/bin/env", "XDG_DATA_HOME=\(home)", binary, "bot", "--server", clientURL("bot\(i)"), "--ca", ca, "--user", "bot\(i)",
                                        "--events", "--rate", "120/h", "--report", home + "/report-\(incarnation).json"],
                                       output: home + "/events-\(incarnation).log")
    }

    func startTUI(_ i: Int, _ incarnation: Int) -> pid_t? {
        let home = dir + "/tuis/tui\(i)"
        try? FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let command = "env TERM=xterm-256color XDG_DATA_HOME=\(home) HOME=\(home) \(binary) --server \(clientURL("tui\(i)")) --ca \(ca) --user tui\(i) --profile tui\(i) --log \(home)/events.log"
        if incarnation == 1 {
            // The pane stays when its program is killed, so that it can be started again in it.
            _ = sh("\(tmux) new-session -d -s tui\(i) -x 120 -y 30 \"\(command)\" \\; set-option -w -t tui\(i) remain-on-exit on")
        } else {
            _ = sh("\(tmux) respawn-pane -k -t tui\(i) \"\(command)\"")
        }
        return Int32(sh("\(tmux) list-panes -t tui\(i) -F '#{pane_pid}'")).map { pid_t($0) }
    }

    func screen(_ tui: SoakProcess) -> String { sh("\(tmux) capture-pane -p -t \(tui.name)", raw: true) }

    /// The server's truth, whole or of one user (curl: another TLS client).
    func truth(_ user: String? = nil) -> [String: Any]? {
        let path = user.map { Route.adminTruth(user: $0) } ?? Route.adminTruth
        let out = sh("curl -sS --max-time 30 --cacert '\(ca)' -H '\(ProtocolVersion.header): \(ProtocolVersion.headerValue)' -H 'Authorization: Bearer \(token)' '\(url)\(path)'", raw: true)
        return (try? JSONSerialization.jsonObject(with: Data(out.utf8))) as? [String: Any]
    }

    /// Sends a directive through `synchat fault` for one user.
    func fault(_ user: String, _ line: String) {
        _ = try? ChildProcess.run([binary, "fault", "--server", url, "--ca", ca, "--token", token, "--user", user] + line.split(separator: " ").map(String.init),
                                  captureOutput: true, captureErrors: true)
    }

    /// The world's clock now, asked of the server: the anchor for reading the clients' stamps.
    func takeAnchor() {
        guard let clock = truth()?["clock"] as? Int else { return }
        anchor = (wall, Int64(clock))
    }

    /// Every process ended: the bots (SIGTERM, so each writes its report) are the checker's to
    /// stop; here the server and tmux.
    func stopAll() {
        proxy.shutdown()
        for p in bots where p.pid > 0 { p.killHard() }
        server.killHard()
        _ = sh("\(tmux) kill-server")
    }

    func sampleRSS() {
        let at = wall
        for p in [server!] + bots + tuis where p.pid > 0 { p.rss.append((at, p.rssMB)) }
    }
}

func soakBench(_ settings: SoakSettings) -> Int32 {
    say("== soak: \(settings.bots) bots and \(settings.tuis) TUIs behind one address on a TLS server with --data, \(settings.minutes.formatted()) min of chaos (seed \(settings.seed)), then \(Int(settings.quiet)) s quiet")
    guard let binary = releaseBinary() else { return 1 }
    for tool in ["openssl", "curl"] + (settings.tuis > 0 ? ["tmux"] : []) where sh("command -v \(tool)").isEmpty {
        say("skipped: \(tool) is not installed")
        return 1
    }
    let run = SoakRun(settings: settings, binary: binary)
    try? FileManager.default.removeItem(atPath: run.dir)
    try? FileManager.default.createDirectory(atPath: run.dir, withIntermediateDirectories: true)
    guard run.makeCertificates() else { say("skipped: openssl could not make the certificates"); return 1 }
    run.server = SoakProcess(.server, "server", clock: { [run] in run.wall }) { [run] in run.startServer($0) }
    guard run.server.launch(), !run.token.isEmpty else { say("the server did not start: \(run.dir)/server/out-1.log"); return 1 }
    run.takeAnchor()
    run.proxy = FaultProxy(target: run.port)
    run.bots = (1...max(1, settings.bots)).prefix(settings.bots).map { i in SoakProcess(.bot, "bot\(i)", clock: { [run] in run.wall }) { [run] in run.startBot(i, $0) } }
    run.tuis = (1...max(1, settings.tuis)).prefix(settings.tuis).map { i in SoakProcess(.tui, "tui\(i)", clock: { [run] in run.wall }) { [run] in run.startTUI(i, $0) } }
    for p in run.bots + run.tuis {
        guard let port = run.proxy.listen(for: p.name) else {
            say("the proxy could not listen for \(p.name)")
            run.proxy.shutdown()
            return 1
        }
        run.proxyPorts[p.name] = port
    }
    for p in run.bots + run.tuis { p.launch() }
    defer { run.stopAll() }
    var nemesis = SoakNemesis(seed: settings.seed, run: run)
    let chaosEnds = settings.minutes * 60
    var nextSample = 0.0
    while run.wall < chaosEnds {
        if run.wall >= nextSample {
            run.sampleRSS()
            nextSample += 5
        }
        nemesis.step()
        usleep(100_000)
    }
    say(String(format: "chaos over after %.0f s: %d faults; healing", run.wall, nemesis.faults.count))
    nemesis.healAll()
    let quietStart = run.worldNow()
    let quietEnds = run.wall + settings.quiet
    while run.wall < quietEnds {
        if run.wall >= nextSample {
            run.sampleRSS()
            nextSample += 5
        }
        nemesis.writeAsTUIs(quiet: true)
        usleep(200_000)
    }
    var checker = SoakChecker(run: run, faults: nemesis.faults, quietStartWorld: quietStart)
    let verdict = checker.finish()
    return settings.check && !verdict ? 1 : 0
}

/// A CA (`ca.pem`) and a server certificate for 127.0.0.1 and localhost signed by it
/// (`server.pem`, `server.key`) in `tls`, by the docs' recipe (docs/server.md, TLS).
func makeTestCertificates(in tls: String) -> Bool {
    try? FileManager.default.createDirectory(atPath: tls, withIntermediateDirectories: true)
    let recipe = """
        cd '\(tls)' && \
        openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 30 -subj "/CN=soak CA" \
          -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" && \
        openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=localhost" && \
        printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\nbasicConstraints=CA:FALSE\\nkeyUsage=critical,digitalSignature,keyEncipherment\\nextendedKeyUsage=serverAuth\\n' > ext.cnf && \
        openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 30 -extfile ext.cnf
        """
    let r = try? ChildProcess.run(["/bin/sh", "-c", recipe], captureOutput: true, captureErrors: true)
    return r?.status == 0
}
