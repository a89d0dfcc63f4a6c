import Foundation

// `synchat-bench idle`: the release TUI left alone in tmux for 60 s, its CPU time read from
// /proc (user + system). At speed 1 and at the default speed 10, --ephemeral.
func idleBench() {
    say("== idle: the release TUI in tmux, untouched for 60 s, --ephemeral")
    guard let binary = releaseBinary() else { return }
    guard !sh("command -v tmux").isEmpty else { say("skipped: tmux is not installed"); return }
    let tmux = "tmux -L synchat-bench-idle-\(getpid())"
    defer { _ = sh("\(tmux) kill-server") }
    for speed in ["1", "10"] {
        _ = sh("\(tmux) new-session -d -s idle -x 120 -y 36 'env TERM=xterm-256color \(binary) --ephemeral --speed \(speed)'")
        sleep(5)  // launched and settled
        let shell = sh("\(tmux) display-message -p -t idle '#{pane_pid}'")
        let pid = sh("pgrep -P \(shell) | head -1").isEmpty ? shell : sh("pgrep -P \(shell) | head -1")
        guard let t0 = ProcessCPU(pid: pid) else { say("skipped: no process"); return }
        sleep(60)
        guard let used = ProcessCPU(pid: pid)?.seconds(since: t0) else { say("skipped: the process ended"); return }
        row("CPU over 60 s idle, speed \(speed)", String(format: "%.3f %%", used.seconds / 60 * 100),
            String(format: "%.1f ms by ", used.seconds * 1000) + used.how + (speed == "1" ? "; goal ≤ 0.1 %" : ""))
        _ = sh("\(tmux) kill-session -t idle")
    }
}
