import Foundation
import Testing

/// In a real terminal: the shipped themes are part of the binary, found from any
/// directory; a theme the profile remembers that has gone falls back once, then quietly.
@Suite("End to end: themes from anywhere", .serialized, .timingSensitive)
struct ThemeEndToEndTests {
    init() throws { try TmuxSession.requireReady() }

    @Test("--theme light works launched from a directory without Themes/, and the profile remembers it")
    func shippedFromAnywhere() throws {
        let dir = try TemporaryDirectory("themes")
        defer { dir.remove() }
        let environment = ["XDG_DATA_HOME": dir.file("data"), "XDG_CONFIG_HOME": dir.file("config")]
        for arguments in ["--profile themed --theme light", "--profile themed"] {
            let t = try TmuxSession(arguments: arguments, environment: environment, directory: dir.path)
            defer { t.close() }
            let screen = t.wait(for: "foreground")
            #expect(!screen.contains("theme:"), "\(arguments)")
            try t.keys("q")
            t.wait(for: "EXIT=0")
        }
    }

    @Test("a remembered theme that has gone: one warning on the next launch, none after")
    func goneThemeOnce() throws {
        let dir = try TemporaryDirectory("themes")
        defer { dir.remove() }
        let themes = dir.file("config/synchat/themes")
        try FileManager.default.createDirectory(atPath: themes, withIntermediateDirectories: true)
        try "name = \"mine\"\n".write(toFile: themes + "/mine.toml", atomically: true, encoding: .utf8)
        let environment = ["XDG_DATA_HOME": dir.file("data"), "XDG_CONFIG_HOME": dir.file("config")]
        do {
            let t = try TmuxSession(arguments: "--profile p --theme mine", environment: environment, directory: dir.path)
            defer { t.close() }
            t.wait(for: "foreground")
            try t.keys("q")
            t.wait(for: "EXIT=0")
        }
        try FileManager.default.removeItem(atPath: themes + "/mine.toml")
        do {
            let t = try TmuxSession(width: 160, arguments: "--profile p", environment: environment, directory: dir.path)
            defer { t.close() }
            t.wait(for: "mine: no such theme")
            try t.keys("q")
            t.wait(for: "EXIT=0")
        }
        do {
            let t = try TmuxSession(width: 160, arguments: "--profile p", environment: environment, directory: dir.path)
            defer { t.close() }
            let screen = t.wait(for: "foreground")
            #expect(!t.poll(seconds: 1.5) { $0.contains("no such theme") }, "said again: \(screen)")
            try t.keys("q")
            t.wait(for: "EXIT=0")
        }
    }
}
