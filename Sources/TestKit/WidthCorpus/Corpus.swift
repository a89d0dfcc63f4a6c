import Foundation

/// The width corpus (`TestData/width-corpus/corpus.txt`): strings generated from public Unicode data by
/// `tools/width-corpus/generate.py`, never written by hand. Nothing here knows how synchat
/// measures text: the corpus is played through the real binary and judged on the real terminal.
public struct CorpusEntry: Equatable, Sendable {
    /// The generator's class: `emoji-zwj`, `emoji-flag`, `indic-conjunct`, `format`, `blns`, …
    public let kind: String
    public let text: String
}

public enum Corpus {
    public struct FormatError: Error, CustomStringConvertible {
        public let description: String
    }

    /// `TestData/width-corpus/corpus.txt` under the package root.
    public static func defaultPath(packageRoot: String) -> String {
        packageRoot + "/TestData/width-corpus/corpus.txt"
    }

    /// Reads the corpus: `CLASS<TAB>TEXT` a line, `#` comments; in TEXT `\\` is a backslash and
    /// `\u{HEX}` a control character. Lines are split on scalars: a text may hold U+2028.
    public static func load(path: String) throws -> [CorpusEntry] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let text = String(decoding: data, as: UTF8.self)
        var entries: [CorpusEntry] = []
        for (i, line) in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: true).enumerated() {
            var scalars = String.UnicodeScalarView(line)
            if scalars.first == "#" { continue }
            guard let tab = scalars.firstIndex(of: "\t") else {
                throw FormatError(description: "\(path):\(i + 1): no tab between class and text")
            }
            let kind = String(String.UnicodeScalarView(scalars[..<tab]))
            scalars = String.UnicodeScalarView(scalars[scalars.index(after: tab)...])
            entries.append(CorpusEntry(kind: kind, text: try unescape(scalars, at: "\(path):\(i + 1)")))
        }
        return entries
    }

    static func unescape(_ s: String.UnicodeScalarView, at place: String) throws -> String {
        var out = String.UnicodeScalarView()
        var it = Array(s)[...]
        while let c = it.popFirst() {
            guard c == "\\" else { out.append(c); continue }
            switch it.popFirst() {
            case "\\": out.append("\\")
            case "u":
                guard it.popFirst() == "{", let close = it.firstIndex(of: "}"),
                      let v = UInt32(String(String.UnicodeScalarView(it[..<close])), radix: 16), let scalar = Unicode.Scalar(v)
                else { throw FormatError(description: "\(place): bad \\u{HEX}") }
                out.append(scalar)
                it = it[it.index(after: close)...]
            default: throw FormatError(description: "\(place): unknown escape")
            }
        }
        return String(out)
    }

    /// A deterministic sample of about `count` entries that keeps every class: each class gives
    /// the same share of its entries, taken evenly spread, and at least one.
    public static func sample(_ entries: [CorpusEntry], count: Int) -> [CorpusEntry] {
        guard count < entries.count else { return entries }
        let fraction = Double(count) / Double(entries.count)
        var byKind: [String: [Int]] = [:]
        for (i, e) in entries.enumerated() { byKind[e.kind, default: []].append(i) }
        var picked: [Int] = []
        for (_, indices) in byKind {
            let n = max(1, Int((Double(indices.count) * fraction).rounded()))
            for j in 0..<n { picked.append(indices[j * indices.count / n]) }
        }
        return picked.sorted().map { entries[$0] }
    }
}
