import Foundation
import Testing

/// Two people who join a server at the same moment, as real processes: a server (`--open
/// --contacts 0`) and two `synchat --server URL --user NAME` started by one tmux command, each
/// screen watched until it lists the other. The in-process pair sees the same race since its
/// sockets carry bytes (`InProcessWire`); this is the judge it was not. Rounds:
/// `$SYNCHAT_JOIN_ROUNDS` (CI runs 10; 3 by default, for the person editing).
@Suite("Two people who join at once, real processes", .serialized, .timingSensitive)
struct JoinRaceEndToEndTests {
    static var rounds: Int { ProcessInfo.processInfo.environment["SYNCHAT_JOIN_ROUNDS"].flatMap(Int.init) ?? 3 }

    @Test("each of two users who join at once lists the other within 10 s, every round")
    func theySeeEachOther() throws {
        try TmuxSession.requireReady()
        var failed: [String] = []
        for round in 1...Self.rounds {
            let server = try ServerEndToEndTests.Running(["--contacts", "0", "--speed", "1"])
            defer { server.stop() }
            let dir = try TemporaryDirectory("join-race")
            let socket = "synchat-join-\(getpid())-\(round)"
            let url = "http://127.0.0.1:\(server.port)"
            func client(_ name: String) -> [String] {
                ["new-session", "-d", "-s", name, "-x", "100", "-y", "24",
                 "env", "TERM=xterm-256color", "XDG_DATA_HOME=\(dir.path)", "HOME=\(dir.path)",
                 TmuxSession.binary, "--server", url, "--user", name, "--ephemeral"]
            }
            // One tmux command starts both: they join within milliseconds of each other.
            try TmuxSession.run(["tmux", "-L", socket] + client("ann") + [";"] + client("ben"))
            defer { _ = try? TmuxSession.run(["tmux", "-L", socket, "kill-server"]) }
            func screen(_ name: String) -> String {
                (try? TmuxSession.run(["tmux", "-L", socket, "capture-pane", "-p", "-t", name], output: true)) ?? ""
            }
            // The conversation list is the left column of the screen's rows.
            func lists(_ name: String, _ other: String) -> Bool {
                screen(name).split(separator: "\n").contains { $0.prefix(24).contains(other) }
            }
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline, !(lists("ann", "ben") && lists("ben", "ann")) { usleep(100_000) }
            if !(lists("ann", "ben") && lists("ben", "ann")) {
                failed.append("round \(round): ann lists ben \(lists("ann", "ben")), ben lists ann \(lists("ben", "ann"))\n\(screen("ann").prefix(400))")
            }
        }
        #expect(failed.isEmpty, "\(failed.count) of \(Self.rounds) rounds: \(failed.joined(separator: "\n"))")
    }
}
