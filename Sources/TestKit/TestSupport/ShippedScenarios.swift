import Foundation

/// The scenarios synchat ships (`Scenarios/*.scenario`), which many suites run.
public enum ShippedScenarios {
    public static let directory = BuiltProducts.packageRoot.appendingPathComponent("Scenarios")

    /// Their file names, sorted.
    public static func names() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".scenario") }.sorted()
    }
}
