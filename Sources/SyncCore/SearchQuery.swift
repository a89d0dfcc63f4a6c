
/// What a person typed after `/`, as the store's full-text index and the screen's
/// highlighting both read it: the words of the query, each matching the start
/// of a word of a message, ignoring case and diacritics; every word must match.
///
/// Words are split as the store's SQLite FTS5 `unicode61` tokenizer splits them — runs of
/// letters, digits, marks and private-use characters — so that what is highlighted is what
/// the index found, by SQLite's own (older) Unicode tables. Most emoji and punctuation are
/// separators: they are not searchable. A run of CJK ideographs is one word, so a search
/// finds it from its first character on.
public struct SearchQuery: Hashable, Sendable {
    /// The words, folded (lower case, no diacritics).
    public let terms: [String]

    public init?(_ text: String) {
        let terms = Self.words(in: text).map { Self.fold($0) }.filter { !$0.isEmpty }
        guard !terms.isEmpty else { return nil }
        self.terms = terms
        termScalars = terms.map { Array($0.unicodeScalars) }
        longestTerm = termScalars.map(\.count).max() ?? 0
    }

    /// The terms as scalars, and the longest one's length, for `matches`.
    private let termScalars: [[Unicode.Scalar]]
    private let longestTerm: Int

    /// The FTS5 MATCH expression: every term as a quoted prefix (`"hel"* AND "wor"*`); the
    /// quotes make any character literal, so no query is a syntax error.
    public var ftsExpression: String {
        terms.map { "\"" + $0.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\"*" }.joined(separator: " AND ")
    }

    /// Whether `text` has every term at the start of one of its words. One pass over the
    /// text's scalars, folding of each word only as much as the longest term needs (a scan
    /// of a whole history asks this of every message).
    public func matches(_ text: String) -> Bool {
        let terms = termScalars, longest = longestTerm
        var found = [Bool](repeating: false, count: terms.count)
        var left = terms.count
        var folded: [Unicode.Scalar] = []
        folded.reserveCapacity(longest + 4)
        let scalars = text.unicodeScalars
        var i = scalars.startIndex
        while i < scalars.endIndex {
            guard Self.isTokenScalar(scalars[i]) else { i = scalars.index(after: i); continue }
            folded.removeAll(keepingCapacity: true)
            while i < scalars.endIndex, Self.isTokenScalar(scalars[i]) {
                if folded.count < longest { Self.fold(scalars[i], into: &folded) }
                i = scalars.index(after: i)
            }
            for t in terms.indices where !found[t] && folded.starts(with: terms[t]) {
                found[t] = true
                left -= 1
            }
            if left == 0 { return true }
        }
        return false
    }

    /// Where the terms match in `text`: for each word that starts with a term, the part of
    /// it the term covers, as a range of `text`'s scalars (a character of the screen is
    /// highlighted when one of its scalars is in a range).
    public func ranges(in text: String) -> [Range<String.Index>] {
        var out: [Range<String.Index>] = []
        for word in Self.words(in: text) {
            let folded = Self.fold(word)
            guard let term = terms.filter({ Self.starts(folded, with: $0) }).max(by: { $0.unicodeScalars.count < $1.unicodeScalars.count }) else { continue }
            // Walk the word's scalars until their folded form covers the term.
            let scalars = word.unicodeScalars
            var end = scalars.startIndex
            var covered = 0
            let target = term.unicodeScalars.count
            while end < scalars.endIndex, covered < target {
                covered += Self.fold(scalars[end]).unicodeScalars.count
                end = scalars.index(after: end)
            }
            out.append(word.startIndex..<end)
        }
        return out
    }

    /// A prefix of scalars, as the index compares (`String.hasPrefix` compares characters:
    /// an Indic conjunct is one character, and would hide its own first letters).
    static func starts(_ word: String, with term: String) -> Bool {
        word.unicodeScalars.starts(with: term.unicodeScalars)
    }

    /// The words of `text` as the index's tokenizer cuts them: runs of letters, digits,
    /// marks and private-use characters, scalar by scalar (`unicode61` with
    /// `categories 'L* N* Co M*'`: marks belong to their word, so an Indic word or a letter
    /// with a combining accent stays whole), by SQLite's own Unicode tables.
    public static func words(in text: String) -> [Substring] {
        var out: [Substring] = []
        let scalars = text.unicodeScalars
        var start: String.Index?
        var i = scalars.startIndex
        while i < scalars.endIndex {
            let inWord = isTokenScalar(scalars[i])
            if inWord, start == nil { start = i }
            if !inWord, let s = start { out.append(Substring(text.unicodeScalars[s..<i])); start = nil }
            i = scalars.index(after: i)
        }
        if let s = start { out.append(Substring(text.unicodeScalars[s..<scalars.endIndex])) }
        return out
    }

    /// Whether the index's tokenizer keeps `s` in a word (`SearchFoldTable`, read off SQLite).
    static func isTokenScalar(_ s: Unicode.Scalar) -> Bool {
        let v = s.value
        if v < 0x80 { return (0x30...0x39).contains(v) || (0x41...0x5A).contains(v) || (0x61...0x7A).contains(v) }
        let ranges = Self.table.ranges
        var lo = 0, hi = ranges.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if ranges[mid].upperBound < v { lo = mid + 1 } else { hi = mid }
        }
        return lo < ranges.count && ranges[lo].contains(v)
    }

    /// Lower case without diacritics, scalar by scalar, exactly as the index folds.
    public static func fold<S: StringProtocol>(_ s: S) -> String {
        var out = String.UnicodeScalarView()
        for scalar in s.unicodeScalars { out.append(contentsOf: fold(scalar).unicodeScalars) }
        return String(out)
    }

    static func fold(_ scalar: Unicode.Scalar, into out: inout [Unicode.Scalar]) {
        let v = scalar.value
        if v < 0x80 { out.append((0x41...0x5A).contains(v) ? Unicode.Scalar(UInt8(v + 32)) : scalar); return }
        if let folded = Self.table.folds[v] { out.append(contentsOf: folded.unicodeScalars) } else { out.append(scalar) }
    }

    static func fold(_ scalar: Unicode.Scalar) -> String {
        if scalar.value < 0x80 { return (0x41...0x5A).contains(scalar.value) ? String(Unicode.Scalar(scalar.value + 32)!) : String(scalar) }
        return Self.table.folds[scalar.value] ?? String(scalar)
    }

    /// `SearchFoldTable` parsed once.
    private static let table: (ranges: [ClosedRange<UInt32>], folds: [UInt32: String]) = {
        let ranges = SearchFoldTable.tokenRanges.split(separator: ",").map { item -> ClosedRange<UInt32> in
            let ends = item.split(separator: "-").map { UInt32($0, radix: 16)! }
            return ends[0]...(ends.count > 1 ? ends[1] : ends[0])
        }
        var folds: [UInt32: String] = [:]
        for item in SearchFoldTable.folds.split(separator: ",") {
            let parts = item.split(separator: ":", omittingEmptySubsequences: false)
            var text = String.UnicodeScalarView()
            for hex in parts[1].split(separator: " ") { text.append(Unicode.Scalar(UInt32(hex, radix: 16)!)!) }
            folds[UInt32(parts[0], radix: 16)!] = String(text)
        }
        return (ranges, folds)
    }()
}
