import Foundation
import Spawn

/// `team`'s settings: `--bots N`, `--seconds S` (how long each bot runs), `--speed X` (the
/// server's; 1 by default, as the server's own default).
struct TeamSettings {
    var bots = 50, seconds = 20, speed = 1.0
}

func teamArguments(_ rest: [String]) -> TeamSettings {
    var team = TeamSettings()
    let n = positiveFlags(rest, ["--bots", "--seconds", "--speed"], of: "team")
    team.bots = n["--bots"].map(Int.init) ?? team.bots
    team.seconds = n["--seconds"].map(Int.init) ?? team.seconds
    team.speed = n["--speed"] ?? team.speed
    return team
}

/// A section's `--flag N` pairs, each among `names` and each a number more than 0; anything
/// else is one usage line.
func positiveFlags(_ rest: [String], _ names: [String], of section: String) -> [String: Double] {
    var values: [String: Double] = [:]
    var i = 0
    while i < rest.count {
        guard names.contains(rest[i]), i + 1 < rest.count, let n = Double(rest[i + 1]), n > 0, n.isFinite, n < 1e9 else {
            usage("\(section) takes \(names.map { "\($0) N" }.joined(separator: ", ")) (each more than 0), not \(rest[i...].joined(separator: " "))")
        }
        values[rest[i]] = n
        i += 2
    }
    return values
}

/// `synchat-bench team`: a team behind one address. The release `synchat server` with its
/// default limits, `bots` × `synchat bot` (the default six contacts each) and one TUI in tmux,
/// all on 127.0.0.1 and all started at once: every bot's first catch-up and its failed
/// requests, the time each took, and how long the TUI's bar took to leave `catch-up never`.
func teamBench(bots: Int, seconds: Int, speed: Double) {
    say("== team: \(bots) bots and a TUI behind one address, started at once (server defaults, speed x\(Int(speed)))")
    guard let binary = releaseBinary() else { return }
    guard let server = BenchServer.start(binary, ["--speed", "\(speed)", "--open"]) else { return }
    defer { server.stop() }
    let dir = NSTemporaryDirectory() + "synchat-bench-team-\(getpid())"
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    let url = "http://127.0.0.1:\(server.port)"
    let tmux = "tmux -L synchat-bench-team-\(getpid())"
    let hasTmux = !sh("command -v tmux").isEmpty
    let t0 = now()
    var pids: [pid_t] = []
    for i in 1...bots {
        if let pid = try? ChildProcess.start(["/usr/bin/env", "XDG_DATA_HOME=\(dir)/b\(i)", binary, "bot", "--server", url, "--user", "member\(i)",
                                              "--events", "--for", "\(seconds)"], output: "\(dir)/bot\(i).out") {
            pids.append(pid)
        }
    }
    var tuiSeconds: Double?
    if hasTmux {
        _ = sh("\(tmux) new-session -d -s tui -x 120 -y 30 'env TERM=xterm-256color XDG_DATA_HOME=\(dir)/tui \(binary) --server \(url) --user teammate --ephemeral'")
        let deadline = now() + 30_000_000_000
        while now() < deadline {
            let screen = sh("\(tmux) capture-pane -p -t tui", raw: true)
            if screen.contains(" catch-up "), !screen.contains("catch-up never") {
                tuiSeconds = Double(now() - t0) / 1e9
                break
            }
            usleep(50_000)
        }
        _ = sh("\(tmux) kill-server")
    }
    for pid in pids { _ = ChildProcess.wait(pid) }
    var firsts: [String] = [], failedFirsts = 0, failedLater = 0, errors: [String: Int] = [:]
    for i in 1...bots {
        let out = (try? String(contentsOfFile: "\(dir)/bot\(i).out", encoding: .utf8)) ?? ""
        let finished = out.split(separator: "\n").filter { $0.contains("catch-up finished") }
        if let first = finished.first {
            firsts.append(String(first))
            if first.contains("failed") { failedFirsts += 1 }
        }
        failedLater += finished.dropFirst().filter { $0.contains("failed") }.count
        for line in out.split(separator: "\n") where line.contains(" error (") {
            let words = line.split(separator: " ", maxSplits: 2).last.map(String.init) ?? ""
            errors[String(words.prefix(100)), default: 0] += 1
        }
    }
    // The world's seconds a first catch-up took, as its line says (`…, 9.2s`).
    let took = firsts.compactMap { line -> Double? in
        guard let m = line.firstMatch(of: /requests, ([0-9.]+)(ms|s|m)/), let v = Double(m.1) else { return nil }
        return m.2 == "ms" ? v / 1000 : m.2 == "m" ? v * 60 : v
    }
    row("bots whose first catch-up finished", "\(firsts.count) of \(bots)", "goal: all")
    row("first catch-ups with a failed request", "\(failedFirsts)", "goal 0")
    row("later catch-ups with a failed request", "\(failedLater)", "goal 0")
    if !took.isEmpty {
        row("a first catch-up, world time: median / max", String(format: "%.1f / %.1f s", percentile(took, 0.5), took.max()!),
            String(format: "wall: %.2f / %.2f s", percentile(took, 0.5) / speed, took.max()! / speed))
    }
    row("the TUI's bar leaves `catch-up never` after", tuiSeconds.map { String(format: "%.1f s", $0) } ?? (hasTmux ? "not in 30 s" : "no tmux"), "goal ≤ 10 s")
    for (words, n) in errors.sorted(by: { $0.value > $1.value }).prefix(5) { say("  \(n)× \(words)") }
}
