import Foundation
import Testing

/// A real full filesystem: a 1 MiB tmpfs holds the profile, a filler file takes the rest.
/// Needs root to mount (as CI and the dev machines run); skipped, saying so, elsewhere.
@Suite("End to end: the profile on a full disk", .serialized, .timingSensitive)
struct FullDiskEndToEndTests {
    static let mountPoint = NSTemporaryDirectory() + "synchat-full-\(getpid())"

    static var canMount: Bool {
        guard getuid() == 0, TmuxSession.available else { return false }
        try? FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        guard (try? TmuxSession.spawn(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint]).status) == 0 else { return false }
        _ = try? TmuxSession.spawn(["umount", mountPoint])
        return true
    }

    @Test("the chat goes on while the disk is full, the status bar says so, and once space is back everything is saved and comes back after a relaunch",
          .enabled(if: canMount, "needs root to mount a small tmpfs"))
    func fullDisk() throws {
        let dir = Self.mountPoint
        try #require(TmuxSession.spawn(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir]).status == 0)
        defer { _ = try? TmuxSession.spawn(["umount", "-l", dir]) }
        let env = ["XDG_DATA_HOME": dir]
        // Full before the first launch: opening writes, so it is one line saying so, exit 1.
        let filler = dir + "/filler"
        _ = try TmuxSession.spawn(["dd", "if=/dev/zero", "of=\(filler)", "bs=4096"])
        let refused = try TmuxSession.spawn(["/usr/bin/env", "XDG_DATA_HOME=\(dir)", TmuxSession.binary], captureOutput: true, captureErrors: true)
        #expect(refused.status == 1)
        #expect(refused.err == "synchat: \(dir)/synchat/default.sqlite: cannot open the store: the disk holding it is full; free some space and start again, or run with --ephemeral\n")
        unlink(filler)
        do {
            // Full while it runs: the disk fills up under the open chat.
            let t = try TmuxSession(width: 120, height: 36, arguments: "--seed 1 --speed 60", environment: env)
            defer { t.close() }
            t.wait(for: "foreground")
            _ = try TmuxSession.spawn(["dd", "if=/dev/zero", "of=\(filler)", "bs=4096"])
            t.wait(for: "store: disk full", seconds: 30)
            try t.keys("Enter")
            t.wait("the compose prompt") { $0.split(separator: "\n").contains { $0.hasPrefix("to ") && $0.hasSuffix(">") } }
            try t.type("written on a full disk")
            try t.keys("Enter")
            t.wait(for: "you: written on a full disk")  // the chat goes on
            #expect(t.screen().contains("store: disk full"))
            unlink(filler)
            t.wait("the store's trouble to clear", seconds: 30) { !$0.contains("store: disk full") }
            try t.keys("Escape")
            try t.keys("q")
            t.wait(for: "EXIT=0")
        }
        // Relaunched: the message written on the full disk was saved.
        let t = try TmuxSession(arguments: "--seed 1 --speed 1", environment: env)
        defer { t.close() }
        t.wait(for: "Conversations")
        #expect(try t.openConversations(until: "you: written on a full disk"))
        try t.keys("q")
        t.wait(for: "EXIT=0")
    }
}
