import Shrinking
import SimulatedWorld
import Testing

/// ddmin and the single-removal pass against brute force over every subset of small arrays,
/// with predicates drawn from a seeded stream: monotone ones (any superset of a core holds)
/// and arbitrary ones (each subset holds or not at random).
@Suite("Delta debugging: 1-minimal, checked against brute force")
struct DeltaDebuggingTests {
    /// A predicate on subsets of 0..<n, as a table by bitmask.
    struct Predicate {
        var n: Int
        var holds: [Bool]

        func callAsFunction(_ xs: [Int]) -> Bool { holds[Self.mask(xs)] }
        static func mask(_ xs: [Int]) -> Int { xs.reduce(0) { $0 | 1 << $1 } }

        /// Every superset of one of `cores` holds (the full set always does).
        static func monotone(n: Int, cores: [Int]) -> Predicate {
            Predicate(n: n, holds: (0..<(1 << n)).map { m in cores.contains { m & $0 == $0 } })
        }

        /// Each subset holds with probability `p`; the full set holds.
        static func arbitrary(n: Int, p: Double, _ r: inout RandomStream) -> Predicate {
            var table = (0..<(1 << n)).map { _ in r.unit() < p }
            table[(1 << n) - 1] = true
            return Predicate(n: n, holds: table)
        }

        /// The fewest elements of a subset that holds (brute force over every subset).
        var minimumSize: Int { holds.indices.filter { holds[$0] }.map(\.nonzeroBitCount).min()! }
    }

    static func randomCore(n: Int, _ r: inout RandomStream) -> Int {
        var core = 0
        for i in 0..<n where r.unit() < 0.3 { core |= 1 << i }
        return core
    }

    func shrink(_ p: Predicate, width: Int = 1) -> (result: [Int], tests: Int) {
        var dd = DeltaDebugging<Int>(width: width) { $0.map { p($0) } }
        let result = dd.minimise(Array(0..<p.n))
        return (result, dd.tests)
    }

    func expectOneMinimal(_ result: [Int], _ p: Predicate, _ label: String) {
        #expect(p(result), "\(label): \(result) does not hold")
        #expect(result == result.sorted() && Set(result).count == result.count, "\(label): \(result) is not a part of the input in order")
        for i in result.indices {
            var less = result
            less.remove(at: i)
            #expect(!p(less), "\(label): \(result) is not 1-minimal, \(less) holds too")
        }
    }

    @Test("monotone predicates with one core: the result is the core, the smallest set brute force finds")
    func oneCore() {
        var r = RandomStream(seed: 31, concern: "ddmin-one-core")
        for round in 0..<300 {
            let n = r.int(0...10)
            let core = Self.randomCore(n: n, &r)
            let p = Predicate.monotone(n: n, cores: [core])
            let (result, _) = shrink(p)
            expectOneMinimal(result, p, "round \(round), n \(n)")
            #expect(Predicate.mask(result) == core, "round \(round)")
            #expect(result.count == p.minimumSize, "round \(round)")
        }
    }

    @Test("monotone predicates with several cores: 1-minimal, one of the cores, never smaller than brute force's minimum")
    func severalCores() {
        var r = RandomStream(seed: 31, concern: "ddmin-cores")
        for round in 0..<300 {
            let n = r.int(1...10)
            let cores = (0..<r.int(2...4)).map { _ in Self.randomCore(n: n, &r) }
            let p = Predicate.monotone(n: n, cores: cores)
            let (result, _) = shrink(p)
            expectOneMinimal(result, p, "round \(round), n \(n)")
            #expect(cores.contains(Predicate.mask(result)), "round \(round): \(result) is no core of \(cores)")
            #expect(result.count >= p.minimumSize)
        }
    }

    @Test("arbitrary (non-monotone) predicates: the result holds and is 1-minimal")
    func arbitrary() {
        var r = RandomStream(seed: 31, concern: "ddmin-arbitrary")
        for round in 0..<300 {
            let n = r.int(1...10)
            let p = Predicate.arbitrary(n: n, p: [0.05, 0.2, 0.5][r.int(0...2)], &r)
            let (result, _) = shrink(p)
            expectOneMinimal(result, p, "round \(round), n \(n)")
            #expect(result.count >= p.minimumSize)
        }
    }

    @Test("the result does not depend on how many candidates are tried at once (the first in order wins)")
    func widthChangesNothing() {
        var r = RandomStream(seed: 31, concern: "ddmin-width")
        for round in 0..<200 {
            let n = r.int(1...10)
            let p = round % 2 == 0 ? Predicate.arbitrary(n: n, p: 0.3, &r) : Predicate.monotone(n: n, cores: [Self.randomCore(n: n, &r)])
            let one = shrink(p, width: 1).result
            for width in [2, 3, 8] { #expect(shrink(p, width: width).result == one, "round \(round), width \(width)") }
        }
    }

    @Test("a predicate that holds with nothing gives nothing, in one test")
    func emptyHolds() {
        var dd = DeltaDebugging<Int>(holds: { _ in true })
        #expect(dd.minimise(Array(0..<10)).isEmpty)
        #expect(dd.tests == 1)  // ddmin tries the empty set first; the 1-minimal pass has nothing to remove
    }

    @Test("batches are never wider than asked, and stop at the first batch that holds")
    func batches() {
        var sizes: [Int] = []
        var tried = 0
        let hit = CandidateBatches.firstHolding(Array(0..<7), width: 3, tried: &tried) { batch in
            sizes.append(batch.count)
            return batch.map { $0 >= 4 }
        }
        #expect(hit == 4 && sizes == [3, 3] && tried == 6)
    }
}
