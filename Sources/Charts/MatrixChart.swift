import Foundation
import RunReports
import Simulation

/// The fault matrix as a heatmap (`simulate --matrix --chart FILE.svg`), made to be shown on a
/// slide: landscape (at least 4:3: the cells flow into side-by-side blocks), one measure (the
/// p95 delivery latency) written in each cell and coloured by the bin of a labelled key, and
/// under the chart one caption line for each cell where adaptive is red while naive is not,
/// saying why. A cell where anything was lost or shown twice gets a black border.
public enum MatrixChart {
    /// A bin of the key: p95 latencies below `upTo` seconds (the last bin has no bound).
    public struct Bin: Sendable, Equatable {
        public var upTo: Double?
        public var label: String
        public var fill: String
        /// The colour of the number written on it (white where black would not read).
        public var ink: String
    }

    /// The key, from the best bin to the worst. The last one is red.
    public static let bins: [Bin] = [
        Bin(upTo: 10, label: "≤ 10 s", fill: "#43a047", ink: "#ffffff"),
        Bin(upTo: 60, label: "10 s – 1 min", fill: "#9ccc65", ink: "#1b1b1b"),
        Bin(upTo: 300, label: "1 – 5 min", fill: "#fff176", ink: "#1b1b1b"),
        Bin(upTo: 900, label: "5 – 15 min", fill: "#ffb74d", ink: "#1b1b1b"),
        Bin(upTo: 3600, label: "15 min – 1 h", fill: "#f4511e", ink: "#ffffff"),
        Bin(upTo: nil, label: "≥ 1 h", fill: "#b71c1c", ink: "#ffffff"),
    ]
    /// A cell that delivered nothing (no p95).
    public static let noValue = Bin(upTo: nil, label: "no message delivered", fill: "#dddddd", ink: "#1b1b1b")

    /// The bin of a p95 (in seconds).
    public static func bin(p95: Double?) -> Bin {
        guard let p95 else { return noValue }
        return bins.first { $0.upTo.map { p95 <= $0 } ?? true }!
    }

    /// Red: the worst bin.
    public static func isRed(_ p95: Double?) -> Bool { bin(p95: p95) == bins.last! }

    /// The p95 as a cell shows it: seconds below 100 with a decimal, whole seconds below an
    /// hour, then hours with a decimal.
    public static func value(_ p95: Double?) -> String {
        guard let p95 else { return "—" }
        if p95 < 100 { return String(format: "%.1f s", p95) }
        if p95 < 3600 { return "\(Int(p95.rounded())) s" }
        return String(format: "%.1f h", p95 / 3600)
    }

    /// A cell's words, short: where the app is, and what is not healthy.
    public static func words(_ c: MatrixCell) -> String {
        var words: [String]
        switch c.app {
        case .foreground: words = ["fg"]
        case .background: words = ["bg"]
        case .commuting: words = ["comm"]
        case .night: words = ["night"]
        }
        if c.realtime != .up { words.append("realtime \(c.realtime.rawValue)") }
        if c.push != .ok { words.append("push \(c.push.rawValue)") }
        if c.indexer != .up { words.append("indexer \(c.indexer.rawValue)") }
        if c.mode != .remotePush { words.append(c.mode.rawValue) }
        if c.network != .on { words.append("network \(c.network.rawValue)") }
        if words.count == 1 { words.append("all healthy") }
        return words.joined(separator: " · ")
    }

    /// A row's label: the cell's number and its words.
    public static func label(_ index: Int, _ c: MatrixCell) -> String { "\(index)  " + words(c) }

    /// Why adaptive waits an hour and more in a cell where naive does not: the mechanism, in
    /// the words of docs/matrix.md's hot cells.
    public static func reason(_ c: MatrixCell) -> String {
        if c.app == .background || c.app == .night {
            switch (c.mode, c.push) {
            case (.backgroundFetch, _):
                return "a background refresh is a light sync (rule 14: the messages of the 8 most recent conversations), so handshakes and payments wait for the final foreground; naive's refresh is a full sync"
            case (.off, _):
                return "mode off: nothing runs in the background, so everything waits for the final foreground"
            case (_, .drop30):
                return "push delivers 70 % of the traffic, so by its record and its pace it keeps up, and what it lost waits for a look: adaptive counts once an hour of trusting push alone, (h); a policy that does not waits for the morning"
            default:
                break
            }
        }
        if c.realtime == .down, c.push != .ok {
            return "realtime down and push broken: only the tips adaptive checks each minute can show what push lost; naive polls every 10 s"
        }
        if c.network != .on {
            return "what lands while the device is offline waits until it is back; naive's 10 s polls and 60 s refreshes fetch it sooner"
        }
        return "adaptive holds a catch-up that naive runs at once (naive: a full sync at every foreground and subscription restart, polls every 10 s)"
    }

    /// The cells (with their row of each policy) where adaptive is red while naive is not.
    public static func redForAdaptiveOnly(_ rows: [FaultMatrix.Row]) -> [(index: Int, cell: MatrixCell, adaptive: Double?, naive: Double?)] {
        let byCell = Dictionary(grouping: rows, by: \.index)
        return byCell.keys.sorted().compactMap { index in
            let cellRows = byCell[index]!
            guard let a = cellRows.first(where: { $0.policy == "adaptive" }), let n = cellRows.first(where: { $0.policy == "naive" }),
                  isRed(a.summary.latencyP95), !isRed(n.summary.latencyP95) else { return nil }
            return (index, a.cell, a.summary.latencyP95, n.summary.latencyP95)
        }
    }

    // Sizes, in pixels.
    static let margin = 24.0, rowHeight = 18.0, column = 64.0, blockGap = 28.0
    static let labelSize = 11.0, captionSize = 12.0, captionLine = 17.0

    public static func svg(_ rows: [FaultMatrix.Row], title: String) -> String {
        let policies = FaultMatrix.orderedPolicies(rows)
        let byCell = Dictionary(grouping: rows, by: \.index)
        let indices = byCell.keys.sorted()
        let labels = Dictionary(uniqueKeysWithValues: indices.map { ($0, label($0, byCell[$0]![0].cell)) })
        // Each block's label column is as wide as its own longest label.
        func labelWidth(_ cells: ArraySlice<Int>) -> Double { (cells.map { SVGTextWidth.of(labels[$0]!, size: labelSize) }.max() ?? 100) + 10 }
        func blockCells(_ b: Int, _ perBlock: Int) -> ArraySlice<Int> { indices.dropFirst(b * perBlock).prefix(perBlock) }
        let hot = redForAdaptiveOnly(rows)
        let captions = hot.map { "cell \($0.index) (\(words($0.cell))): adaptive \(value($0.adaptive)), naive \(value($0.naive)): \(reason($0.cell))" }
        let keyTop = 66.0, headerTop = 120.0
        // The fewest blocks side by side that make the picture at least 4:3 (and at least two).
        func layout(_ blocks: Int) -> (width: Double, height: Double, perBlock: Int, captionLines: [(text: String, indented: Bool)]) {
            let perBlock = Int((Double(indices.count) / Double(blocks)).rounded(.up))
            let blocksWidth = (0..<blocks).map { labelWidth(blockCells($0, perBlock)) + column * Double(policies.count) }.reduce(0, +)
            let width = max(2 * margin + blocksWidth + Double(blocks - 1) * blockGap, 1000)
            let lines = captions.flatMap { caption in
                wrap(caption, width: width - 2 * margin - 16, size: captionSize).enumerated().map { ($0.element, $0.offset > 0) }
            }
            let gridBottom = headerTop + 22 + rowHeight * Double(perBlock)
            let height = gridBottom + (lines.isEmpty ? 24 : 40 + captionLine * Double(lines.count)) + margin
            return (width, height, perBlock, lines)
        }
        var blocks = 2
        while blocks < 8, case let l = layout(blocks), l.width < l.height * 4 / 3 { blocks += 1 }
        let (width, height, perBlock, captionLines) = layout(blocks)

        var out: [String] = []
        out.append(##"<svg xmlns="http://www.w3.org/2000/svg" width="\##(Int(width))" height="\##(Int(height.rounded(.up)))" viewBox="0 0 \##(Int(width)) \##(Int(height.rounded(.up)))" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="11">"##)
        out.append(##"<rect width="100%" height="100%" fill="white"/>"##)
        out.append(text(margin, 30, title, size: 18, weight: "bold"))
        out.append(text(margin, 52, "p95 delivery latency (the 95th percentile of the time from landing to the app having it), per world and policy", size: 13, fill: "#333333"))
        // The key: a swatch per bin with its label.
        var x = margin
        out.append(text(x, keyTop + 13, "p95", size: 12, weight: "bold"))
        x += 36
        for bin in bins + [noValue] {
            out.append(##"<rect x="\##(f(x))" y="\##(f(keyTop))" width="28" height="18" fill="\##(bin.fill)" stroke="#9e9e9e" stroke-width="0.5"/>"##)
            out.append(text(x + 34, keyTop + 13, bin.label, size: 12))
            x += 34 + SVGTextWidth.of(bin.label, size: 12) + 22
        }
        out.append(##"<rect x="\##(f(x))" y="\##(f(keyTop))" width="28" height="18" fill="white" stroke="black" stroke-width="2"/>"##)
        out.append(text(x + 34, keyTop + 13, "lost or shown twice", size: 12))
        out.append(text(margin, keyTop + 40, "Each block: a world a row (what is not healthy in it), a policy a column.", size: 11, fill: "#555555"))
        var x0 = margin
        for b in 0..<blocks {
            let mine = blockCells(b, perBlock)
            guard !mine.isEmpty else { continue }
            let labelWidth = labelWidth(mine)
            defer { x0 += labelWidth + column * Double(policies.count) + blockGap }
            for (i, p) in policies.enumerated() {
                out.append(text(x0 + labelWidth + column * (Double(i) + 0.5), headerTop + 14, p, size: 12, weight: "bold", anchor: "middle"))
            }
            for (r, index) in mine.enumerated() {
                let y = headerTop + 22 + rowHeight * Double(r)
                out.append(text(x0, y + 13, labels[index]!, size: labelSize))
                for (i, p) in policies.enumerated() {
                    guard let s = byCell[index]!.first(where: { $0.policy == p })?.summary else { continue }
                    let cx = x0 + labelWidth + column * Double(i)
                    let bad = s.messagesLost > 0 || s.duplicates > 0
                    let bin = bin(p95: s.latencyP95)
                    out.append(##"<rect x="\##(f(cx + 1))" y="\##(f(y + 1))" width="\##(f(column - 2))" height="\##(f(rowHeight - 2))" fill="\##(bin.fill)"\##(bad ? #" stroke="black" stroke-width="2""# : "")><title>\##(escape(labels[index]!)), \##(escape(p)): p95 \##(escape(value(s.latencyP95)))</title></rect>"##)
                    out.append(text(cx + column / 2, y + 13, value(s.latencyP95), size: 11, fill: bin.ink, anchor: "middle"))
                }
            }
        }
        if !captionLines.isEmpty {
            let top = headerTop + 22 + rowHeight * Double(perBlock) + 28
            out.append(text(margin, top, "Red for adaptive, not for naive:", size: 13, weight: "bold"))
            for (i, line) in captionLines.enumerated() {
                out.append(text(margin + (line.indented ? 16 : 0), top + captionLine * Double(i + 1), line.text, size: captionSize))
            }
        }
        out.append("</svg>")
        return out.joined(separator: "\n") + "\n"
    }

    /// `line` broken at spaces into lines of at most `width` pixels at `size`.
    static func wrap(_ line: String, width: Double, size: Double) -> [String] {
        var out: [String] = [], current = ""
        for word in line.split(separator: " ") {
            let candidate = current.isEmpty ? String(word) : current + " " + word
            if SVGTextWidth.of(candidate, size: size) > width, !current.isEmpty {
                out.append(current)
                current = String(word)
            } else {
                current = candidate
            }
        }
        return out + [current]
    }

    static func text(_ x: Double, _ y: Double, _ s: String, size: Double, weight: String = "normal", fill: String = "#212121",
                     anchor: String = "start") -> String {
        TimelineChart.text(x, y, s, size: Int(size), weight: weight, fill: fill, anchor: anchor)
    }

    static func escape(_ s: String) -> String { TimelineChart.escape(s) }
    static func f(_ v: Double) -> String { TimelineChart.f(v) }
}
