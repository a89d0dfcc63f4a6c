import Charts
import Foundation
import RunReports
import Simulation
import SyncCore

extension Simulate {
    /// `--matrix`: every cell, every policy (or the one named), on every core.
    func runMatrix() throws {
        let duration = try durationText.map(Self.matrixDuration) ?? .hours(3)
        let policies = policy.map { [SyncPolicy.named($0)!] } ?? SyncPolicy.all
        let tty = isatty(STDERR_FILENO) == 1
        let rows = try FaultMatrix.run(policies: policies, duration: duration, matrixSeed: matrixSeed) { done, total in
            if tty { FileHandle.standardError.write(Data("\rfault matrix: \(done) of \(total) runs   ".utf8)) }
        }
        if tty { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        if let chart {
            let svg = MatrixChart.svg(rows, title: "fault matrix: \(FaultMatrix.cells.count) cells × \(policies.count) policies, \(duration) each")
            guard FileManager.default.createFile(atPath: chart, contents: Data(svg.utf8)) else { fail("--chart: cannot write \(chart)") }
        }
        let lines = format == .json ? [FaultMatrix.json(rows)] : FaultMatrix.table(rows)
        FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }
}
