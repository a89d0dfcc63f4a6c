import Foundation

// `synchat-bench firstframe [--messages N]`: the release TUI opening a profile of N messages
// (1 000 000 by default, over 200 conversations) in tmux: the time from the start of the
// process to the first screen, warm (the file in the page cache) and cold (the cache
// dropped, when this machine lets us). The profile is built once, by the app itself
// (`--history`), and reused.
func firstFrameBench(messages: Int) {
    say("== first frame: the release TUI opening a profile of \(messages) messages in tmux")
    guard let binary = releaseBinary() else { return }
    guard !sh("command -v tmux").isEmpty else { say("skipped: tmux is not installed"); return }
    let data = NSTemporaryDirectory() + "synchat-bench-firstframe-\(messages)"
    let tmux = "tmux -L synchat-bench-ff-\(getpid())"
    defer { _ = sh("\(tmux) kill-server") }
    func screen() -> String { sh("\(tmux) capture-pane -p -t ff", raw: true) }
    func launch(_ args: String) { _ = sh("\(tmux) new-session -d -s ff -x 120 -y 36 'env TERM=xterm-256color XDG_DATA_HOME=\(data) \(binary) \(args)'") }
    func until(_ seconds: Double, _ condition: (String) -> Bool) -> Double? {
        let start = now()
        while Double(now() - start) / 1e9 < seconds {
            if condition(screen()) { return Double(now() - start) / 1e6 }
            usleep(2_000)
        }
        return nil
    }
    func quit() {
        _ = sh("\(tmux) send-keys -t ff q")
        _ = until(60) { !$0.contains("Conversations") }
        _ = sh("\(tmux) kill-session -t ff")
    }
    let store = data + "/synchat/big.sqlite"
    if !FileManager.default.fileExists(atPath: store) {
        let t0 = now()
        launch("--profile big --speed 1 --history \(messages)")
        guard until(1800, { $0.contains("Conversations") }) != nil else { say("skipped: the profile was not built"); return }
        quit()
        row("build the profile (once)", String(format: "%.0f s", Double(now() - t0) / 1e9))
    }
    let size = (try? FileManager.default.attributesOfItem(atPath: store)[.size] as? Int) ?? 0
    row("profile size", String(format: "%.0f MB", Double(size) / 1e6))
    func measure(cold: Bool) -> [Double] {
        var times: [Double] = []
        for _ in 0..<5 {
            if cold { _ = sh("sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null") }
            let t0 = now()
            launch("--profile big --speed 1")
            guard until(60, { $0.contains("Conversations") && $0.contains(" foreground │") }) != nil else { continue }
            times.append(Double(now() - t0) / 1e6)
            quit()
        }
        return times
    }
    let warm = measure(cold: false)
    if !warm.isEmpty { row("first frame, warm, median of \(warm.count)", fmt(percentile(warm, 0.5))) }
    let canDrop = sh("test -w /proc/sys/vm/drop_caches && echo yes") == "yes"
    if canDrop {
        let cold = measure(cold: true)
        if !cold.isEmpty { row("first frame, cold, median of \(cold.count)", fmt(percentile(cold, 0.5))) }
    } else {
        row("first frame, cold", "skipped: cannot drop the page cache here")
    }
}
