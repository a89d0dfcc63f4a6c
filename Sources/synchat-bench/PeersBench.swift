import Foundation

// `synchat-bench peers [--idle SECONDS]`: synchat beside WeeChat (when installed), in one
// run, each the same way: a 120×36 tmux pane, all on one tmux server (the keys go to each in
// turn, and all idle together); the time from launch to the first screen; key
// echo (a letter typed on the input line until tmux reports the program's output holding
// it, through a control-mode client: median and 90th percentile of 60); resident
// memory after start; CPU over an idle stretch, read from /proc. With ratios to WeeChat.
// synchat runs --ephemeral, and with the 1 000 000-message profile `firstframe` builds.

struct PeerFigures {
    var name: String
    var firstFrame: Double?
    var echo: Double?
    var echoP90: Double?
    var rssMB: Double?
    var idleCPU: Double?
}

func peersBench(idleSeconds: Int) {
    say("== peers: synchat beside WeeChat in one run (120x36 tmux panes; echo keys to each in turn, idle together)")
    guard let binary = releaseBinary() else { return }
    guard !sh("command -v tmux").isEmpty else { say("skipped: tmux is not installed"); return }
    var programs: [(name: String, command: String, ready: (String) -> Bool, typeAt: String?)] = [
        ("synchat --ephemeral", "env TERM=xterm-256color \(binary) --ephemeral --speed 1 --no-mouse",
         { $0.contains("Conversations") && $0.contains(" foreground │") }, "Enter"),
    ]
    let big = NSTemporaryDirectory() + "synchat-bench-firstframe-1000000"
    if FileManager.default.fileExists(atPath: big + "/synchat/big.sqlite") {
        programs.append(("synchat, 1M-message profile", "env TERM=xterm-256color XDG_DATA_HOME=\(big) \(binary) --profile big --speed 1 --no-mouse",
                         { $0.contains("Conversations") && $0.contains(" foreground │") }, "Enter"))
    } else {
        say("(no 1M-message profile: run `synchat-bench firstframe` once to build it)")
    }
    let weechat = sh("command -v weechat")
    let weechatHome = NSTemporaryDirectory() + "synchat-bench-weechat"
    if !weechat.isEmpty {
        try? FileManager.default.createDirectory(atPath: weechatHome, withIntermediateDirectories: true)
        programs.append(("WeeChat \(sh("weechat --version"))", "env TERM=xterm-256color \(weechat) --dir \(weechatHome)",
                         { $0.contains("[core]") }, nil))
    } else {
        say("(WeeChat is not installed: apt-get install weechat-curses; synchat alone below)")
    }
    // Each program is launched alone (first frame, resident memory), in a session of its own
    // on one tmux server; then the keys go to each in turn, so that whatever else the machine
    // does falls on all of them alike (one after the other, the medians moved by 0.1 ms
    // between programs as the machine's state drifted); then all idle together.
    let tmux = "tmux -L synchat-bench-peers-\(getpid())"
    defer { _ = sh("\(tmux) kill-server") }
    func screen(_ target: String) -> String { sh("\(tmux) capture-pane -p -t \(target)", raw: true) }
    func until(_ seconds: Double, _ condition: () -> Bool) -> Double? {
        let start = now()
        while Double(now() - start) / 1e9 < seconds {
            if condition() { return Double(now() - start) / 1e6 }
            usleep(500)
        }
        return nil
    }
    var results: [PeerFigures] = []
    var running: [(index: Int, target: String, pid: String, typeAt: String?)] = []
    for p in programs {
        let target = "p\(results.count)"
        var f = PeerFigures(name: p.name)
        let t0 = now()
        _ = sh("\(tmux) new-session -d -s \(target) -x 120 -y 36 '\(p.command)'")
        guard until(60, { p.ready(screen(target)) }) != nil else { say("\(p.name): no first screen in 60 s"); continue }
        f.firstFrame = Double(now() - t0) / 1e6
        sleep(2)
        let shell = sh("\(tmux) display-message -p -t \(target) '#{pane_pid}'")
        let child = sh("pgrep -P \(shell) | head -1")
        let pid = child.isEmpty ? shell : child
        if let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
           let kb = Double(line.split(separator: " ").dropFirst().first ?? "") {
            f.rssMB = kb / 1024
        }
        running.append((results.count, target, pid, p.typeAt))
        results.append(f)
    }
    // Key echo: to the input line (synchat: open the first conversation first). Letters no
    // escape sequence ends with (m, h, l, H, K, J… do), so that the first output holding one
    // is its echo; 60 keys to each program, in turn, 10 ms apart, through tmux's control mode.
    for r in running { if let open = r.typeAt { _ = sh("\(tmux) send-keys -t \(r.target) \(open)") } }
    usleep(500_000)
    let letters = Array(String(repeating: "zxwvyqopnkjigfe", count: 4))
    let probes = running.map { EchoProbe(socket: "synchat-bench-peers-\(getpid())", target: $0.target) }
    var echoes = Array(repeating: [Double](), count: running.count)
    for c in letters {
        for (i, r) in running.enumerated() {
            if let t = probes[i]?.echo(c, target: r.target) { echoes[i].append(t) }
            usleep(10_000)
        }
    }
    for (i, r) in running.enumerated() where !echoes[i].isEmpty {
        results[r.index].echo = percentile(echoes[i], 0.5)
        results[r.index].echoP90 = percentile(echoes[i], 0.9)
    }
    for r in running {
        for _ in letters { _ = sh("\(tmux) send-keys -t \(r.target) BSpace") }
        if r.typeAt != nil { _ = sh("\(tmux) send-keys -t \(r.target) Escape") }
    }
    sleep(3)
    let before = running.map { ProcessCPU(pid: $0.pid) }
    sleep(UInt32(idleSeconds))
    for (i, r) in running.enumerated() {
        if let c0 = before[i], let used = ProcessCPU(pid: r.pid)?.seconds(since: c0) {
            results[r.index].idleCPU = used.seconds / Double(idleSeconds) * 100
        }
    }
    // synchat quits with q, so that its store is closed cleanly: a killed one is read through
    // at the next start (the `firstframe` profile, reused below and next time).
    for r in running where r.typeAt != nil {
        _ = sh("\(tmux) send-keys -t \(r.target) q")
        _ = until(10) { !screen(r.target).contains("Conversations") }
    }
    usleep(300_000)
    let peer = results.first { $0.name.hasPrefix("WeeChat") }
    say("program".padding(toLength: 34, withPad: " ", startingAt: 0) + "first frame".leftPad(14) + "key echo".leftPad(16)
        + "echo p90".leftPad(16) + "RSS".leftPad(10) + "idle CPU (\(idleSeconds) s)".leftPad(18))
    for r in results {
        func cell(_ v: Double?, _ unit: String, _ format: String, _ peerValue: Double?) -> String {
            guard let v else { return "—" }
            var text = String(format: format, v) + unit
            if let peerValue, peerValue > 0, !r.name.hasPrefix("WeeChat") { text += String(format: " (×%.2f)", v / peerValue) }
            return text
        }
        say(r.name.padding(toLength: 34, withPad: " ", startingAt: 0)
            + cell(r.firstFrame, " ms", "%.0f", peer?.firstFrame).leftPad(14) + cell(r.echo, " ms", "%.2f", peer?.echo).leftPad(16)
            + cell(r.echoP90, " ms", "%.2f", peer?.echoP90).leftPad(16)
            + cell(r.rssMB, " MB", "%.1f", peer?.rssMB).leftPad(10) + cell(r.idleCPU, " %", "%.3f", peer?.idleCPU).leftPad(18))
    }
    say("(×N: synchat's figure over WeeChat's from this run; key echo includes tmux's own round trip)")
}
