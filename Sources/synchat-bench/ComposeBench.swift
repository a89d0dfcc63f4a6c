import ChatUI
import Foundation
import SyncCore
import SyncEngine

// `synchat-bench compose`: what a key costs in a long compose line. A typed key is reduced
// and a frame rendered, so that is what is timed here, key by key (the terminal's diff and
// write of the few changed cells come on top and do not depend on the line). A paste is
// reduced key by key with a frame per 2048 keys, as the TUI takes it.

/// A screen with one conversation open and the compose line focused.
func composeState() -> ViewState {
    var s = ViewState()
    let alice = Address("kaspa:qalice")
    _ = ViewModel.reduce(&s, .conversations([ConversationRow(address: alice, name: "Alice", unread: 0, muted: false, lastActivity: nil)]))
    _ = ViewModel.reduce(&s, .history(alice, []))
    _ = ViewModel.reduce(&s, .key(.enter))
    var st = EngineStatus()
    st.lifecycle = .foreground
    _ = ViewModel.reduce(&s, .engineStatus(st))
    return s
}

/// Milliseconds per key (reduce + render 100x30) for each of `keys`.
func timeKeys(_ s: inout ViewState, _ keys: [Key]) -> [Double] {
    var times: [Double] = []
    times.reserveCapacity(keys.count)
    for key in keys {
        let t0 = now()
        _ = ViewModel.reduce(&s, .key(key))
        let g = Render.screen(s, width: 100, height: 30)
        times.append(Double(now() - t0) / 1e6)
        precondition(g.width == 100)
    }
    return times
}

func composeBench() {
    say("== compose line: a key (reduce + render 100x30) in a long line; the limit is \(MessageLimits.maxBodyBytes) bytes")
    var s = composeState()
    let typed = timeKeys(&s, Array(repeating: .char("a"), count: 15_000))
    row("typing at the end, chars 0–1 000, median", fmt(percentile(Array(typed.prefix(1_000)), 0.5)))
    row("typing at the end, chars 14 000–15 000, median", fmt(percentile(Array(typed.suffix(1_000)), 0.5)), "goal: same as 0–1 000")
    _ = ViewModel.reduce(&s, .key(.home))
    let front = timeKeys(&s, Array(repeating: .char("b"), count: 1_000))
    row("typing at the start of a 15 000-char line, median", fmt(percentile(front, 0.5)))
    row("typing at the start, max", fmt(front.max()!))
    // A line of combining marks typed one by one: each is a character of width 0.
    var marks = composeState()
    let zero = timeKeys(&marks, Array(repeating: .char("\u{301}"), count: 8_000))
    row("combining marks (U+0301), chars 0–1 000, median", fmt(percentile(Array(zero.prefix(1_000)), 0.5)))
    row("combining marks (U+0301), chars 7 000–8 000, median", fmt(percentile(Array(zero.suffix(1_000)), 0.5)), "goal: same as 0–1 000")
    // A paste as the TUI takes it: every key reduced, one frame per 2048 keys.
    var paste = composeState()
    let t0 = now()
    for i in 0..<100_000 {
        _ = ViewModel.reduce(&paste, .key(.char("c")))
        if i % 2048 == 2047 { _ = Render.screen(paste, width: 100, height: 30) }
    }
    _ = Render.screen(paste, width: 100, height: 30)
    row("pasting 100 000 chars (a frame per 2048 keys), wall", String(format: "%.3f s", Double(now() - t0) / 1e9))
    row("  chars in the line after the paste", "\(paste.compose.string.count)")
    composePasteBench()
}

/// CPU seconds (user + system) a process has used so far, from /proc.
func cpuSeconds(_ pid: pid_t) -> Double {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return 0 }
    // After the command's name: state is field 3, utime and stime are fields 14 and 15.
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// The release TUI in tmux: 100 000 characters pasted into the compose line, 5 000 at a
/// time; the CPU it took, and what the line says afterwards.
func composePasteBench() {
    say("== compose line: the release TUI in tmux, 100 000 chars pasted (20 pastes of 5 000)")
    guard let binary = releaseBinary() else { return }
    guard !sh("command -v tmux").isEmpty else { say("skipped: tmux is not installed"); return }
    let tmux = "tmux -L synchat-bench-paste-\(getpid())"
    _ = sh("\(tmux) new-session -d -s paste -x 100 -y 30 'env TERM=xterm-256color \(binary) --ephemeral --seed 1 --speed 1'")
    defer { _ = sh("\(tmux) kill-session -t paste; \(tmux) kill-server") }
    func screen() -> String { sh("\(tmux) capture-pane -p -t paste", raw: true) }
    let deadline = now() + 30_000_000_000
    while now() < deadline, !screen().contains(" foreground │") { usleep(50_000) }
    guard let pid = pid_t(sh("\(tmux) display-message -p -t paste '#{pane_pid}'")) else { say("skipped: no pane pid"); return }
    _ = sh("\(tmux) send-keys -t paste Enter")
    /// Waits until the app has been idle for half a second: everything sent is handled.
    func settled() -> Double {
        var last = cpuSeconds(pid)
        while true {
            usleep(500_000)
            let cpu = cpuSeconds(pid)
            if cpu == last { return cpu }
            last = cpu
        }
    }
    let idleStart = settled()
    let idleWall = now()
    sleep(2)
    let idlePerSecond = (cpuSeconds(pid) - idleStart) / (Double(now() - idleWall) / 1e9)
    let chunk = String(repeating: "p", count: 5_000)
    let start = settled()
    let wall = now()
    for _ in 0..<20 {
        _ = sh("\(tmux) send-keys -t paste -l \(chunk)")
        _ = settled()
    }
    let busy = cpuSeconds(pid) - start
    let idle = idlePerSecond * Double(now() - wall) / 1e9
    row("CPU for the 100 000 keys", String(format: "%.2f s", busy), String(format: "of which about %.2f s idle wake-ups", idle))
    row("CPU per key, idle wake-ups taken out", String(format: "%.4f ms", max(0, busy - idle) / 100_000 * 1000))
    let said = screen().contains("message limit: 16 KiB") ? "the limit notice" : "no limit notice"
    row("the compose line afterwards", said)
}
