import Foundation

// `synchat-bench storm`: the resize-storm figures of docs/reliability.md. The
// release TUI runs in a private tmux server on a busy world while the window is resized 200
// times between 20x5 and 300x100; then it must still run, have kept receiving, and draw the
// right screen at 100x30. The end-to-end test does the same with the debug build and fails;
// this prints the figures.

func stormBench() {
    say("== resize storm: the release TUI in tmux, 200 resizes between 20x5 and 300x100 while messages arrive")
    guard let binary = releaseBinary() else { return }
    guard !sh("command -v tmux").isEmpty else { say("skipped: tmux is not installed"); return }
    let dir = NSTemporaryDirectory() + "synchat-bench-storm-\(getpid())"
    try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    // About 30 messages a second at x60.
    try? "duration 2h\ncontacts 8\ntraffic 1800/h\nmode remote-push\n".write(toFile: dir + "/busy.scenario", atomically: true, encoding: .utf8)
    let tmux = "tmux -L synchat-bench-storm-\(getpid())"
    _ = sh("\(tmux) new-session -d -s storm -x 100 -y 30 'env TERM=xterm-256color \(binary) --ephemeral --seed 3 --speed 60 --scenario \(dir)/busy.scenario --log \(dir)/events.log'")
    // Name the session: tmux 3.3a's bare kill-session / kill-server can leave the server running.
    defer { _ = sh("\(tmux) kill-session -t storm; \(tmux) kill-server") }
    func screen() -> String { sh("\(tmux) capture-pane -p -t storm", raw: true) }
    func until(_ seconds: Double, _ condition: (String) -> Bool) -> Double? {
        let start = now()
        while Double(now() - start) / 1e9 < seconds {
            if condition(screen()) { return Double(now() - start) / 1e6 }
            usleep(20_000)
        }
        return nil
    }
    guard until(30, { $0.contains("Conversations") }) != nil else { say("skipped: the TUI did not start"); return }
    guard let pid = pid_t(sh("\(tmux) display-message -p -t storm '#{pane_pid}'")) else { say("skipped: no pane pid"); return }
    func stored() -> Int {
        ((try? String(contentsOfFile: dir + "/events.log", encoding: .utf8)) ?? "").components(separatedBy: "\n").filter { $0.contains(") via ") }.count
    }
    var sizes: [(Int, Int)] = [(20, 5), (300, 100), (59, 16), (60, 15), (60, 16), (21, 100), (300, 5)]
    var state: UInt64 = 0x5EED
    while sizes.count < 200 {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        sizes.append((20 + Int((state >> 33) % 281), 5 + Int((state >> 17) % 96)))
    }
    let before = stored()
    let start = now()
    for (w, h) in sizes {
        _ = sh("\(tmux) resize-window -t storm -x \(w) -y \(h)")
        usleep(20_000)  // a frame or so at each size
    }
    let took = Double(now() - start) / 1e9
    let alive = kill(pid, 0) == 0
    let during = stored() - before
    _ = sh("\(tmux) resize-window -t storm -x 20 -y 5")
    let tooSmall = until(10) { $0.contains("terminal too small") }
    _ = sh("\(tmux) resize-window -t storm -x 100 -y 30")
    let redrawn = until(10) { s in
        let lines = s.split(separator: "\n", omittingEmptySubsequences: false).dropLast(s.hasSuffix("\n") ? 1 : 0)
        return lines.count == 30 && lines.first?.hasSuffix("? help") == true && lines.first?.count == 99
            && lines.allSatisfy { $0.count <= 100 } && s.contains(" foreground │") && s.contains("sync log")
    }
    let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    let peak = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }.flatMap { $0.split(separator: " ").compactMap { Double($0) }.first } ?? 0
    row("resizes, wall time", String(format: "200 in %.1f s", took))
    row("messages stored during the storm", "\(during)", "goal > 0: it kept receiving")
    row("synchat still running (after the storm, after the redraws)", alive && kill(pid, 0) == 0 ? "yes" : "NO", "goal yes")
    row("20x5 afterwards: the 'too small' line", tooSmall.map { String(format: "shown in %.0f ms", $0) } ?? "NOT shown")
    row("100x30 afterwards: the full layout", redrawn.map { String(format: "right in %.0f ms", $0) } ?? "NOT right", "goal: right")
    row("peak resident memory (VmHWM)", String(format: "%.1f MB", peak / 1024))
}
