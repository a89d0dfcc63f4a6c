import Foundation
import SimulatedWorld
import Simulation
import SyncCore
import ChatUI
import Config

/// Bad files: scenario files and theme files, each a real file broken in one place. A broken
/// scenario is either still a scenario or one `FILE:LINE: message` error naming a line of the
/// file; a broken theme is never fatal: warnings naming the file, and the default theme's style
/// for whatever could not be read.
public enum FileFuzzer {
    /// One broken file.
    public struct Broken: Sendable {
        public var bytes: Data
        /// The 1-based line that was broken.
        public var line: Int
        public var how: String
    }

    /// Breaks one line of `text`: junk bytes, control characters, quotes, escapes, a token of
    /// the format in the wrong place, a cut, a swap with the next line, bytes that are not
    /// UTF-8, a NUL, a line of 100,000 characters, CRLF.
    public static func breakLine(_ text: String, tokens: [String], r: inout RandomStream) -> Broken {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { [UInt8]($0.utf8) }
        let candidates = lines.indices.filter { !lines[$0].isEmpty && lines[$0].first != UInt8(ascii: "#") }
        let i = candidates.isEmpty ? 0 : candidates[r.int(0...candidates.count - 1)]
        if lines.isEmpty { lines = [[]] }
        var line = lines[i]
        func spot() -> Int { r.int(0...line.count) }
        let junk: [[UInt8]] = [[0x1B], [0x1B, 0x5B, 0x32, 0x4A], [0x07], [0x08], [0x0D], [0x00], [0x7F], [0xC2, 0x9B], [0xE2, 0x80, 0xAE],
                               [0x22], [0x5C], [0x23], [0x09], [0xFF], [0xC3, 0x28], [0xED, 0xA0, 0x80]]
        let how: String
        switch r.int(0...9) {
        case 0:
            line.insert(contentsOf: junk[r.int(0...junk.count - 1)], at: spot())
            how = "junk bytes"
        case 1:
            if !line.isEmpty { line.remove(at: r.int(0...line.count - 1)) }
            how = "a byte deleted"
        case 2:
            if !line.isEmpty { line[r.int(0...line.count - 1)] = UInt8(truncatingIfNeeded: r.next()) }
            how = "a byte replaced"
        case 3:
            line.insert(contentsOf: Array((" " + tokens[r.int(0...tokens.count - 1)] + " ").utf8), at: spot())
            how = "a token inserted"
        case 4:
            line = Array(line.prefix(spot()))
            how = "cut short"
        case 5:
            if i + 1 < lines.count { lines.swapAt(i, i + 1); line = lines[i] }
            how = "swapped with the next line"
        case 6:
            line += Array(repeating: UInt8(ascii: "x"), count: 100_000)
            how = "100,000 more characters"
        case 7:
            line.append(0x0D)
            how = "CRLF"
        case 8:
            let words = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
            line = Array(words.shuffled(using: &r).joined(separator: [UInt8(ascii: " ")]))
            how = "words shuffled"
        default:
            line.insert(contentsOf: Array(tokens[r.int(0...tokens.count - 1)].utf8), at: spot())
            how = "a token glued in"
        }
        lines[i] = line
        return Broken(bytes: Data(lines.joined(separator: [0x0A])), line: i + 1, how: how)
    }

    public struct Report: Sendable {
        public var files = 0
        /// Broken files that were still valid (a comment, a shuffled header …).
        public var stillValid = 0
        /// Broken files rejected with a proper `FILE:LINE: message`.
        public var rejected = 0
        /// Warnings (themes).
        public var warnings = 0
        public var failures: [String] = []
    }

    static let scenarioTokens = ["at", "10m", "-5s", "99x", "1e9h", "\"", "\"unterminated", "\\u{110000}", "\\x", "\\q", "150%", "-1%",
                                 "push", "drop", "realtime", "flaky", "nobody", "send", "receive", "mode", "sideways", "#", "0s", "quit",
                                 "contact", "x\"y", "9999999999999999999999"]

    /// Breaks `count` scenario files (from `corpus`: name and text) and parses each.
    public static func checkScenarios(count: Int, seed: UInt64, corpus: [(String, String)]) -> Report {
        var r = RandomStream(seed: seed, concern: "scenario-file-fuzz")
        var report = Report()
        for _ in 0..<count {
            let (name, text) = corpus[r.int(0...corpus.count - 1)]
            let broken = breakLine(text, tokens: scenarioTokens, r: &r)
            let lineCount = broken.bytes.split(separator: 0x0A, omittingEmptySubsequences: false).count
            report.files += 1
            do {
                _ = try ScenarioParser.parse(data: broken.bytes, file: name)
                report.stillValid += 1
            } catch let error as ScenarioError {
                let text = error.description
                if !text.hasPrefix("\(name):\(error.line): ") || !(1...lineCount).contains(error.line) {
                    report.failures.append("\(broken.how) at line \(broken.line): error does not name a line of the file: \(text.prefix(200))")
                } else if !isOneSafeLine(text) {
                    report.failures.append("\(broken.how) at line \(broken.line): error is not one safe line: \(UntrustedText.visible(String(text.prefix(200))))")
                } else {
                    report.rejected += 1
                }
            } catch {
                report.failures.append("\(broken.how) at line \(broken.line): threw \(error)")
            }
        }
        return report
    }

    static let themeTokens = ["=", "{", "}", "[", "]", "[roles]", "\"", "fg", "bg", "bold", "true", "300", "-1", "purple", "\"title\"",
                              "{ fg = 1 }", "\"nope\" = 3", "name", "[[roles]]", "0x1F", "1e999", "'''", "#", "\"bold\" = \"yes\""]

    /// Breaks `count` theme files (from `corpus`) and loads each: never fatal, every warning
    /// one safe line naming the file, and what a warning says falls back does.
    public static func checkThemes(count: Int, seed: UInt64, corpus: [(String, String)]) -> Report {
        var r = RandomStream(seed: seed, concern: "theme-file-fuzz")
        var report = Report()
        for _ in 0..<count {
            let (name, text) = corpus[r.int(0...corpus.count - 1)]
            let broken = breakLine(text, tokens: themeTokens, r: &r)
            report.files += 1
            let (theme, warnings) = ThemeLoader.parse(data: broken.bytes, file: name)
            report.warnings += warnings.count
            if warnings.isEmpty { report.stillValid += 1 } else { report.rejected += 1 }
            for w in warnings where !w.hasPrefix(name + ":") || !isOneSafeLine(w) {
                report.failures.append("\(broken.how) at line \(broken.line): warning is not one safe line naming the file: \(UntrustedText.visible(String(w.prefix(200))))")
            }
            // What a warning says falls back does fall back.
            for w in warnings where w.hasSuffix("using the default theme") && theme.styles != Theme.default.styles {
                report.failures.append("\(broken.how) at line \(broken.line): \"\(w.prefix(120))\" but the theme is not the default")
            }
            for role in Role.allCases where warnings.contains(where: { $0.hasSuffix("\"\(role.rawValue)\" keeps the default theme's style") })
                && theme.style(for: role) != Theme.default.style(for: role) {
                report.failures.append("\(broken.how) at line \(broken.line): \(role.rawValue) was to keep the default style and did not")
            }
        }
        return report
    }

    /// A keys file using every kind of entry: the corpus the keys fuzzer breaks.
    public static let keysCorpus = [("keys.toml", "[keys]\nbackground = \"B\"\nsearch = [\"/\", \"ctrl-f\"]\nquit = \"Q\"\n[compose]\nkillWord = [\"ctrl-w\", \"ctrl-k\"]\nsend = \"enter\"\n")]

    static let keyTokens = ["=", "[", "]", "[keys]", "[compose]", "\"", "ctrl-", "^", "ctrl-h", "[#keys]", "quit", "send", "[\"a\", 3]",
                            "\"\"", "1e999", "'''", "#", "\u{1B}", "background = \"q\"", "quit = []"]

    /// Breaks `count` keys files (from `corpus`) and reads each: never fatal, every warning one
    /// safe line naming the file, a file refused whole gives the standard keys, and `quit`
    /// always has a key.
    public static func checkKeys(count: Int, seed: UInt64, corpus: [(String, String)]) -> Report {
        var r = RandomStream(seed: seed, concern: "keys-file-fuzz")
        var report = Report()
        for _ in 0..<count {
            let (name, text) = corpus[r.int(0...corpus.count - 1)]
            let broken = breakLine(text, tokens: keyTokens, r: &r)
            report.files += 1
            let (map, warnings) = KeyFile.parse(String(decoding: broken.bytes, as: UTF8.self), file: name)
            report.warnings += warnings.count
            if warnings.isEmpty { report.stillValid += 1 } else { report.rejected += 1 }
            for w in warnings where !w.hasPrefix(name) || !isOneSafeLine(w) {
                report.failures.append("\(broken.how) at line \(broken.line): warning is not one safe line naming the file: \(UntrustedText.visible(String(w.prefix(200))))")
            }
            for w in warnings where w.hasSuffix("using the standard keys") && map != .standard {
                report.failures.append("\(broken.how) at line \(broken.line): \"\(w.prefix(120))\" but the keys are not the standard ones")
            }
            if !map.global.contains(where: { $0.action == .quit && !$0.keys.isEmpty }) {
                report.failures.append("\(broken.how) at line \(broken.line): quit has no key")
            }
        }
        return report
    }

    /// One line, nothing a terminal would act on: no C0 or C1 control, DEL or bidi control.
    public static func isOneSafeLine(_ s: String) -> Bool {
        s.unicodeScalars.allSatisfy { c in
            switch c.value {
            case 0x00...0x1F, 0x7F, 0x80...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return false
            default: return true
            }
        }
    }
}
