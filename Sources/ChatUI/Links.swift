/// Links in message text (docs/screen.md#links): `http`, `https` and `mailto` URLs drawn as
/// OSC 8 hyperlinks whose visible text is the URL itself. A URL is printable ASCII only, so
/// its target is exactly what the screen shows: no control, bidi or zero-width character can
/// make the text say one thing and the link go elsewhere (the URL ends before any of them).
/// Pure: the render finds them, the terminal adapter writes the sequences after the frame
/// over the cells it already drew, never into a curses cell.
public enum Links {
    static let schemes = ["https://", "http://", "mailto:"]
    /// Longer is not linked (terminals cap the OSC 8 target; 2 000 is what browsers agree on).
    public static let longest = 2000

    /// The URLs of `text`, in order, each as characters from `start`.
    public static func find(_ text: [Character]) -> [(start: Int, url: String)] {
        var out: [(Int, String)] = []
        var i = 0
        while i < text.count {
            guard text[i] == "h" || text[i] == "m", i == 0 || !isWordCharacter(text[i - 1]),
                  let scheme = schemes.first(where: { starts(text, at: i, with: $0) }) else { i += 1; continue }
            var end = i + scheme.count
            while end < text.count, isURLCharacter(text[end]) { end += 1 }
            end = trimmed(text, from: i, to: end)
            let url = String(text[i..<end])
            if end - i > scheme.count + (scheme == "mailto:" ? 2 : 0), url.count <= longest, scheme != "mailto:" || url.contains("@") {
                out.append((i, url))
            }
            i = max(end, i + 1)
        }
        return out
    }

    /// The URL's end without what usually follows one in a sentence: `.,;:!?'"*` and a closing
    /// bracket the URL did not open (`(see https://a.b/c_(d))` keeps `c_(d)`).
    static func trimmed(_ t: [Character], from start: Int, to end: Int) -> Int {
        var end = end
        while end > start {
            let c = t[end - 1]
            if ".,;:!?'\"*".contains(c) { end -= 1; continue }
            if let open: Character = c == ")" ? "(" : c == "]" ? "[" : nil {
                let opened = t[start..<end].filter { $0 == open }.count, closed = t[start..<end].filter { $0 == c }.count
                if closed > opened { end -= 1; continue }
            }
            break
        }
        return end
    }

    static func starts(_ t: [Character], at i: Int, with s: String) -> Bool {
        var k = i
        for c in s {
            guard k < t.count, t[k] == c else { return false }
            k += 1
        }
        return true
    }

    static func isWordCharacter(_ c: Character) -> Bool { c.isLetter || c.isNumber || c == "_" }

    /// Printable ASCII that may be part of a URL (RFC 3986's characters and `%`; not space,
    /// `<>"` `` ` `` `{}|\^`, which end one in running text).
    static func isURLCharacter(_ c: Character) -> Bool {
        guard let a = c.asciiValue, a > 0x20, a < 0x7F else { return false }
        return !"<>\"`{}|\\^".contains(c)
    }

    /// The OSC 8 sequence that opens a link to `url` under `id` (cells of one id are one link,
    /// across rows), and the one that closes it.
    public static func open(_ url: String, id: String) -> String { "\u{1B}]8;id=\(id);\(url)\u{1B}\\" }
    public static let close = "\u{1B}]8;;\u{1B}\\"
}

/// A link's cells on one row of a grid: from `x`, `width` cells, all of one link (`id`).
public struct GridLink: Equatable, Sendable {
    public var x: Int
    public var y: Int
    public var width: Int
    public var url: String
    public var id: String

    public init(x: Int, y: Int, width: Int, url: String, id: String) {
        self.x = x
        self.y = y
        self.width = width
        self.url = url
        self.id = id
    }
}

extension Links {
    /// Where each URL of a message lies on its rows (`rows`: each row's characters, and where
    /// its body starts in them), as (row, first character, characters, url, link index): a URL
    /// wrapped over rows is one segment a row, each the continuation of the one before.
    static func segments(_ rows: [(text: [Character], bodyStart: Int)], urls: [(start: Int, url: String)])
        -> [(row: Int, start: Int, count: Int, url: String, index: Int)] {
        var out: [(Int, Int, Int, String, Int)] = []
        var next = 0  // the next URL to find
        var pending: (rest: ArraySlice<Character>, url: String, index: Int)?
        for (r, row) in rows.enumerated() {
            var pos = row.bodyStart
            if let p = pending {
                // The URL goes on at the start of this row's body.
                var n = 0
                while n < p.rest.count, pos + n < row.text.count, row.text[pos + n] == p.rest[p.rest.startIndex + n] { n += 1 }
                if n > 0 { out.append((r, pos, n, p.url, p.index)) }
                pending = n == p.rest.count ? nil : (pos + n == row.text.count && n > 0 ? (p.rest.dropFirst(n), p.url, p.index) : nil)
                pos += n
                if pending != nil { continue }
            }
            while next < urls.count {
                let url = Array(urls[next].url)
                guard let s = firstStart(of: url, in: row.text, from: pos) else { break }
                let n = min(url.count, row.text.count - s)
                out.append((r, s, n, urls[next].url, next))
                if n < url.count { pending = (url[n...], urls[next].url, next) }
                next += 1
                pos = s + n
                if pending != nil { break }
            }
        }
        return out
    }

    /// Where `url` starts in `text` from `from`: the whole of it, or a beginning of it that
    /// runs to the row's end (the rest wraps onto the next row).
    static func firstStart(of url: [Character], in text: [Character], from: Int) -> Int? {
        guard let first = url.first, from < text.count else { return nil }
        for s in from..<text.count where text[s] == first {
            let n = min(url.count, text.count - s)
            // A beginning shorter than a scheme could be any word's end: not taken for one.
            guard n == url.count || n >= 8 else { continue }
            if text[s..<(s + n)].elementsEqual(url[..<n]) { return s }
        }
        return nil
    }
}
