import Foundation

/// How many generated cases the fuzz tests run: `SYNCHAT_FUZZ_CASES`, 20 unless set.
///
/// `swift test` is for the person editing the code: 20 generated scenarios (a few seconds)
/// and every case the fuzzer ever found failing (`TestData/fuzz-regressions`). CI sets a
/// larger number (`.ci/run`); the bench runs thousands (`synchat-bench fuzz --count N`).
/// The other fuzz loops scale with the same number, each with a floor that keeps it meaningful:
///
/// | loop | cases | at 20 | at 1000 |
/// | --- | --- | --- | --- |
/// | generated scenarios × three policies, each twice | N | 20 | 1000 |
/// | scenarios with a fifth of the wire broken | N / 6, at least 5 | 5 | 167 |
/// | broken documents at the decoders | N × 12, at least 500 | 500 | 12000 |
/// | scenario files broken on one line | N × 6, at least 250 | 250 | 6000 |
/// | theme files broken on one line | N × 3, at least 100 | 100 | 3000 |
/// | seeds a healthy engine must not call push unreliable on | N, at most 40 | 20 | 40 |
public enum FuzzBudget {
    /// Generated scenario cases: `SYNCHAT_FUZZ_CASES`, or 20.
    public static let cases: Int = {
        let raw = ProcessInfo.processInfo.environment["SYNCHAT_FUZZ_CASES"] ?? ""
        guard !raw.isEmpty else { return 20 }
        guard let n = Int(raw), n > 0 else {
            preconditionFailure("SYNCHAT_FUZZ_CASES=\(raw): expected a positive number of cases")
        }
        return n
    }()

    /// `cases` scaled by `per`, and never below `floor`.
    public static func scaled(_ per: Double, floor: Int) -> Int { max(floor, Int((Double(cases) * per).rounded())) }

    /// Seeds 1…`count` cut into at most `batches` consecutive ranges of at least
    /// `minimumSize` (but the last), so that a parameterised test spreads them over the cores.
    public static func batches(of count: Int = cases, _ batches: Int = 4, minimumSize: Int = 10) -> [ClosedRange<UInt64>] {
        let size = max(minimumSize, (count + batches - 1) / batches)
        return stride(from: 0, to: count, by: size).map { UInt64($0 + 1)...UInt64(min(count, $0 + size)) }
    }
}
