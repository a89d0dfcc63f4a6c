import ChatUI
import SyncCore

/// Frames over long messages (docs/screen.md#long-messages): 16 KiB of emoji on one line and
/// 16 370 lines, folded (as shown by default) and whole (`z`); a folded message costs the rows
/// it shows, so a frame, and a PgUp, stays cheap whatever is on screen.
func longMessageFrames(_ base: ViewState) {
    var s = base
    guard let open = s.open else { return say("skipped: no conversation open") }
    let emoji = String(repeating: "👩‍👩‍👧‍👦", count: 16_384 / 25)
    let lines = (1...16_370).map { "line \($0)" }.joined(separator: "\n")
    for (i, text) in [emoji, lines].enumerated() {
        _ = ViewModel.reduce(&s, .message(open, MessageRow(txId: "long\(i)", outgoing: false, sender: "Alice", text: text, kind: .contextual,
                                                           blockTime: (s.messages[open]?.last?.blockTime ?? .zero) + .seconds(1), channel: .realtime)))
    }
    s.focus = .messages
    let folded = frameTimes(s)
    row("render 200x60 over 16 KiB of emoji and 16 370 lines, folded, median", fmt(percentile(folded, 0.5)), "goal ≤ 1 ms")
    var whole = s
    _ = ViewModel.reduce(&whole, .key(.char("z")))
    let wholeTimes = (0..<20).map { _ in
        let t0 = now()
        _ = Render.screen(whole, width: 200, height: 60)
        return Double(now() - t0) / 1e6
    }
    row("the same shown whole (z), median of 20", fmt(percentile(wholeTimes, 0.5)))
    var paged = s
    let pageTimes = (0..<200).map { _ in
        let t0 = now()
        _ = ViewModel.reduce(&paged, .key(.pageUp))
        _ = Render.screen(paged, width: 200, height: 60)
        return Double(now() - t0) / 1e6
    }
    row("PgUp and its frame over them, folded, p95", fmt(percentile(pageTimes, 0.95)), "goal ≤ 16 ms")
}
