import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Charts
import RunReports
import Simulation
import SyncCore
import Testing
import TestSupport

/// The matrix heatmap on a slide: landscape, a key of labelled bins, one measure (named) in
/// each cell, and a caption for each cell where adaptive is red while naive is not. Read from
/// the SVG as XML, on the default grid the tests run once (`FaultGrid`).
@Suite("The fault matrix's heatmap")
struct MatrixChartTests {
    static var rows: [FaultMatrix.Row] { FaultGrid.rows }

    @Test("a cell per cell and policy, and the bins from the fastest to the slowest")
    func cellPerRow() {
        let svg = MatrixChart.svg(Self.rows, title: "t")
        #expect(svg.components(separatedBy: ##"height="16.0""##).count - 1 == Self.rows.count)
        #expect(MatrixChart.bin(p95: 2) == MatrixChart.bins.first && MatrixChart.bin(p95: 7200) == MatrixChart.bins.last)
    }

    @Test("landscape, at least 4:3, the measure named, and a key: a swatch and a label for every bin, from ≤ 10 s to ≥ 1 h")
    func shapeAndKey() throws {
        let svg = MatrixChart.svg(Self.rows, title: "fault matrix")
        let all = try ChartReadabilityTests.elements(svg)
        let root = try #require(all.first { $0.name == "svg" })
        let w = try #require(Double(root.attributes["width"] ?? "")), h = try #require(Double(root.attributes["height"] ?? ""))
        #expect(w / h >= 4.0 / 3.0, "\(w)×\(h)")
        let texts = all.filter { $0.name == "text" }.map(\.text)
        #expect(texts.contains { $0.hasPrefix("p95 delivery latency") })
        #expect(MatrixChart.bins.count >= 5)
        for bin in MatrixChart.bins {
            #expect(texts.contains(bin.label), "no label for \(bin.label)")
            #expect(all.contains { $0.name == "rect" && $0.attributes["fill"] == bin.fill && $0.attributes["width"] == "28" }, "no swatch for \(bin.label)")
        }
        #expect(MatrixChart.bins.first!.label == "≤ 10 s" && MatrixChart.bins.last!.label == "≥ 1 h")
    }

    @Test("one measure per cell: each policy's cell shows its p95 and nothing else, in the colour of its bin")
    func oneMeasure() throws {
        let svg = MatrixChart.svg(Self.rows, title: "fault matrix")
        let all = try ChartReadabilityTests.elements(svg)
        let cells = all.enumerated().filter { $0.element.name == "rect" && $0.element.attributes["height"] == "16.0" }
        #expect(cells.count == Self.rows.count)
        let byTitle = Dictionary(uniqueKeysWithValues: Self.rows.map { ("\(MatrixChart.label($0.index, $0.cell)), \($0.policy): p95 \(MatrixChart.value($0.summary.latencyP95))", $0) })
        for (i, rect) in cells {
            let title = all[i + 1]  // the cell's tooltip
            let row = try #require(byTitle[title.text], "a cell titled \(title.text)")
            #expect(rect.attributes["fill"] == MatrixChart.bin(p95: row.summary.latencyP95).fill)
            let written = all[i + 2]  // the number written in it
            #expect(written.name == "text" && written.text == MatrixChart.value(row.summary.latencyP95), "\(written.text)")
            #expect(written.text != "\(row.summary.backendRequests)" || row.summary.latencyP95.map { Int($0) == row.summary.backendRequests } == true)
        }
    }

    @Test("a caption under the chart for each cell where adaptive is red while naive is not, naming the cell, both p95 and its reason")
    func captions() throws {
        // No cell of the grid is red for adaptive alone, so the caption's rules are judged on the
        // grid with one made so: cell 79 (a night whose push loses 30 %), its adaptive p95 set to
        // 4.6 h, where naive's is not red.
        #expect(MatrixChart.redForAdaptiveOnly(FaultGrid.rows).isEmpty)
        let rows = FaultGrid.rows.map { row -> FaultMatrix.Row in
            var row = row
            if row.index == 79 && row.policy == "adaptive" { row.summary.latencyP95 = 16_446 }
            return row
        }
        let hot = MatrixChart.redForAdaptiveOnly(rows)
        #expect(hot.map(\.index) == [79])
        for h in hot {
            let a = rows.first { $0.index == h.index && $0.policy == "adaptive" }!, n = rows.first { $0.index == h.index && $0.policy == "naive" }!
            #expect(MatrixChart.isRed(a.summary.latencyP95) && !MatrixChart.isRed(n.summary.latencyP95))
        }
        let expectedCount = Set(rows.map(\.index)).filter { i in
            let a = rows.first { $0.index == i && $0.policy == "adaptive" }!.summary.latencyP95
            let n = rows.first { $0.index == i && $0.policy == "naive" }!.summary.latencyP95
            return (a ?? 0) > 3600 && (n ?? 0) <= 3600
        }.count
        #expect(hot.count == expectedCount)
        let svg = MatrixChart.svg(rows, title: "fault matrix")
        let all = try ChartReadabilityTests.elements(svg)
        let lowestCell = all.filter { $0.name == "rect" && $0.attributes["height"] == "16.0" }.compactMap { Double($0.attributes["y"]!) }.max()!
        let texts = all.filter { $0.name == "text" }
        let width = Double(all[0].attributes["width"]!)!
        for h in hot {
            let caption = try #require(texts.first { $0.text.hasPrefix("cell \(h.index) (") }, "no caption for cell \(h.index)")
            #expect(Double(caption.attributes["y"]!)! > lowestCell + 16, "the caption of \(h.index) is not under the chart")
            #expect(caption.text.contains("adaptive \(MatrixChart.value(h.adaptive)), naive \(MatrixChart.value(h.naive))"))
            #expect(caption.text.contains(String(MatrixChart.reason(h.cell).prefix(20))))
        }
        // Every caption line fits the picture.
        let font = FontAdvances.dejaVuSans()
        for t in texts where t.attributes["font-size"] == "12" {
            let x = Double(t.attributes["x"]!)!
            let w = font?.width(t.text, size: 12) ?? SVGTextWidth.of(t.text, size: 12)
            #expect(x + w <= width, "\(t.text) runs past the picture")
        }
    }
}
