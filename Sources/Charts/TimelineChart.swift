import Foundation
import RunReports
import Simulation
import SyncCore

/// `synchat simulate --scenario F --chart FILE.svg`: one panel per policy on
/// one time axis — faults as shaded spans, foreground/background and push state as bands,
/// backend requests per bucket as bars, catch-ups as marks — with a legend. Plain SVG
/// written by hand: a few rectangles, lines and text, no dependency; every text escaped.
public enum TimelineChart {
    static let width = 1200.0
    static let left = 130.0, right = 30.0
    static let panelHeight = 190.0
    static let top = 96.0
    static let buckets = 120

    static let pushColours: [PushState: String] = [.reliable: "#4caf50", .unknown: "#f2c12e", .unreliable: "#e53935", .disabled: "#9e9e9e"]
    static let lifecycleColours: [Lifecycle: String] = [.foreground: "#90caf9", .background: "#455a64", .launched: "#cfd8dc"]

    /// The chart of `runs` (a policy name and its timeline each, on one axis), titled `title`.
    /// What the bars of a panel count: backend requests, or the bytes the backend served.
    public enum Lane: String, Sendable, CaseIterable { case requests, bytes }

    public static func svg(_ runs: [(policy: String, timeline: RunTimeline)], title: String, lane: Lane = .requests) -> String {
        let start = runs.map(\.timeline.start).min() ?? .zero
        let runEnd = max(runs.map(\.timeline.end).max() ?? start, start + .seconds(1))
        let end = drawnEnd(start: start, runEnd: runEnd, lastChange: runs.compactMap(\.timeline.lastActivity).max())
        // A run that goes on long after its last change (a scenario's settle) is drawn to a
        // tenth past that change, not to its end: the axis is spent on what happens. The axis
        // says where the run went on to.
        let runs = runs.map { (policy: $0.policy, timeline: $0.timeline.cut(at: end)) }
        let goesOn = runEnd > end ? runEnd : nil
        let plot = width - left - right
        func x(_ t: Instant) -> Double { left + plot * Double((t - start).milliseconds) / Double((end - start).milliseconds) }
        let height = top + Double(runs.count) * panelHeight + 46
        var out: [String] = []
        out.append(##"<svg xmlns="http://www.w3.org/2000/svg" width="\##(Int(width))" height="\##(Int(height))" viewBox="0 0 \##(Int(width)) \##(Int(height))" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">"##)
        out.append(##"<rect width="100%" height="100%" fill="#ffffff"/>"##)
        out.append(text(left, 26, title, size: 20, weight: "bold"))
        out.append(contentsOf: legend(y: 48, lane: lane))
        // The shared requests scale: the busiest bucket of any policy.
        let bucketed = runs.map { run in
            var t = run.timeline
            t.end = end  // the buckets of the drawn axis, the held tail included (nothing is made there)
            return lane == .bytes ? t.byteBuckets(buckets) : t.requestBuckets(buckets)
        }
        let peak = max(1, bucketed.flatMap { $0 }.max() ?? 1)
        let bucketSpan = Interval(milliseconds: (end - start).milliseconds / Int64(buckets))
        for (i, run) in runs.enumerated() {
            let y0 = top + Double(i) * panelHeight
            out.append(contentsOf: panel(run.policy, run.timeline, bucketed[i], peak: peak, bucketSpan: bucketSpan, y0: y0, x: x, lane: lane,
                                         drawnEnd: end))
        }
        out.append(contentsOf: axis(start: start, end: end, y: top + Double(runs.count) * panelHeight + 4, x: x, goesOn: goesOn))
        out.append("</svg>")
        return out.joined(separator: "\n") + "\n"
    }

    /// Where the time axis ends: the run's end, or later when the run ended so soon after its
    /// last change (a shrunk scenario ends just past the line it keeps) that the state it
    /// ended in would be a sliver at the right edge. At least a tenth of the axis lies after
    /// the last change; past the run's end each band holds the state the run ended in, drawn
    /// paler, behind a dashed line that says where the run ended.
    static func drawnEnd(start: Instant, runEnd: Instant, lastChange: Instant?) -> Instant {
        guard let lastChange, lastChange > start else { return runEnd }
        return start + .milliseconds(Int64((Double((lastChange - start).milliseconds) / 0.9).rounded(.up)))
    }

    /// The opacity of what is drawn past the run's end: the state it ended in, held.
    static let heldOpacity = "0.45"

    // Rows of a panel, from its top.
    static let faultRow = (y: 20.0, h: 24.0)
    static let lifecycleRow = (y: 48.0, h: 12.0)
    static let pushRow = (y: 64.0, h: 12.0)
    /// Belief lag: under the push band, a band where the world broke a channel and the
    /// engine did not believe it yet (`RunTimeline.beliefLag`).
    static let lagRow = (y: 77.0, h: 6.0)
    static let lagColour = "#ff6f00"
    static let marksRow = (y: 86.0, h: 12.0)
    static let barsRow = (y: 106.0, h: 66.0)

    static func panel(_ policy: String, _ t: RunTimeline, _ buckets: [Int], peak: Int, bucketSpan: Interval, y0: Double,
                      x: (Instant) -> Double, lane: Lane = .requests, drawnEnd: Instant? = nil) -> [String] {
        var out: [String] = []
        let axisEnd = max(drawnEnd ?? t.end, t.end)
        out.append(##"<rect x="4" y="\##(f(y0 + 4))" width="\##(f(width - 8))" height="\##(f(panelHeight - 8))" fill="none" stroke="#e0e0e0"/>"##)
        out.append(text(12, y0 + 21, policy, size: 16, weight: "bold"))
        let total = lane == .bytes ? "\(t.totalBytes) backend bytes" : "\(t.totalRequests) backend requests"
        out.append(text(12 + SVGTextWidth.of(policy, size: 16, bold: true) + 10, y0 + 21, total, size: 13, fill: "#555555"))
        for (label, row) in [("faults", faultRow), ("app", lifecycleRow), ("push", pushRow), ("catch-ups", marksRow)] {
            // The faults' label at the foot of its two lanes, clear of the panel's header.
            out.append(text(left - 8, y0 + row.y + (label == "faults" ? row.h - 4 : min(row.h, 12) - 1), label, size: 12, fill: "#555555", anchor: "end"))
        }
        out.append(text(left - 8, y0 + barsRow.y + 12, lane.rawValue, size: 12, fill: "#555555", anchor: "end"))
        out.append(text(left - 8, y0 + barsRow.y + 27, "per \(bucketSpan)", size: 12, fill: "#555555", anchor: "end"))
        // Faults: a shaded span across the whole panel, and a bar with its name in the faults
        // row, on the first of two lanes free at its start (faults at once sit one above the
        // other); a name longer than its room is cut.
        var laneEnds = [-Double.infinity, -Double.infinity]
        var placed: [(x0: Double, x1: Double, lane: Int, label: String, held: Double?)] = []
        for span in t.faults {
            let x0 = x(span.from), x1 = max(x(span.to), x0 + 2)
            // A fault still on when the run ended is held to the axis's end, paler.
            let held = span.to >= t.end && axisEnd > t.end ? x(axisEnd) : nil
            out.append(##"<rect x="\##(f(x0))" y="\##(f(y0 + faultRow.y))" width="\##(f((held ?? x1) - x0))" height="\##(f(barsRow.y + barsRow.h - faultRow.y))" fill="#e53935" fill-opacity="0.07"/>"##)
            let lane = laneEnds.firstIndex { $0 <= x0 } ?? (laneEnds[0] <= laneEnds[1] ? 0 : 1)
            laneEnds[lane] = held ?? x1
            placed.append((x0, x1, lane, span.value, held))
        }
        for p in placed {
            let laneY = y0 + faultRow.y + Double(p.lane) * (faultRow.h / 2)
            out.append(##"<rect x="\##(f(p.x0))" y="\##(f(laneY))" width="\##(f(p.x1 - p.x0))" height="\##(f(faultRow.h / 2 - 1))" fill="#e53935" fill-opacity="0.35"><title>\##(escape(p.label))</title></rect>"##)
            if let held = p.held {
                out.append(##"<rect x="\##(f(p.x1))" y="\##(f(laneY))" width="\##(f(held - p.x1))" height="\##(f(faultRow.h / 2 - 1))" fill="#e53935" fill-opacity="0.16"/>"##)
            }
            // The name stays inside its own bar (a name past the bar's end would read as a
            // longer fault): cut to fit with `…`, or left to the bar's tooltip.
            if let label = fitted(p.label, in: (p.held ?? p.x1) - p.x0 - 4, size: 10) {
                out.append(text(p.x0 + 2, laneY + faultRow.h / 2 - 2, label, size: 10, fill: "#7f0000"))
            }
        }
        for span in t.lifecycle {
            out.append(band(x(span.from), x(span.to), y0 + lifecycleRow.y, lifecycleRow.h, lifecycleColours[span.value] ?? "#cccccc"))
        }
        for span in t.push {
            out.append(band(x(span.from), x(span.to), y0 + pushRow.y, pushRow.h, pushColours[span.value] ?? "#cccccc"))
        }
        if axisEnd > t.end {
            // The state the run ended in, held to the axis's end, paler.
            let last = [(t.lifecycle.last.map { ($0.to, lifecycleColours[$0.value] ?? "#cccccc") }, lifecycleRow),
                        (t.push.last.map { ($0.to, pushColours[$0.value] ?? "#cccccc") }, pushRow)]
            for (span, row) in last {
                guard let (to, fill) = span, to >= t.end else { continue }
                out.append(band(x(t.end), x(axisEnd), y0 + row.y, row.h, fill).replacingOccurrences(of: "/>", with: ##" fill-opacity="\##(heldOpacity)"/>"##))
            }
            if let lag = t.beliefLag.last, lag.to >= t.end {
                out.append(##"<rect x="\##(f(x(t.end)))" y="\##(f(y0 + lagRow.y))" width="\##(f(x(axisEnd) - x(t.end)))" height="\##(f(lagRow.h))" fill="\##(lagColour)" fill-opacity="\##(heldOpacity)"/>"##)
            }
            let xe = x(t.end)
            out.append(##"<line x1="\##(f(xe))" y1="\##(f(y0 + faultRow.y - 4))" x2="\##(f(xe))" y2="\##(f(y0 + barsRow.y + barsRow.h))" stroke="#424242" stroke-dasharray="3 3"/>"##)
            // The note on the side of the line that has room for it.
            let note = "run ends: its last state, held", room = x(axisEnd) - xe
            let right = SVGTextWidth.of(note, size: 12) + 6 <= room
            out.append(text(right ? xe + 3 : xe - 3, y0 + 15, note, size: 12, fill: "#424242", anchor: right ? "start" : "end"))
        }
        for span in t.beliefLag {
            let x0 = x(span.from), x1 = max(x(span.to), x0 + 2)
            out.append(##"<rect x="\##(f(x0))" y="\##(f(y0 + lagRow.y))" width="\##(f(x1 - x0))" height="\##(f(lagRow.h))" fill="\##(lagColour)"><title>belief lag: \##(escape(span.value)) \##(span.to - span.from)</title></rect>"##)
        }
        for (at, mark) in t.marks {
            out.append(markShape(mark, x: x(at), y: y0 + marksRow.y + marksRow.h / 2))
        }
        // Requests per bucket, on the shared scale, with the scale's top.
        let plot = width - left - right
        let w = plot / Double(buckets.count)
        let baseY = y0 + barsRow.y + barsRow.h
        out.append(##"<line x1="\##(f(left))" y1="\##(f(baseY))" x2="\##(f(width - right))" y2="\##(f(baseY))" stroke="#9e9e9e"/>"##)
        out.append(##"<line x1="\##(f(left))" y1="\##(f(baseY - barsRow.h))" x2="\##(f(width - right))" y2="\##(f(baseY - barsRow.h))" stroke="#eeeeee"/>"##)
        // The scale says what its top is, in words.
        out.append(text(left - 8, y0 + barsRow.y + 42, "top line: \(peak)", size: 12, fill: "#555555", anchor: "end"))
        for (i, n) in buckets.enumerated() where n > 0 {
            let h = barsRow.h * Double(n) / Double(peak)
            out.append(##"<rect x="\##(f(left + Double(i) * w + 0.5))" y="\##(f(baseY - h))" width="\##(f(max(1, w - 1)))" height="\##(f(h))" fill="#5c6bc0"/>"##)
        }
        return out
    }

    /// `label` cut to fit `room` pixels of text at `size` (with `…`), or nil when not even
    /// three characters and the ellipsis fit (`SVGTextWidth`: the font's own advances).
    static func fitted(_ label: String, in room: Double, size: Double) -> String? {
        if SVGTextWidth.of(label, size: size) <= room { return label }
        var cut = String(label.prefix(label.count - 1))
        while cut.count >= 3 {
            let candidate = cut.trimmingTrailingSpaces + "…"
            if SVGTextWidth.of(candidate, size: size) <= room { return candidate }
            cut.removeLast()
        }
        return nil
    }

    static func band(_ x0: Double, _ x1: Double, _ y: Double, _ h: Double, _ colour: String) -> String {
        ##"<rect x="\##(f(x0))" y="\##(f(y))" width="\##(f(max(0.5, x1 - x0)))" height="\##(f(h))" fill="\##(colour)"/>"##
    }

    static func markShape(_ mark: RunTimeline.Mark, x: Double, y: Double) -> String {
        switch mark {
        case .full:
            return ##"<circle cx="\##(f(x))" cy="\##(f(y))" r="4" fill="#1a237e"/>"##
        case .targeted:
            return ##"<path d="M\##(f(x)) \##(f(y - 5)) L\##(f(x + 5)) \##(f(y + 4)) L\##(f(x - 5)) \##(f(y + 4)) Z" fill="#00897b"/>"##
        case .light:
            return ##"<rect x="\##(f(x - 3))" y="\##(f(y - 3))" width="6" height="6" fill="#8e24aa"/>"##
        case .skipped:
            return ##"<path d="M\##(f(x - 3.5)) \##(f(y - 3.5)) L\##(f(x + 3.5)) \##(f(y + 3.5)) M\##(f(x + 3.5)) \##(f(y - 3.5)) L\##(f(x - 3.5)) \##(f(y + 3.5))" stroke="#ef6c00" stroke-width="2"/>"##
        }
    }

    static func legend(y: Double, lane: Lane = .requests) -> [String] {
        var out: [String] = []
        var x = left
        func item(_ shape: String, _ label: String) {
            out.append(shape)
            out.append(text(x + 14, y + 5, label, size: 13))
            x += 22 + SVGTextWidth.of(label, size: 13)
        }
        item(markShape(.full, x: x + 4, y: y), "full catch-up")
        item(markShape(.targeted, x: x + 4, y: y), "targeted (proven gap)")
        item(markShape(.light, x: x + 4, y: y), "light (background refresh)")
        item(markShape(.skipped, x: x + 4, y: y), "skipped (debounce)")
        item(band(x, x + 10, y - 5, 10, "#5c6bc0"), "backend \(lane.rawValue)")
        item(band(x, x + 10, y - 5, 10, "#e53935").replacingOccurrences(of: "/>", with: #" fill-opacity="0.35"/>"#), "fault")
        x = left
        let y2 = y + 20
        func swatch(_ colour: String, _ label: String) {
            out.append(band(x, x + 10, y2 - 5, 10, colour))
            out.append(text(x + 14, y2 + 5, label, size: 13))
            x += 22 + SVGTextWidth.of(label, size: 13)
        }
        swatch(lifecycleColours[.foreground]!, "foreground")
        swatch(lifecycleColours[.background]!, "background")
        for state in [PushState.reliable, .unknown, .unreliable, .disabled] { swatch(pushColours[state]!, "push \(state.rawValue)") }
        swatch(lagColour, "belief lag (broken, not yet believed)")
        return out
    }

    /// The time axis: ticks at a round step that gives about ten labels.
    static func axis(start: Instant, end: Instant, y: Double, x: (Instant) -> Double, goesOn: Instant? = nil) -> [String] {
        let total = (end - start).milliseconds
        let steps: [Int64] = [10, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400].map { $0 * 1000 }
        let step = steps.first { total / $0 <= 12 } ?? 86_400_000
        var out = [##"<line x1="\##(f(left))" y1="\##(f(y))" x2="\##(f(width - right))" y2="\##(f(y))" stroke="#616161"/>"##]
        var t: Int64 = 0
        while t <= total {
            let at = start + .milliseconds(t)
            out.append(##"<line x1="\##(f(x(at)))" y1="\##(f(y))" x2="\##(f(x(at)))" y2="\##(f(y + 5))" stroke="#616161"/>"##)
            out.append(text(x(at), y + 19, clock(.milliseconds(t)), size: 13, fill: "#424242", anchor: "middle"))
            t += step
        }
        let said = goesOn.map { "virtual time (h:mm); nothing changes from here to the run's end at \(clock($0 - start))" } ?? "virtual time (h:mm)"
        out.append(text(width - right, y + 36, said, size: 12, fill: "#616161", anchor: "end"))
        return out
    }

    static func clock(_ i: Interval) -> String {
        let minutes = i.milliseconds / 60_000
        let seconds = (i.milliseconds / 1000) % 60
        let h = minutes / 60, m = minutes % 60
        return seconds == 0 ? "\(h):\(m < 10 ? "0" : "")\(m)" : "\(h):\(m < 10 ? "0" : "")\(m):\(seconds < 10 ? "0" : "")\(seconds)"
    }

    static func text(_ x: Double, _ y: Double, _ s: String, size: Int, weight: String = "normal", fill: String = "#212121",
                     anchor: String = "start") -> String {
        ##"<text x="\##(f(x))" y="\##(f(y))" font-size="\##(size)" font-weight="\##(weight)" fill="\##(fill)" text-anchor="\##(anchor)">\##(escape(s))</text>"##
    }

    /// XML text: the five markup characters as entities, and what XML 1.0 cannot hold at all
    /// (C0 controls but tab and newline, lone surrogates cannot occur in a String) as `?`.
    public static func escape(_ s: String) -> String {
        var out = ""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default:
                let v = scalar.value
                if (v < 0x20 && v != 0x09 && v != 0x0A) || v == 0xFFFE || v == 0xFFFF { out += "?" } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out
    }

    static func f(_ v: Double) -> String { String(format: "%.1f", v) }
}

extension String {
    var trimmingTrailingSpaces: String {
        var s = Substring(self)
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}
