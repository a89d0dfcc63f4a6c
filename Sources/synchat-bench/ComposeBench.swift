import ChatUI
import SyncCore

// `synchat-bench compose`: what a key costs in a long compose line. The TUI reduces each
// key and renders a frame, so that is what is timed here, key by key (the terminal's diff
// and write of the few changed cells come on top and do not depend on the line).

/// A screen with one conversation open and the compose line focused.
func composeState() -> ViewState {
    var s = ViewState()
    let alice = Address("kaspa:qalice")
    _ = ViewModel.reduce(&s, .conversations([ConversationRow(address: alice, name: "Alice", unread: 0, muted: false, lastActivity: nil)]))
    _ = ViewModel.reduce(&s, .history(alice, []))
    _ = ViewModel.reduce(&s, .key(.enter))
    var st = StatusInfo()
    st.lifecycle = .foreground
    _ = ViewModel.reduce(&s, .status(st))
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
    var paste = composeState()
    let t0 = now()
    let pasted = timeKeys(&paste, Array(repeating: .char("c"), count: 100_000))
    row("pasting 100 000 chars, one frame per key, wall", String(format: "%.2f s", Double(now() - t0) / 1e9))
    row("  the last 1 000 keys, median", fmt(percentile(Array(pasted.suffix(1_000)), 0.5)))
}
