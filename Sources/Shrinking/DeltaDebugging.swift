// Delta debugging: the smallest part of an input that still shows a property.
//
// Zeller and Hildebrandt, "Simplifying and Isolating Failure-Inducing Input" (IEEE TSE 28(2),
// 2002): `ddmin` splits the input into n chunks, keeps a chunk that still holds, else a
// complement (the input less one chunk), else doubles n; it ends when n reaches the input's
// length. A final pass removes single elements until none can go: the result is 1-minimal,
// whatever the predicate (ddmin's own guarantee needs a monotone one).
//
// Pure: no clock, no threads. The caller's `test` decides how a batch of candidates is tried
// (one after the other, or at once on the machine's cores); a batch is never wider than
// `width`, and the first candidate *in order* that holds is taken, so the result does not
// depend on which of a batch's runs finished first.

/// Shrinks an array while a predicate holds, in batches of candidates.
public struct DeltaDebugging<Element> {
    /// Tries a batch of candidates (at most `width`), answering for each whether it holds, in order.
    public typealias BatchTest = ([[Element]]) -> [Bool]

    public let width: Int
    private let test: BatchTest
    /// How many candidates were tried.
    public private(set) var tests = 0

    /// `width`: how many candidates `test` is given at once (the cores it may use).
    public init(width: Int = 1, test: @escaping BatchTest) {
        self.width = max(1, width)
        self.test = test
    }

    /// One candidate at a time.
    public init(holds: @escaping ([Element]) -> Bool) {
        self.init(width: 1) { $0.map(holds) }
    }

    /// The index of the first of `candidates` that holds, trying them `width` at a time in
    /// order: a later batch is tried only when no earlier candidate held.
    public mutating func firstHolding(_ candidates: [[Element]]) -> Int? {
        firstHolding(count: candidates.count) { candidates[$0] }
    }

    /// As `firstHolding(_:)`, the candidates made as their batch comes: a long input's
    /// complements or single removals are never all in memory at once.
    mutating func firstHolding(count: Int, _ candidate: (Int) -> [Element]) -> Int? {
        var tried = 0
        defer { tests += tried }
        return CandidateBatches.firstHolding(count: count, width: width, tried: &tried, make: candidate, test: test)
    }

    /// ddmin, then the single-removal pass: a 1-minimal part of `input` that holds. `input`
    /// itself must hold (the caller checked it).
    public mutating func minimise(_ input: [Element]) -> [Element] {
        oneMinimal(ddmin(input))
    }

    /// Zeller and Hildebrandt's ddmin with complements. The empty array is tried first: a
    /// property that holds with nothing needs nothing.
    public mutating func ddmin(_ input: [Element]) -> [Element] {
        if input.isEmpty || firstHolding([[]]) != nil { return [] }
        var current = input
        var n = 2
        while current.count >= 2 {
            let chunks = Self.split(current, into: n)
            // The input less chunk i. With two chunks, each is the other's complement: tried once.
            func complement(_ i: Int) -> [Element] { chunks.enumerated().filter { $0.offset != i }.flatMap(\.element) }
            if let i = firstHolding(chunks) {
                current = chunks[i]
                n = 2
            } else if n > 2, let i = firstHolding(count: chunks.count, complement) {
                current = complement(i)
                n = max(n - 1, 2)
            } else if n >= current.count {
                break
            } else {
                n = min(current.count, n * 2)
            }
        }
        return current
    }

    /// Removes single elements while the rest still holds, until removing any one of them
    /// loses the property (1-minimal). Each pass tries the removals in order from where the
    /// last one was made; a pass that removed something is followed by a whole new pass, as an
    /// element kept earlier may go once another has (the predicate need not be monotone).
    public mutating func oneMinimal(_ input: [Element]) -> [Element] {
        var current = input
        var removed = true
        while removed {
            removed = false
            var from = 0
            while from < current.count {
                let base = current, start = from
                guard let k = firstHolding(count: base.count - start, { i in Array(base[..<(start + i)] + base[(start + i + 1)...]) }) else { break }
                current.remove(at: from + k)
                from += k
                removed = true
            }
        }
        return current
    }

    /// `array` in `n` contiguous chunks, as even as can be (the first ones one longer).
    static func split(_ array: [Element], into n: Int) -> [[Element]] {
        let n = min(max(1, n), array.count)
        var chunks: [[Element]] = []
        var start = 0
        for i in 0..<n {
            let size = array.count / n + (i < array.count % n ? 1 : 0)
            chunks.append(Array(array[start..<start + size]))
            start += size
        }
        return chunks
    }
}

/// Candidates tried a batch at a time, in order.
public enum CandidateBatches {
    /// The index of the first of `candidates` that holds, trying them `width` at a time in
    /// order: a later batch is tried only when no candidate of the earlier ones held, and
    /// within a batch the first in order wins, whichever answer came first. `tried` counts
    /// the candidates given to `test`.
    public static func firstHolding<Candidate>(_ candidates: [Candidate], width: Int, tried: inout Int,
                                               test: ([Candidate]) -> [Bool]) -> Int? {
        firstHolding(count: candidates.count, width: width, tried: &tried, make: { candidates[$0] }, test: test)
    }

    /// As above, candidate `i` made by `make(i)` when its batch comes.
    public static func firstHolding<Candidate>(count: Int, width: Int, tried: inout Int, make: (Int) -> Candidate,
                                               test: ([Candidate]) -> [Bool]) -> Int? {
        let width = max(1, width)
        var start = 0
        while start < count {
            let batch = (start..<min(count, start + width)).map(make)
            tried += batch.count
            if let hit = test(batch).firstIndex(of: true) { return start + hit }
            start += batch.count
        }
        return nil
    }
}
