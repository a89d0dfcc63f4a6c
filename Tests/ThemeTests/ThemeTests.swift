import ChatUI
import Foundation
import Testing
import TestSupport
@testable import Config

@Suite("Themes")
struct ThemeTests {
    static let root = BuiltProducts.packageRoot
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
        let (t, w) = ThemeLoader.parse("""
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
        let (t, w) = ThemeLoader.parse("""
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

    @Test("a bad value is a warning naming the file and line, and that role keeps the default theme's style", arguments: [
        ("[roles]\n\"title\" = { fg = \"purple\" }", 2, "title.fg: unknown colour \"purple\"", Role.title),
        ("[roles]\n\"title\" = { bg = 300 }", 2, "title.bg: colour 300 is not in 0–255", Role.title),
        ("[roles]\n\n[roles.\"banner\"]\nfg = \"red\"\nbold = \"yes\"", 5, "banner.bold must be true or false", Role.banner),
        ("[roles]\n\"title\" = \"red\"", 2, "role \"title\" must be a table", Role.title),
    ])
    func badValues(text: String, line: Int, message: String, role: Role) {
        let (theme, warnings) = ThemeLoader.parse(text, file: "bad.toml")
        #expect(warnings.count == 1)
        #expect(warnings.first.map { $0.hasPrefix("bad.toml:\(line): ") && $0.contains(message) && $0.contains("keeps the default theme's style") } == true)
        #expect(theme.style(for: role) == Theme.default.style(for: role))
    }

    @Test("regression: a table header such as [#roles] aborted the process inside the TOML library; now it is a warning (a fuzzer finding)", arguments: [
        "[#roles]", "[ {roles]", "[[ #x]]", "  [\u{1B}roles]", "[\u{00A0}roles]",
    ])
    func unsafeHeader(header: String) {
        let (theme, warnings) = ThemeLoader.parse("name = \"x\"\n" + header + "\n\"title\" = { fg = 1 }\n", file: "bad.toml")
        #expect(theme == Theme.default)
        #expect(warnings == ["bad.toml:2: a table header must start with a name, such as [roles]; using the default theme"])
    }

    @Test("a file that is not TOML, or a bad name, is a warning too: the default theme is used")
    func notToml() {
        let (theme, warnings) = ThemeLoader.parse("[roles]\n\"title\" = { fg = ", file: "bad.toml")
        #expect(theme == Theme.default)
        #expect(warnings.count == 1 && warnings[0].hasPrefix("bad.toml:2: not valid TOML") && warnings[0].hasSuffix("using the default theme"))
        let (named, w2) = ThemeLoader.parse("name = 3", file: "bad.toml")
        #expect(named.name == "bad")
        #expect(w2 == ["bad.toml:1: \"name\" must be a string; ignored"])
    }

    @Test("a name is looked up in $XDG_CONFIG_HOME/synchat/themes, then among the shipped themes, whatever the current directory; NO_COLOR keeps attributes only")
    func lookup() throws {
        let scratch = try TemporaryDirectory("theme")
        let tmp = scratch.url
        let config = tmp.appendingPathComponent("config/synchat/themes")
        let cwd = tmp.appendingPathComponent("cwd/Themes")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: cwd, withIntermediateDirectories: true)
        defer { scratch.remove() }
        try "name = \"from-config\"".write(to: config.appendingPathComponent("mine.toml"), atomically: true, encoding: .utf8)
        try "name = \"my-light\"".write(to: config.appendingPathComponent("light.toml"), atomically: true, encoding: .utf8)
        try "name = \"only-cwd\"".write(to: cwd.appendingPathComponent("other.toml"), atomically: true, encoding: .utf8)
        let env = ["XDG_CONFIG_HOME": tmp.appendingPathComponent("config").path]
        #expect(try ThemeLoader.load("mine", environment: env).0.name == "from-config")
        #expect(try ThemeLoader.load("light", environment: env).0.name == "my-light")  // the user's own comes first
        // The shipped ones need no file and no directory: the process's directory is not asked.
        let shipped = try ThemeLoader.load("high-contrast", environment: [:])
        #expect(shipped.0.name == "high-contrast" && shipped.1.isEmpty)
        #expect(try ThemeLoader.load("light", environment: [:]).0.styles == ThemeLoader.read(path: Self.themes + "/light.toml").0.styles)
        #expect(throws: ThemeError.self) { try ThemeLoader.load("other", environment: env) }  // ./Themes is not a place
        #expect(try ThemeLoader.load(nil, environment: env).0 == Theme.default)
        #expect(try ThemeLoader.load(cwd.appendingPathComponent("other.toml").path, environment: env).0.name == "only-cwd")  // a path is a path
        #expect(throws: ThemeError.self) { try ThemeLoader.load("missing", environment: env) }
        #expect(throws: ThemeError.self) { try ThemeLoader.load("../etc", environment: env) }
        var noColor = env
        noColor["NO_COLOR"] = "1"
        let plain = try ThemeLoader.load(nil, environment: noColor).0
        #expect(!plain.colour)
        #expect(plain.style(for: .statusPushUnreliable).bold)
    }

    @Test("the themes compiled into the binary are the files of Themes/, every one (tools/themes/embed.py writes them)")
    func embeddedMatchFiles() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.themes).filter { $0.hasSuffix(".toml") }
        #expect(Set(files.map { String($0.dropLast(5)) }) == Set(ShippedThemes.files.keys))
        for file in files {
            let text = try String(contentsOfFile: Self.themes + "/" + file, encoding: .utf8)
            #expect(ShippedThemes.files[String(file.dropLast(5))] == text, "\(file) differs from the compiled-in copy: run python3 tools/themes/embed.py")
        }
    }

    @Test("XDG rules for themes: a relative XDG_CONFIG_HOME is ignored for $HOME/.config; no usable config directory just means no user themes")
    func configDirectoryRules() throws {
        let fm = FileManager.default
        let scratch = try TemporaryDirectory("theme")
        let tmp = scratch.url
        let home = tmp.appendingPathComponent("home")
        let relative = tmp.appendingPathComponent("relative")
        let cwd = tmp.appendingPathComponent("cwd")
        for dir in [home.appendingPathComponent(".config/synchat/themes"), relative.appendingPathComponent("synchat/themes"), cwd.appendingPathComponent("Themes")] {
            try fm.createDirectory(at: dir, withIntermediateDirectories: true)
        }
        defer { scratch.remove() }
        try "name = \"from-home\"".write(to: home.appendingPathComponent(".config/synchat/themes/mine.toml"), atomically: true, encoding: .utf8)
        try "name = \"from-relative\"".write(to: relative.appendingPathComponent("synchat/themes/mine.toml"), atomically: true, encoding: .utf8)
        try "name = \"from-cwd\"".write(to: cwd.appendingPathComponent("Themes/mine.toml"), atomically: true, encoding: .utf8)
        // A relative path that, read from the process's current directory, does reach a theme.
        let depth = fm.currentDirectoryPath.split(separator: "/").count
        let relativePath = String(repeating: "../", count: depth) + relative.path.dropFirst()
        #expect(fm.fileExists(atPath: relativePath + "/synchat/themes/mine.toml"))
        let env = ["XDG_CONFIG_HOME": relativePath, "HOME": home.path]
        #expect(try ThemeLoader.load("mine", environment: env).0.name == "from-home")
        for noConfig in [[:], ["HOME": ""], ["XDG_CONFIG_HOME": relativePath]] as [[String: String]] {
            #expect(throws: ThemeError.self, "\(noConfig)") { try ThemeLoader.load("mine", environment: noConfig) }
            #expect(try ThemeLoader.load("light", environment: noConfig).0.name == "light", "\(noConfig)")
            #expect(try ThemeLoader.load(nil, environment: noConfig).0 == Theme.default, "\(noConfig)")
            #expect {
                try ThemeLoader.load("missing", environment: noConfig)
            } throws: { error in
                (error as? ThemeError)?.description
                    == "missing: no such theme (shipped: default, high-contrast, light; yours go in $XDG_CONFIG_HOME/synchat/themes/missing.toml, copied from Themes/template.toml)"
            }
        }
    }
}
