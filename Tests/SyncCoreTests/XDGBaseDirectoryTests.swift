import Testing
@testable import SyncCore

@Suite("XDG base directories (profiles and themes)")
struct XDGBaseDirectoryTests {
    func data(_ environment: [String: String]) -> Result<String, XDGBaseDirectory.Unusable> {
        Result { () throws(XDGBaseDirectory.Unusable) in try XDGBaseDirectory.data.path(in: environment) }
    }

    func config(_ environment: [String: String]) -> Result<String, XDGBaseDirectory.Unusable> {
        Result { () throws(XDGBaseDirectory.Unusable) in try XDGBaseDirectory.config.path(in: environment) }
    }

    @Test("an absolute XDG_DATA_HOME / XDG_CONFIG_HOME is used as it is, without a trailing slash")
    func absoluteVariable() {
        #expect(data(["XDG_DATA_HOME": "/srv/data", "HOME": "/home/ann"]) == .success("/srv/data"))
        #expect(data(["XDG_DATA_HOME": "/srv/data//"]) == .success("/srv/data"))
        #expect(data(["XDG_DATA_HOME": "/"]) == .success("/"))
        #expect(config(["XDG_CONFIG_HOME": "/etc/ann", "HOME": "/home/ann"]) == .success("/etc/ann"))
    }

    @Test("unset or empty, the variable gives way to $HOME/.local/share and $HOME/.config")
    func defaultUnderHome() {
        #expect(data(["HOME": "/home/ann"]) == .success("/home/ann/.local/share"))
        #expect(data(["XDG_DATA_HOME": "", "HOME": "/home/ann/"]) == .success("/home/ann/.local/share"))
        #expect(config(["HOME": "/home/ann"]) == .success("/home/ann/.config"))
        #expect(config(["XDG_CONFIG_HOME": "", "HOME": "/"]) == .success("/.config"))
    }

    @Test("a relative XDG_DATA_HOME / XDG_CONFIG_HOME is ignored, as the spec says, never read from the current directory")
    func relativeIgnored() {
        #expect(data(["XDG_DATA_HOME": "data", "HOME": "/home/ann"]) == .success("/home/ann/.local/share"))
        #expect(data(["XDG_DATA_HOME": "./data", "HOME": "/home/ann"]) == .success("/home/ann/.local/share"))
        #expect(config(["XDG_CONFIG_HOME": "~/.config", "HOME": "/home/ann"]) == .success("/home/ann/.config"))
    }

    @Test("HOME unset, empty or relative gives no directory (never /root, the filesystem root or the current directory), saying why")
    func noHome() {
        #expect(data([:]) == .failure(.init(description: "XDG_DATA_HOME is not set and HOME is not set")))
        #expect(data(["HOME": ""]) == .failure(.init(description: "XDG_DATA_HOME is not set and HOME is empty")))
        #expect(data(["XDG_DATA_HOME": "", "HOME": "ann"]) == .failure(.init(description: "XDG_DATA_HOME is empty and HOME (ann) is not an absolute path")))
        #expect(config(["XDG_CONFIG_HOME": "cfg\u{1B}[2J"]) == .failure(.init(description: "XDG_CONFIG_HOME (cfg^[[2J) is not an absolute path and HOME is not set")))
        // Still fine when the variable itself is absolute.
        #expect(data(["XDG_DATA_HOME": "/srv/data", "HOME": ""]) == .success("/srv/data"))
    }
}
