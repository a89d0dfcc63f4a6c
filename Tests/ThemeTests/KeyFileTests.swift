import ChatUI
import Foundation
import Testing
import TestSupport
@testable import Config

/// `keys.toml` rebinds any action of the key table; the help follows; a bad file
/// gives warnings naming the file and the line and keeps the standard keys.
@Suite("keys.toml")
struct KeyFileTests {
    @Test("a rebound action answers its new keys, loses its old ones, and takes them from any other; the help shows them")
    func rebinds() {
        let (map, warnings) = KeyFile.parse("""
            [keys]
            background = "B"
            search = ["/", "ctrl-f"]
            syncNow = "b"
            [compose]
            killWord = "^k"
            """, file: "keys.toml")
        #expect(warnings.isEmpty)
        #expect(KeyTable.action(for: .char("B"), in: map.global) == .background)
        #expect(KeyTable.action(for: .char("b"), in: map.global) == .syncNow)
        #expect(KeyTable.action(for: .char("S"), in: map.global) == nil)  // syncNow's old key is free now
        #expect(KeyTable.action(for: .ctrl("f"), in: map.global) == .search)
        #expect(KeyTable.action(for: .ctrl("k"), in: map.compose) == .killWord)
        #expect(KeyTable.action(for: .ctrl("w"), in: map.compose) == nil)
        let help = KeyTable.helpSections(map).global
        #expect(help.contains { $0.label == "B" && $0.help == "send the app to the background" })
        #expect(help.contains { $0.label == "/ ^F" })
        // And the reducer dispatches with it.
        var s = ViewState()
        _ = ViewModel.reduce(&s, .keys(map))
        #expect(ViewModel.reduce(&s, .key(.char("B"))) == [.apply(.background)])
        #expect(ViewModel.reduce(&s, .key(.char("b"))) == [.apply(.sync)])
    }

    @Test("bad entries are warnings naming file and line; the rest of the file still applies", arguments: [
        ("[keys]\ndance = \"d\"", "keys.toml:2: unknown action \"dance\" in [keys]"),
        ("[keys]\nbackground = \"ctrl-\"", "keys.toml:2: \"ctrl-\" is not a key"),
        ("[keys]\nbackground = 3", "keys.toml:2: background must be a key"),
        ("[mouse]\nx = \"y\"", "keys.toml:1: unknown table [mouse]"),
        ("[keys\nbackground = \"B\"", "keys.toml:1: not valid TOML"),
        ("[keys]\nsyncNow = \"b\"", "keys.toml:2: background has no key left (syncNow took them)"),
        ("[keys]\nquit = \"Q\"\nbackground = \"Q\"", "quit had no key left; ^C quits"),
        ("[keys]\nbackground = \"Q\"\nquit = \"Q\"", "keys.toml:3: background has no key left (quit took them)"),
    ])
    func warnings(text: String, warning: String) {
        let (map, warnings) = KeyFile.parse(text + "\n[compose]\nsend = \"enter\"\n", file: "keys.toml")
        #expect(warnings.contains { $0.hasPrefix(warning) || $0.contains(warning) }, "\(warnings)")
        #expect(warnings.allSatisfy { !$0.contains("\n") })
        #expect(map.global.contains { $0.action == .quit && !$0.keys.isEmpty })
    }

    @Test("a control key the terminal reads as another (ctrl-h is Backspace, ctrl-i Tab, ctrl-m Enter) is a warning naming the file and line; the action keeps its keys",
          arguments: [("ctrl-h", "Bksp"), ("^I", "Tab"), ("ctrl-m", "Enter")])
    func sameByte(spec: String, readAs: String) {
        let (map, warnings) = KeyFile.parse("[compose]\n\nkillWord = \"\(spec)\"\n", file: "keys.toml")
        #expect(warnings == ["keys.toml:3: \"\(spec)\" reaches the app as \(readAs) (the terminal sends one byte for both); killWord keeps its keys"])
        #expect(KeyTable.action(for: .ctrl("w"), in: map.compose) == .killWord)
        // The adapter reads those bytes as the other key: one table (Key.control) for both.
        let byte = UInt32(spec.last!.lowercased().first!.asciiValue! - 96)
        #expect(Key.control(byte: byte)?.display == readAs)
    }

    @Test("the example of docs/keys.md gives no warning and does what its comments say")
    func docsExample() throws {
        let doc = try String(contentsOf: BuiltProducts.packageRoot.appendingPathComponent("docs/keys.md"), encoding: .utf8)
        let example = try #require(doc.components(separatedBy: "```toml\n").dropFirst().first?.components(separatedBy: "```").first)
        let (map, warnings) = KeyFile.parse(example, file: "docs/keys.md")
        #expect(warnings.isEmpty, "\(warnings)")
        #expect(KeyTable.action(for: .char("B"), in: map.global) == .background)
        #expect(KeyTable.action(for: .char("b"), in: map.global) == nil)
        #expect(KeyTable.action(for: .ctrl("w"), in: map.compose) == .killWord)
    }

    @Test("a table header the TOML library aborts on ([#keys], as for themes) is a warning with its line, and the standard keys; the chat starts", arguments: [
        "[#keys]", "[ {keys]", "[[ #x]]", "  [\u{1B}keys]", "[\u{00A0}keys]",
    ])
    func unsafeHeader(header: String) {
        let (map, warnings) = KeyFile.parse("[keys]\nbackground = \"B\"\n" + header + "\n", file: "keys.toml")
        #expect(map == .standard)
        #expect(warnings == ["keys.toml:3: a table header must start with a name, such as [keys]; using the standard keys"])
    }

    @Test("the file is found in $XDG_CONFIG_HOME/synchat/keys.toml; none means the standard keys")
    func found() throws {
        let dir = try TemporaryDirectory("keys")
        defer { dir.remove() }
        #expect(KeyFile.load(environment: ["XDG_CONFIG_HOME": dir.path]).0 == .standard)
        try FileManager.default.createDirectory(atPath: dir.file("synchat"), withIntermediateDirectories: true)
        try "[keys]\nbackground = \"B\"\n".write(toFile: dir.file("synchat/keys.toml"), atomically: true, encoding: .utf8)
        let (map, warnings) = KeyFile.load(environment: ["XDG_CONFIG_HOME": dir.path])
        #expect(warnings.isEmpty && KeyTable.action(for: .char("B"), in: map.global) == .background)
    }

    @Test("every action a key can have is named in the keys document", arguments: KeyAction.allCases)
    func documented(action: KeyAction) throws {
        let doc = try String(contentsOf: BuiltProducts.packageRoot.appendingPathComponent("docs/keys.md"), encoding: .utf8)
        #expect(doc.contains("`\(action.rawValue)`"))
    }
}
