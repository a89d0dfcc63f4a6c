import ChatUI
import Foundation
import SyncCore
import TOMLKit

/// A theme file that cannot be used: `FILE:LINE: message`.
public struct ThemeError: Error, Equatable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var message: String
    public var description: String { line > 0 ? "\(file):\(line): \(message)" : "\(file): \(message)" }
}

/// Reads `Themes/*.toml`:
///
/// ```toml
/// name = "default"
/// [roles]
/// "status.push.unreliable" = { fg = "white", bg = "red", bold = true }
/// ```
///
/// Colours are names (`black`, `red`, …, `bright-white`, `default`) or 0–255; attributes are
/// `bold`, `dim`, `reverse`, `underline` (true/false). A theme file never stops the chat:
/// an unknown key or role, a bad value or a file that is not TOML at all is a warning naming
/// the file and the line, and what cannot be read falls back to the default theme (the role
/// keeps the default's style; a file that does not parse is the default theme).
public enum ThemeLoader {
    public static let colourNames: [String: Int] = [
        "black": 0, "red": 1, "green": 2, "yellow": 3, "blue": 4, "magenta": 5, "cyan": 6, "white": 7,
        "bright-black": 8, "grey": 8, "gray": 8, "bright-red": 9, "bright-green": 10, "bright-yellow": 11,
        "bright-blue": 12, "bright-magenta": 13, "bright-cyan": 14, "bright-white": 15,
    ]

    /// Parses a theme. Returns it with its warnings; never fails.
    public static func parse(_ text: String, file: String) -> (Theme, [String]) {
        let table: TOMLTable
        switch TOMLText.read(text, file: file, example: "[roles]", fallback: "the default theme") {
        case .table(let t): table = t
        case .refused(let warning): return (.default, [warning])
        }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var warnings: [String] = []
        var theme = Theme(name: (file as NSString).lastPathComponent.replacingOccurrences(of: ".toml", with: ""), styles: [:])
        for key in table.keys.sorted() {
            switch key {
            case "name":
                if let name = table[key]?.string {
                    theme.name = name
                } else {
                    warnings.append("\(file):\(locate(lines, key: "name")): \"name\" must be a string; ignored")
                }
            case "roles":
                guard let roles = table[key]?.table else {
                    warnings.append("\(file):\(locate(lines, key: "roles")): \"roles\" must be a table; using the default theme's roles")
                    theme.styles = Theme.default.styles
                    continue
                }
                for roleName in roles.keys.sorted() {
                    let at = locate(lines, role: roleName)
                    guard let role = Role(rawValue: roleName) else {
                        warnings.append("\(file):\(at): unknown role \"\(UntrustedText.visible(roleName))\" ignored")
                        continue
                    }
                    do {
                        guard let spec = roles[roleName]?.table else {
                            throw ThemeError(file: file, line: at, message: "role \"\(roleName)\" must be a table such as { fg = \"red\", bold = true }")
                        }
                        theme.styles[role] = try style(spec, role: roleName, file: file, lines: lines, warnings: &warnings)
                    } catch let e as ThemeError {
                        warnings.append("\(e.description); \"\(roleName)\" keeps the default theme's style")
                        theme.styles[role] = Theme.default.styles[role]
                    } catch {
                        theme.styles[role] = Theme.default.styles[role]
                    }
                }
            default:
                warnings.append("\(file):\(locate(lines, key: key)): unknown key \"\(UntrustedText.visible(key))\" ignored")
            }
        }
        return (theme, warnings.map(UntrustedText.visible))
    }


    private static func style(_ spec: TOMLTable, role: String, file: String, lines: [String], warnings: inout [String]) throws -> Style {
        var s = Style()
        for key in spec.keys.sorted() {
            let at = locate(lines, role: role, key: key)
            let value = spec[key]!
            switch key {
            case "fg", "bg":
                let colour = try self.colour(value, file: file, line: at, what: "\(role).\(key)")
                if key == "fg" { s.fg = colour } else { s.bg = colour }
            case "bold", "dim", "reverse", "underline":
                guard let b = value.bool else {
                    throw ThemeError(file: file, line: at, message: "\(role).\(key) must be true or false")
                }
                switch key {
                case "bold": s.bold = b
                case "dim": s.dim = b
                case "reverse": s.reverse = b
                default: s.underline = b
                }
            default:
                warnings.append("\(file):\(at): unknown key \"\(UntrustedText.visible(key))\" in role \"\(role)\" ignored")
            }
        }
        return s
    }

    private static func colour(_ value: TOMLValueConvertible, file: String, line: Int, what: String) throws -> Int? {
        if let n = value.int {
            guard (0...255).contains(n) else { throw ThemeError(file: file, line: line, message: "\(what): colour \(n) is not in 0–255") }
            return n
        }
        if let name = value.string {
            if name == "default" { return nil }
            guard let n = colourNames[name] else {
                throw ThemeError(file: file, line: line, message: "\(what): unknown colour \"\(UntrustedText.visible(name))\" (use a name such as red or bright-blue, or 0–255)")
            }
            return n
        }
        throw ThemeError(file: file, line: line, message: "\(what): a colour is a name or a number 0–255")
    }

    // MARK: - Where things are

    /// The line of a top-level `key = …` (1-based; 0 when not found).
    static func locate(_ lines: [String], key: String) -> Int {
        (lines.firstIndex { $0.trimmingCharacters(in: .whitespaces).hasPrefix(key) && $0.contains("=") || $0.contains("[\(key)") }).map { $0 + 1 } ?? 0
    }

    /// The line of a role (and of one of its keys, when given).
    static func locate(_ lines: [String], role: String, key: String? = nil) -> Int {
        guard let start = lines.firstIndex(where: { $0.contains("\"\(role)\"") || $0.contains("[roles.\(role)]") }) else { return 0 }
        guard let key else { return start + 1 }
        // The key on the role's own line (inline table), or in the lines of its section.
        for i in start..<lines.count {
            let l = lines[i]
            if i > start, l.trimmingCharacters(in: .whitespaces).hasPrefix("[") || l.contains("\" = {") { break }
            if l.range(of: "\\b\(key)\\s*=", options: .regularExpression) != nil { return i + 1 }
        }
        return start + 1
    }

    // MARK: - Finding a theme

    /// `--theme NAME|PATH`: a path when it names a file, else `NAME.toml` in
    /// `$XDG_CONFIG_HOME/synchat/themes/` (default `~/.config/…`, by the rules of
    /// `XDGBaseDirectory`), then the shipped themes, compiled in (`ShippedThemes`, from
    /// `Themes/`), whatever the current directory. `NO_COLOR` turns colours off, keeping
    /// attributes.
    public static func load(_ nameOrPath: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> (Theme, [String]) {
        var (theme, warnings) = try find(nameOrPath ?? "default", environment: environment)
        if let noColor = environment["NO_COLOR"], !noColor.isEmpty { theme.colour = false }
        return (theme, warnings)
    }

    /// The themes a person picks from: the shipped ones but the template, which is a file to
    /// copy (every role commented out), not a look.
    public static var shippedNames: [String] { ShippedThemes.files.keys.filter { $0 != "template" }.sorted() }

    static func find(_ name: String, environment: [String: String]) throws -> (Theme, [String]) {
        let fm = FileManager.default
        if name.contains("/") || name.hasSuffix(".toml") {
            return try read(path: name)
        }
        guard name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw ThemeError(file: name, line: 0, message: "a theme name has letters, digits, - and _ only")
        }
        // No usable config directory (HOME unset, say) just means no user themes. A user's
        // theme of a shipped theme's name is the user's choice: it comes first.
        let config = try? XDGBaseDirectory.config.path(in: environment)
        let userPath = config.map { $0 + "/synchat/themes/\(name).toml" }
        if let userPath, fm.fileExists(atPath: userPath) {
            return try read(path: userPath)
        }
        if name == "default" { return (.default, []) }
        if let text = ShippedThemes.files[name] { return parse(text, file: "\(name) (shipped)") }
        throw ThemeError(file: name, line: 0, message: "no such theme (shipped: \(shippedNames.joined(separator: ", ")); yours go in \(userPath ?? "$XDG_CONFIG_HOME/synchat/themes/\(name).toml"), copied from Themes/template.toml)")
    }

    static func read(path: String) throws -> (Theme, [String]) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ThemeError(file: path, line: 0, message: FileManager.default.fileExists(atPath: path) ? "cannot read the file" : "no such file")
        }
        return parse(data: data, file: path)
    }

    /// Parses a file's bytes; text that is not UTF-8 is a warning naming the line, and the default theme.
    public static func parse(data: Data, file: String) -> (Theme, [String]) {
        guard let text = String(data: data, encoding: .utf8) else {
            return (.default, ["\(file):\(firstNonUTF8Line(data)): not UTF-8 text; using the default theme"])
        }
        return parse(text, file: file)
    }
}

private func firstNonUTF8Line(_ data: Data) -> Int {
    UntrustedText.firstInvalidUTF8([UInt8](data))?.line ?? 0
}
