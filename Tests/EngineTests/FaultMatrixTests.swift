import Foundation
import SimWorld
import Simulation
import SyncCore
import SyncEngine
import Testing

/// Issue 27 #5: every policy over the grid of worlds. The whole matrix runs here (in debug it
/// takes seconds of virtual hours), and its goals are checked cell by cell.
@Suite("The fault matrix")
struct FaultMatrixTests {
    static let rows: [FaultMatrix.Row] = (try? FaultMatrix.run()) ?? []

    @Test("at least 40 cells, each with its own seed and a scenario that parses, over every value of every axis")
    func grid() throws {
        let cells = FaultMatrix.cells
        #expect(cells.count >= 40)
        #expect(Set(cells).count == cells.count)
        #expect(Set(cells.map(\.seed)).count == cells.count)
        for c in cells { _ = try ScenarioParser.parse(c.scenarioText(duration: .hours(3)), file: "cell") }
        #expect(Set(cells.map(\.app)) == Set(MatrixCell.App.allCases))
        #expect(Set(cells.map(\.realtime)) == Set(MatrixCell.Realtime.allCases))
        #expect(Set(cells.map(\.push)) == Set(MatrixCell.Push.allCases))
        #expect(Set(cells.map(\.indexer)) == Set(MatrixCell.Indexer.allCases))
        #expect(Set(cells.map(\.mode)) == Set(NotificationMode.allCases))
        #expect(Set(cells.map(\.network)) == Set(MatrixCell.Network.allCases))
    }

    @Test("every cell, every policy: nothing lost, nothing shown twice, no false unreliable")
    func nothingLost() {
        #expect(Self.rows.count == FaultMatrix.cells.count * 3)
        for r in Self.rows {
            #expect(r.summary.messagesLost == 0, "cell \(r.index) \(r.policy): \(r.cell.description)")
            #expect(r.summary.duplicates == 0, "cell \(r.index) \(r.policy)")
            #expect(r.summary.falseUnreliable == 0, "cell \(r.index) \(r.policy)")
            #expect(r.summary.messagesSent > 30)
        }
    }

    @Test("no blind spot: adaptive's p95 ≤ 300 s in every foreground cell with the indexer up, and push found unreliable within 15 min")
    func noBlindSpot() {
        let foreground = Self.rows.filter { $0.policy == "adaptive" && $0.cell.app == .foreground && $0.cell.indexer == .up && $0.cell.network == .on }
        #expect(foreground.count >= 20)
        for r in foreground {
            #expect((r.summary.latencyP95 ?? .infinity) <= 300, "cell \(r.index): \(r.cell.description) p95 \(r.summary.latencyP95 ?? -1)")
            if r.cell.push == .drop100, r.cell.mode == .remotePush {
                let lag = r.summary.beliefLag.records[.push]?.worst
                #expect(lag.map { $0 <= .minutes(15) } ?? false, "cell \(r.index): push lag \(String(describing: lag))")
            }
        }
        // The blind spot is seed's, measured: realtime down and push dead in the foreground.
        let blind = Self.rows.first { $0.policy == "seed" && $0.cell == MatrixCell(app: .foreground, realtime: .down, push: .drop100) }
        #expect((blind?.summary.latencyP95 ?? 0) > 3600)
    }

    @Test("the JSON is an array of rows: cell (app, realtime, push, indexer, mode, network), policy, and simulate's measures")
    func json() throws {
        let rows = Array(Self.rows.prefix(6))
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(FaultMatrix.json(rows).utf8)) as? [[String: Any]])
        #expect(parsed.count == 6)
        for (row, object) in zip(rows, parsed) {
            let cell = try #require(object["cell"] as? [String: String])
            #expect(Set(cell.keys) == ["app", "realtime", "push", "indexer", "mode", "network"])
            #expect(cell["app"] == row.cell.app.rawValue && cell["push"] == row.cell.push.rawValue)
            #expect(object["policy"] as? String == row.policy)
            for key in ["messages_lost", "duplicates", "latency_p50_s", "latency_p95_s", "latency_max_s", "backend_requests", "backend_bytes",
                        "belief_lag_s", "false_unreliable"] {
                #expect(object.keys.contains(key), "\(key)")
            }
            // The measures are simulate's own: the same object as the summary's JSON.
            let own = try #require(try JSONSerialization.jsonObject(with: Data(row.summary.json.utf8)) as? [String: Any])
            #expect(NSDictionary(dictionary: own) == NSDictionary(dictionary: object.filter { $0.key != "cell" }))
        }
    }

    @Test("the table fits 120 columns and names every cell once; the chart has a cell per cell and policy")
    func tableAndChart() {
        let table = FaultMatrix.table(Self.rows)
        for line in table { #expect(line.count <= 120, "\(line.count): \(line)") }
        let numbered = table.filter { $0.contains("│") && $0.split(separator: " ").first.map { Int($0) != nil } ?? false }
        #expect(numbered.count == FaultMatrix.cells.count)
        #expect(table.contains("lost or duplicated: none in \(Self.rows.count) runs"))
        let svg = MatrixChart.svg(Self.rows, title: "t")
        #expect(svg.components(separatedBy: ##"height="16.0""##).count - 1 == Self.rows.count)
        #expect(MatrixChart.bin(p95: 2) == MatrixChart.bins.first && MatrixChart.bin(p95: 7200) == MatrixChart.bins.last)
    }
}
