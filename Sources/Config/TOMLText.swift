import SyncCore
import TOMLKit

/// Reading a TOML file a person wrote (a theme, keys.toml): one way for both, so that what
/// the library cannot take safely is refused before it sees it, and every refusal is one line
/// naming the file and the line, made visible, with what is used instead.
enum TOMLText {
    enum Read {
        case table(TOMLTable)
        case refused(String)
    }

    /// `text` as a table, or the warning: `file:LINE: …; using FALLBACK`. `example`: a header
    /// of the file's own kind (`[roles]`, `[keys]`), for the warning about a header.
    static func read(_ text: String, file: String, example: String, fallback: String) -> Read {
        if let line = unsafeTableHeader(text) {
            return .refused(UntrustedText.visible("\(file):\(line): a table header must start with a name, such as \(example); using \(fallback)"))
        }
        do {
            return .table(try TOMLTable(string: text))
        } catch let e as TOMLParseError {
            // The library quotes the bad character: made visible, never raw on the screen.
            return .refused(UntrustedText.visible("\(file):\(e.source.begin.line): not valid TOML: \(e.description); using \(fallback)"))
        } catch {
            return .refused(UntrustedText.visible("\(file): not valid TOML: \(error); using \(fallback)"))
        }
    }

    /// The TOML library (toml++ inside TOMLKit 0.6.0) asserts, and so aborts the process, on a
    /// table header whose name starts with anything but a key character, e.g. `[#roles]`, in a
    /// theme file or a keys file alike. Such a line is caught here first: its 1-based number, or nil.
    static func unsafeTableHeader(_ text: String) -> Int? {
        func isKeyStart(_ c: Character) -> Bool {
            c.isASCII && (c.isLetter || c.isNumber || c == "_" || c == "-" || c == "\"" || c == "'" || c == "]")
        }
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var rest = raw.drop { $0 == " " || $0 == "\t" }
            guard rest.first == "[" else { continue }
            rest = rest.dropFirst().drop { $0 == " " || $0 == "\t" }
            if rest.first == "[" { rest = rest.dropFirst().drop { $0 == " " || $0 == "\t" } }
            guard let c = rest.first, isKeyStart(c) else { return i + 1 }
        }
        return nil
    }
}
