import SyncCore
import SyncEngine

extension Render {
    /// The status bar, with the literal words of docs/screen.md, in two rows: the state of the
    /// channels first (and what is wrong with the world or the store), then time and
    /// counters. Segments are dropped from the least important (highest `priority`) when a
    /// row is too narrow.
    public static func statusSegments(_ info: StatusInfo) -> (state: [Segment], time: [Segment]) {
        let st = info.engine
        let pushRole: Role
        switch st.push {
        case .reliable: pushRole = .statusPushReliable
        case .unknown: pushRole = .statusPushUnknown
        case .unreliable: pushRole = .statusPushUnreliable
        case .disabled: pushRole = .statusPushDisabled
        }
        let lifecycle = st.lifecycle == .background ? "background" : "foreground"
        var catchUp = st.lastCatchUpAt.map { "catch-up \(rounded(info.clock - $0)) ago" } ?? "catch-up never"
        if let end = st.debounceEndsAt, end > info.clock { catchUp += ", next \(rounded(end - info.clock))" }
        var state: [Segment] = [
            (lifecycle, st.lifecycle == .background ? .statusBackground : .statusLifecycle, 0),
            (st.realtime.rawValue, st.realtime == .live ? .statusRealtimeLive : .statusRealtimeDegraded, 0),
            ("push: \(st.push.rawValue) " + missWords(st.misses, threshold: st.missThreshold), pushRole, 0),
            ("token \(st.token.rawValue)", .statusBar, 3),
        ]
        switch info.link {
        case .reached: break
        case .unreachable: state.append(("server unreachable", .warning, 0))
        case .forgotten: state.append(("server forgot you: join again", .warning, 0))
        }
        if !info.faults.isEmpty { state.append(("fault: " + info.faults.words.joined(separator: ", "), .warning, 1)) }
        // Truth beside belief: while the world has broken what the engine does not believe yet.
        if info.knowsTruth {
            for d in info.truth.disagreements { state.append(("truth: \(d.fault) for \(lasted(info.clock - d.since))", .statusTruth, 0)) }
        }
        if let trouble = st.storeTrouble { state.append(("store: \(trouble), \(st.unsaved) unsaved", .warning, 0)) }
        if st.unsent > 0 { state.append(("\(st.unsent) unsent", .warning, 0)) }
        var time: [Segment] = [
            (catchUp, .statusBar, 1),
            ("req \(st.requests) this launch", .statusBar, 2),  // the engine counts from its start; a relaunch starts again
            (st.mode.rawValue, .statusBar, 4),
            (Clock.full(info.clock) + " x" + speedWord(info.speed), .statusBar, 0),
        ]
        if info.paused { time.append(("paused", .warning, 0)) }
        if let script = info.script { time.append((script, .statusBar, 2)) }
        return (state, time)
    }

    /// `2/3` up to the threshold, then `17 misses`: the count the log gives, never held at 3/3.
    static func missWords(_ misses: Int, threshold: Int) -> String {
        misses <= threshold ? "\(misses)/\(threshold)" : Words.count(misses, "miss", plural: "misses")
    }

    /// `30`, `0.25`: the speed as the status bar and the keys say it.
    static func speedWord(_ speed: Double) -> String {
        speed == speed.rounded() ? String(Int(speed)) : String(speed)
    }

    public typealias Segment = (text: String, role: Role, priority: Int)

    /// The status bar's rows: always two, whatever they say, so that the screen above does
    /// not jump when a fault or a script adds a word. A row too narrow for its
    /// segments drops the least important first; what still does not fit is cut at the edge.
    static let statusRowCount = 2

    static func statusLines(_ st: StatusInfo, width: Int) -> [[Segment]] {
        let (state, time) = statusSegments(st)
        func fits(_ segs: [Segment]) -> Bool { segs.reduce(-2) { $0 + TextWidth.of($1.text) + 3 } <= width }
        func trimmed(_ segs: [Segment]) -> [Segment] {
            var segs = segs
            while !fits(segs), let worst = segs.indices.max(by: { segs[$0].priority < segs[$1].priority }), segs[worst].priority > 0 {
                segs.remove(at: worst)
            }
            return segs
        }
        return [trimmed(state), trimmed(time)]
    }

    static func drawStatusLine(_ g: inout Grid, _ segments: [Segment], y: Int, width: Int) {
        g.fill(x: 0, y: y, width: width, height: 1, role: .statusBar)
        var x = 1
        for (i, seg) in segments.enumerated() {
            if i > 0 { x = g.put(" │ ", x: x, y: y, role: .statusBar, maxX: width) }
            x = g.put(TextWidth.truncate(seg.text, to: max(0, width - x)), x: x, y: y, role: seg.role, maxX: width)
        }
    }

    static func rounded(_ i: Interval) -> String {
        Interval(milliseconds: i.milliseconds / 1000 * 1000).description
    }

    /// How long something has lasted, in whole seconds: `0s`, `1m12s`.
    static func lasted(_ i: Interval) -> String { i.milliseconds < 1000 ? "0s" : rounded(i) }
}
