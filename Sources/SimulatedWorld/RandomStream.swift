import SyncCore

/// A deterministic random stream (SplitMix64). Every random draw of the world comes from a
/// stream derived from the run's seed and the name of one concern, so that two runs with
/// the same seed see the same traffic and faults even when the clients make different
/// requests (which consume request-latency draws, and nothing else). Tests draw the values
/// they make up from it too (it is a `RandomNumberGenerator`).
public struct RandomStream: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64, concern: String) {
        // The concern's name, hashed the same in every process, mixed with the seed.
        state = seed &* 0x9E37_79B9_7F4A_7C15 ^ StableHash.fnv1a(concern)
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    public mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    /// Uniform in the closed range.
    public mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.upperBound - range.lowerBound + 1))
    }

    /// Uniform interval between the bounds, millisecond resolution.
    public mutating func interval(_ low: Interval, _ high: Interval) -> Interval {
        Interval(milliseconds: low.milliseconds + Int64(next() % UInt64(high.milliseconds - low.milliseconds + 1)))
    }

    /// True with probability `p` (0…1).
    public mutating func chance(_ p: Double) -> Bool { unit() < p }

    /// Exponentially distributed wait for a Poisson process of `perHour` events per hour.
    public mutating func exponential(perHour: Double) -> Interval {
        let u = max(unit(), 1e-12)
        return .fractionalSeconds(-log(u) / perHour * 3600)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
