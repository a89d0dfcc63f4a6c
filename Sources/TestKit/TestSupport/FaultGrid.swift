import RunReports
import Simulation

/// The default fault matrix (every cell, every policy), run once per test process: the
/// matrix's own tests, its heatmap's and the docs' table all read these rows. It is the
/// slowest thing the tests compute, and on Linux every test target runs in one process.
public enum FaultGrid {
    public static let rows: [FaultMatrix.Row] = (try? FaultMatrix.run()) ?? []
}
