import Foundation

/// The fault matrix as a heatmap (`simulate --matrix --chart FILE.svg`): a row per cell, a
/// column per policy; the colour is the p95 delivery latency (green at a few seconds, amber
/// at 5 minutes, red at an hour and more, on a log scale), the number written in is the
/// backend requests. A cell where anything was lost or shown twice gets a black border.
public enum MatrixChart {
    public static func svg(_ rows: [FaultMatrix.Row], title: String) -> String {
        let policies = FaultMatrix.orderedPolicies(rows)
        let cells = Dictionary(grouping: rows, by: \.index)
        let indices = cells.keys.sorted()
        let labelWidth = 480.0, column = 100.0, rowHeight = 16.0, top = 58.0
        let width = labelWidth + column * Double(policies.count) + 20
        let height = top + rowHeight * Double(indices.count) + 40
        var out: [String] = []
        out.append(##"<svg xmlns="http://www.w3.org/2000/svg" width="\##(Int(width))" height="\##(Int(height))" viewBox="0 0 \##(Int(width)) \##(Int(height))" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="11">"##)
        out.append(##"<rect width="100%" height="100%" fill="white"/>"##)
        out.append(##"<text x="10" y="18" font-size="14" font-weight="bold">\##(TimelineChart.escape(title))</text>"##)
        out.append(##"<text x="10" y="34" fill="#444">colour: p95 latency (green ≤ 10 s, amber 5 min, red ≥ 1 h); number: backend requests; black border: lost or duplicated</text>"##)
        for (i, p) in policies.enumerated() {
            let x = labelWidth + column * Double(i) + column / 2
            out.append(##"<text x="\##(Int(x))" y="\##(Int(top - 6))" text-anchor="middle" font-weight="bold">\##(TimelineChart.escape(p))</text>"##)
        }
        for (r, index) in indices.enumerated() {
            let y = top + rowHeight * Double(r)
            let cell = cells[index]![0].cell
            let label = "\(index)  \(cell.app.rawValue) · rt \(cell.realtime.rawValue) · push \(cell.push.rawValue) · idx \(cell.indexer.rawValue) · \(cell.mode.rawValue) · net \(cell.network.rawValue)"
            out.append(##"<text x="10" y="\##(Int(y + 12))">\##(TimelineChart.escape(label))</text>"##)
            for (i, p) in policies.enumerated() {
                guard let s = cells[index]!.first(where: { $0.policy == p })?.summary else { continue }
                let x = labelWidth + column * Double(i)
                let bad = s.messagesLost > 0 || s.duplicates > 0
                out.append(##"<rect x="\##(Int(x + 1))" y="\##(Int(y + 1))" width="\##(Int(column - 2))" height="\##(Int(rowHeight - 2))" fill="\##(colour(p95: s.latencyP95))"\##(bad ? #" stroke="black" stroke-width="2""# : "")/>"##)
                out.append(##"<text x="\##(Int(x + column / 2))" y="\##(Int(y + 12))" text-anchor="middle">\##(s.backendRequests)</text>"##)
            }
        }
        out.append("</svg>")
        return out.joined(separator: "\n") + "\n"
    }

    /// Green (≤ 10 s) through amber (300 s) to red (≥ 3600 s), on a log scale of the p95.
    public static func colour(p95: Double?) -> String {
        guard let p95 else { return "#dddddd" }
        let t = max(0, min(1, (log10(max(p95, 1)) - 1) / (log10(3600) - 1)))  // 10 s → 0, 3600 s → 1
        // 0 → (120, 200, 120), 0.56 (300 s) → (240, 190, 80), 1 → (220, 70, 60)
        let stops: [(Double, (Double, Double, Double))] = [(0, (120, 200, 120)), (0.56, (240, 190, 80)), (1, (220, 70, 60))]
        var (lo, hi) = (stops[0], stops[1])
        if t > stops[1].0 { (lo, hi) = (stops[1], stops[2]) }
        let f = (t - lo.0) / (hi.0 - lo.0)
        func mix(_ a: Double, _ b: Double) -> Int { Int((a + (b - a) * f).rounded()) }
        let (r, g, b) = (mix(lo.1.0, hi.1.0), mix(lo.1.1, hi.1.1), mix(lo.1.2, hi.1.2))
        return String(format: "#%02x%02x%02x", r, g, b)
    }
}
