import ChatUI
import Foundation
import SyncCore
import TOMLKit

/// `$XDG_CONFIG_HOME/synchat/keys.toml`: rebinds any action of the key table.
///
/// ```toml
/// [keys]                 # outside the compose line
/// background = "B"
/// search = ["/", "ctrl-f"]
/// [compose]              # inside it
/// killWord = ["ctrl-w", "ctrl-k"]
/// ```
///
/// An action is named as in `KeyAction` (`synchat` lists them in the help's docs); a key is
/// one character, `space`, `tab`, `enter`, `esc`, `up`, `down`, `left`, `right`, `home`,
/// `end`, `pgup`, `pgdn`, `backspace`, `delete`, or `ctrl-X`. A bad file never stops the
/// chat: each problem is a warning naming the file and the line, and what could not be read
/// keeps the standard keys. A key given to one action is taken from any other.
public enum KeyFile {
    /// The keys in force: the file's, over the standard ones, with its warnings.
    public static func load(environment: [String: String] = ProcessInfo.processInfo.environment) -> (KeyMap, [String]) {
        guard let config = try? XDGBaseDirectory.config.path(in: environment) else { return (.standard, []) }
        let path = config + "/synchat/keys.toml"
        guard let data = FileManager.default.contents(atPath: path) else { return (.standard, []) }
        guard let text = String(data: data, encoding: .utf8) else {
            return (.standard, ["\(path): not UTF-8 text; using the standard keys"])
        }
        return parse(text, file: path)
    }

    public static func parse(_ text: String, file: String) -> (KeyMap, [String]) {
        let table: TOMLTable
        switch TOMLText.read(text, file: file, example: "[keys]", fallback: "the standard keys") {
        case .table(let t): table = t
        case .refused(let warning): return (.standard, [warning])
        }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        func line(of key: String) -> Int {
            (lines.firstIndex { $0.trimmingCharacters(in: .whitespaces).hasPrefix(key) || $0.contains("\"\(key)\"") }).map { $0 + 1 } ?? 0
        }
        var map = KeyMap.standard
        var warnings: [String] = []
        for section in table.keys.sorted() {
            let inCompose: Bool
            switch section {
            case "keys": inCompose = false
            case "compose": inCompose = true
            default:
                warnings.append(UntrustedText.visible("\(file):\(line(of: "[\(section)")): unknown table [\(section)] (expected [keys] or [compose]); ignored"))
                continue
            }
            guard let bindings = table[section]?.table else {
                warnings.append("\(file):\(line(of: section)): \(section) must be a table such as [\(section)]; ignored")
                continue
            }
            let actions = (inCompose ? map.compose : map.global).map(\.action)
            for name in bindings.keys.sorted(by: { (line(of: $0), $0) < (line(of: $1), $1) }) {  // in the file's order
                let at = line(of: name)
                guard let action = KeyAction(rawValue: name), actions.contains(action) else {
                    let known = actions.map(\.rawValue).joined(separator: ", ")
                    warnings.append(UntrustedText.visible("\(file):\(at): unknown action \"\(name)\" in [\(section)] (known: \(known)); ignored"))
                    continue
                }
                let specs: [String]
                if let one = bindings[name]?.string { specs = [one] }
                else if let many = bindings[name]?.array, case let strings = many.compactMap(\.string), strings.count == many.count, !strings.isEmpty { specs = strings }
                else {
                    warnings.append("\(file):\(at): \(name) must be a key such as \"B\" or a list such as [\"/\", \"ctrl-f\"]; it keeps its keys")
                    continue
                }
                var keys: [Key] = []
                var bad: String?
                var same: (spec: String, readAs: Key)?
                for spec in specs {
                    if let key = parseKey(spec) {
                        if let other = key.readAs { same = (spec, other) } else if !keys.contains(key) { keys.append(key) }
                    } else { bad = spec }
                }
                if let same {
                    // A binding no terminal can send: it would take the key it is read as (ctrl-h is Backspace).
                    warnings.append(UntrustedText.visible("\(file):\(at): \"\(same.spec)\" reaches the app as \(same.readAs.display) (the terminal sends one byte for both); \(name) keeps its keys"))
                    continue
                }
                if let bad {
                    warnings.append(UntrustedText.visible("\(file):\(at): \"\(bad)\" is not a key (a character, space, tab, enter, esc, up, down, left, right, home, end, pgup, pgdn, backspace, delete or ctrl-X); \(name) keeps its keys"))
                    continue
                }
                for orphan in map.rebind(action, to: keys, inCompose: inCompose) {
                    warnings.append("\(file):\(at): \(orphan.rawValue) has no key left (\(name) took them)")
                }
            }
        }
        // Whatever the file says, there is a way out.
        if !map.global.contains(where: { $0.action == .quit && !$0.keys.isEmpty }) {
            map.rebind(.quit, to: [.ctrl("c")], inCompose: false)
            warnings.append("\(file): quit had no key left; ^C quits")
        }
        return (map, warnings)
    }

    /// `B`, `space`, `ctrl-f` (or `^F`), `pgdn`, …; nil for anything else.
    public static func parseKey(_ spec: String) -> Key? {
        let named: [String: Key] = [
            "space": .char(" "), "tab": .tab, "enter": .enter, "return": .enter, "esc": .escape, "escape": .escape,
            "up": .up, "down": .down, "left": .left, "right": .right, "home": .home, "end": .end,
            "pgup": .pageUp, "pageup": .pageUp, "pgdn": .pageDown, "pagedown": .pageDown,
            "backspace": .backspace, "delete": .delete, "del": .delete,
            "alt-enter": .altEnter, "m-enter": .altEnter, "meta-enter": .altEnter,
        ]
        if spec.count == 1, let c = spec.first, !c.isWhitespace, c.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) {
            return .char(c)
        }
        let lower = spec.lowercased()
        if let key = named[lower] { return key }
        for prefix in ["ctrl-", "c-", "^"] where lower.hasPrefix(prefix) {
            let rest = lower.dropFirst(prefix.count)
            if rest.count == 1, let c = rest.first, c.isASCII, c.isLetter { return .ctrl(c) }
        }
        return nil
    }
}
