import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
@testable import Charts
@testable import RunReports
@testable import Simulation
import SyncCore
import SyncEngine
import Testing
import TestSupport

/// The charts read on a slide: a run's last state is not a sliver at the right edge, a fault's
/// name stays on its bar (judged by the font's own advances, read from DejaVu Sans itself),
/// and `--compare` does not file channel bytes under the backend's.
@Suite("Charts that show the moment")
struct ChartReadabilityTests {
    /// A run that ends six seconds after push fell into unreliable, as a shrunk report's does.
    static func shortTail() -> RunTimeline {
        var t = RunTimeline(start: .zero, end: .zero + .minutes(10) + .seconds(6))
        t.lifecycle = [.init(from: .zero, to: t.end, value: .foreground)]
        t.push = [.init(from: .zero, to: .zero + .minutes(10), value: .reliable), .init(from: .zero + .minutes(10), to: t.end, value: .unreliable)]
        t.faults = [.init(from: .zero + .minutes(4), to: t.end, value: "push drop 100%"),
                    .init(from: .zero + .minutes(2), to: .zero + .minutes(2) + .seconds(20), value: "realtime down")]
        t.marks = [(.zero + .minutes(10), .full)]
        return t
    }

    /// The SVG's elements, with their attributes and text.
    static func elements(_ svg: String) throws -> [(name: String, attributes: [String: String], text: String)] {
        final class Collect: NSObject, XMLParserDelegate {
            var out: [(String, [String: String], String)] = []
            var open: [Int] = []
            func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String]) {
                out.append((name, attributes, ""))
                open.append(out.count - 1)
            }
            func parser(_ parser: XMLParser, foundCharacters string: String) { if let i = open.last { out[i].2 += string } }
            func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) { open.removeLast() }
        }
        let parser = XMLParser(data: Data(svg.utf8))
        let c = Collect()
        parser.delegate = c
        try #require(parser.parse(), "not XML: \(String(describing: parser.parserError))")
        return c.out.map { ($0.0, $0.1, $0.2) }
    }

    @Test("a run that ends just past its last change keeps at least a tenth of the axis after it, the state it ended in held there")
    func tail() throws {
        let t = Self.shortTail()
        let svg = TimelineChart.svg([("adaptive", t)], title: "shrunk")
        let unreliable = TimelineChart.pushColours[.unreliable]!
        let plot = TimelineChart.width - TimelineChart.left - TimelineChart.right
        // The push row's red, the run's own and the held tail together.
        let red = try Self.elements(svg).filter { $0.name == "rect" && $0.attributes["fill"] == unreliable && $0.attributes["height"] == "12.0" }
        let drawn = red.compactMap { Double($0.attributes["width"] ?? "") }.reduce(0, +)
        #expect(drawn >= plot / 10, "push unreliable is \(drawn) px of a \(plot) px axis")
        #expect(svg.contains("run ends: its last state, held"))
        // A run whose last change is far from its end (a scenario's settle) is drawn to a tenth
        // past that change, not to its end, and the axis says where the run went on to.
        var long = t
        long.end = .zero + .hours(1)
        long.push[1].to = long.end
        let longSVG = TimelineChart.svg([("adaptive", long)], title: "long")
        #expect(!longSVG.contains("run ends"))
        let last = try #require(long.lastActivity)
        #expect(TimelineChart.drawnEnd(start: .zero, runEnd: long.end, lastChange: last) < long.end)
        #expect(longSVG.contains("nothing changes from here to the run") && longSVG.contains("end at 1:00"))
    }

    @Test("a fault's name never runs past its own bar: cut with … or left to the bar's tooltip, measured by DejaVu Sans's own advances")
    func labelsInTheirBars() throws {
        let font = try #require(FontAdvances.dejaVuSans(), "DejaVu Sans is not installed (fonts-dejavu-core)")
        for tail in [Self.shortTail(), { var t = Self.shortTail(); t.end = .zero + .hours(2); return t }()] {
            let svg = TimelineChart.svg([("adaptive", tail)], title: "t")
            let all = try Self.elements(svg)
            let bars = all.filter { $0.name == "rect" && $0.attributes["fill-opacity"] == "0.35" && $0.attributes["fill"] == "#e53935" }
            let labels = all.filter { $0.name == "text" && $0.attributes["font-size"] == "10" && $0.attributes["fill"] == "#7f0000" }
            #expect(!labels.isEmpty)
            for label in labels {
                let x = Double(label.attributes["x"]!)!, y = Double(label.attributes["y"]!)!
                let bar = try #require(bars.first { b in
                    let bx = Double(b.attributes["x"]!)!, by = Double(b.attributes["y"]!)!, bh = Double(b.attributes["height"]!)!
                    return abs(bx + 2 - x) < 0.01 && y > by && y <= by + bh + 4
                }, "no bar under \(label.text)")
                // The bar, with the pale part it is held by past the run's end.
                let held = all.first { $0.name == "rect" && $0.attributes["fill-opacity"] == "0.16" && $0.attributes["y"] == bar.attributes["y"] }
                let end = Double(bar.attributes["x"]!)! + Double(bar.attributes["width"]!)! + (held.map { Double($0.attributes["width"]!)! } ?? 0)
                let width = font.width(label.text, size: 10)
                #expect(x + width <= end, "\"\(label.text)\" ends at \(x + width), its bar at \(end)")
                #expect(["push drop 100%", "realtime down"].contains(label.text) || label.text.hasSuffix("…"))
            }
        }
    }

    @Test("--compare: push and realtime bytes are rows of their own, not indented under backend bytes, which they are not part of")
    func bytesBesideBackend() throws {
        let path = BuiltProducts.packageRoot.appendingPathComponent("Scenarios/demo.scenario").path
        let runs = try ScenarioRun.side(by: SyncPolicy.all, of: try ScenarioParser.load(path: path), keepsLog: false)
        let summaries = runs.map { RunSummary($0) }
        let table = RunSummary.comparison(summaries)
        let start = try #require(table.firstIndex { $0.hasPrefix("backend bytes ") })
        var indented: [String] = []
        for line in table[(start + 1)...] {
            guard line.hasPrefix("  ") else { break }
            indented.append(String(line.dropFirst(2).prefix { $0 != " " }))
        }
        #expect(!indented.isEmpty && !indented.contains("push") && !indented.contains("realtime"), "\(indented)")
        // What is indented under backend bytes adds up to it, for every policy.
        for (i, s) in summaries.enumerated() {
            let parts = indented.map { s.bytesByKind[$0] ?? 0 }.reduce(0, +)
            #expect(parts == s.backendBytes, "\(s.policy): \(parts) ≠ \(s.backendBytes)")
            _ = i
        }
        #expect(table.contains { $0.hasPrefix("push bytes ") } && table.contains { $0.hasPrefix("realtime bytes ") })
    }
}

/// Advance widths read from a TrueType file's own tables (`cmap` format 4, `hmtx`): the font is
/// the judge of how wide a chart's text is drawn, not the chart's table of it.
struct FontAdvances {
    let data: [UInt8]
    let unitsPerEm: Double
    let hmtx: Int, metrics: Int
    let segments: [(end: Int, start: Int, delta: Int, rangeOffset: Int, rangeAt: Int)]

    static func dejaVuSans() -> FontAdvances? {
        for path in ["/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/TTF/DejaVuSans.ttf"] {
            if let d = FileManager.default.contents(atPath: path), let f = FontAdvances([UInt8](d)) { return f }
        }
        return nil
    }

    init?(_ d: [UInt8]) {
        data = d
        func u16(_ o: Int) -> Int { Int(d[o]) << 8 | Int(d[o + 1]) }
        func u32(_ o: Int) -> Int { u16(o) << 16 | u16(o + 2) }
        var tables: [String: Int] = [:]
        for i in 0..<u16(4) {
            let o = 12 + 16 * i
            tables[String(decoding: d[o..<o + 4], as: UTF8.self)] = u32(o + 8)
        }
        guard let head = tables["head"], let hhea = tables["hhea"], let hm = tables["hmtx"], let cmap = tables["cmap"] else { return nil }
        unitsPerEm = Double(u16(head + 18))
        metrics = u16(hhea + 34)
        hmtx = hm
        var sub: Int?
        for i in 0..<u16(cmap + 2) where u16(cmap + 4 + 8 * i) == 3 && u16(cmap + 6 + 8 * i) == 1 { sub = cmap + u32(cmap + 8 + 8 * i) }
        guard let s = sub, u16(s) == 4 else { return nil }
        let n = u16(s + 6) / 2
        segments = (0..<n).map { i in
            let rangeAt = s + 16 + 6 * n + 2 * i
            return (u16(s + 14 + 2 * i), u16(s + 16 + 2 * n + 2 * i), u16(s + 16 + 4 * n + 2 * i), u16(rangeAt), rangeAt)
        }
    }

    func glyph(_ c: Int) -> Int {
        func u16(_ o: Int) -> Int { Int(data[o]) << 8 | Int(data[o + 1]) }
        guard let seg = segments.first(where: { $0.start <= c && c <= $0.end }) else { return 0 }
        if seg.rangeOffset == 0 { return (c + seg.delta) & 0xFFFF }
        let g = u16(seg.rangeAt + seg.rangeOffset + 2 * (c - seg.start))
        return g == 0 ? 0 : (g + seg.delta) & 0xFFFF
    }

    func width(_ s: String, size: Double) -> Double {
        s.unicodeScalars.reduce(0) { sum, scalar in
            let g = min(glyph(Int(scalar.value)), metrics - 1)
            let advance = Int(data[hmtx + 4 * g]) << 8 | Int(data[hmtx + 4 * g + 1])
            return sum + Double(advance) / unitsPerEm * size
        }
    }
}
