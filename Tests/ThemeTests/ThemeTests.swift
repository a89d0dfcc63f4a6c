import ChatUI
import Foundation
import Testing
@testable import TerminalUI

@Suite("Themes")
struct ThemeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let themes = root.appendingPathComponent("Themes").path

    @Test("Themes/default.toml is the compiled-in default")
    func defaultMatches() throws {
        let (theme, warnings) = try ThemeLoader.read(path: Self.themes + "/default.toml")
        #expect(warnings.isEmpty)
        #expect(theme.styles == Theme.default.styles)
    }

    @Test("every shipped theme reads without a warning", arguments: ["default", "light", "high-contrast", "template"])
    func shippedThemes(name: String) throws {
        let (theme, warnings) = try ThemeLoader.read(path: Self.themes + "/\(name).toml")
        #expect(warnings.isEmpty)
        #expect(theme.name == name)
        if name != "template" { #expect(theme.styles.count >= 20) }
    }

    @Test("the template lists every role")
    func templateListsEveryRole() throws {
        let text = try String(contentsOfFile: Self.themes + "/template.toml", encoding: .utf8)
        for role in Role.allCases {
            #expect(text.contains("# \"\(role.rawValue)\" = {"), "template lacks \(role.rawValue)")
        }
    }

    @Test("colours by name and number, attributes, and 'default'")
    func values() throws {
        let (t, w) = try ThemeLoader.parse("""
            [roles]
            "banner" = { fg = "bright-cyan", bg = 17, bold = true, dim = true, reverse = true, underline = true }
            "title" = { fg = "default" }
            """, file: "x.toml")
        #expect(w.isEmpty)
        #expect(t.style(for: .banner) == Style(fg: 14, bg: 17, bold: true, dim: true, reverse: true, underline: true))
        #expect(t.style(for: .title) == Style())
    }

    @Test("an unknown key or role is a warning naming the file and line")
    func warnings() throws {
        let (t, w) = try ThemeLoader.parse("""
            name = "mine"
            flavour = "mint"
            [roles]
            "list.unread" = { fg = "red", sparkle = true }
            "no.such.role" = { fg = "red" }
            """, file: "mine.toml")
        #expect(t.style(for: .listUnread).fg == 1)
        #expect(w.sorted() == [
            "mine.toml:2: unknown key \"flavour\" ignored",
            "mine.toml:4: unknown key \"sparkle\" in role \"list.unread\" ignored",
            "mine.toml:5: unknown role \"no.such.role\" ignored",
        ])
    }

    @Test("a bad value is an error naming the file and line", arguments: [
        ("[roles]\n\"title\" = { fg = \"purple\" }", 2, "title.fg: unknown colour \"purple\""),
        ("[roles]\n\"title\" = { bg = 300 }", 2, "title.bg: colour 300 is not in 0–255"),
        ("[roles]\n\n[roles.\"banner\"]\nfg = \"red\"\nbold = \"yes\"", 5, "banner.bold must be true or false"),
        ("[roles]\n\"title\" = \"red\"", 2, "role \"title\" must be a table"),
        ("name = 3", 1, "\"name\" must be a string"),
        ("[roles]\n\"title\" = { fg = ", 2, "not valid TOML"),
    ])
    func errors(text: String, line: Int, message: String) {
        #expect {
            try ThemeLoader.parse(text, file: "bad.toml")
        } throws: { error in
            guard let e = error as? ThemeError else { return false }
            return e.line == line && e.message.contains(message) && e.description.hasPrefix("bad.toml:\(line): ")
        }
    }

    @Test("a name is looked up in $XDG_CONFIG_HOME/synchat/themes, then ./Themes; default is compiled in; NO_COLOR keeps attributes only")
    func lookup() throws {
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("synchat-theme-\(UUID().uuidString)")
        let config = tmp.appendingPathComponent("config/synchat/themes")
        let cwd = tmp.appendingPathComponent("cwd/Themes")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: cwd, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: tmp) }
        try "name = \"from-config\"".write(to: config.appendingPathComponent("mine.toml"), atomically: true, encoding: .utf8)
        try "name = \"from-cwd\"".write(to: cwd.appendingPathComponent("mine.toml"), atomically: true, encoding: .utf8)
        try "name = \"only-cwd\"".write(to: cwd.appendingPathComponent("other.toml"), atomically: true, encoding: .utf8)
        let env = ["XDG_CONFIG_HOME": tmp.appendingPathComponent("config").path]
        let dir = tmp.appendingPathComponent("cwd").path
        #expect(try ThemeLoader.load("mine", environment: env, currentDirectory: dir).0.name == "from-config")
        #expect(try ThemeLoader.load("other", environment: env, currentDirectory: dir).0.name == "only-cwd")
        let fallback = try ThemeLoader.load(nil, environment: env, currentDirectory: dir).0
        #expect(fallback == Theme.default)
        #expect(try ThemeLoader.load(cwd.appendingPathComponent("mine.toml").path, environment: env, currentDirectory: "/").0.name == "from-cwd")
        #expect(throws: ThemeError.self) { try ThemeLoader.load("missing", environment: env, currentDirectory: dir) }
        #expect(throws: ThemeError.self) { try ThemeLoader.load("../etc", environment: env, currentDirectory: dir) }
        var noColor = env
        noColor["NO_COLOR"] = "1"
        let plain = try ThemeLoader.load(nil, environment: noColor, currentDirectory: dir).0
        #expect(!plain.colour)
        #expect(plain.style(for: .statusPushUnreliable).bold)
    }
}
