import Foundation
import Spawn
import Testing
import TestSupport

/// People chatting through one `synchat server` on loopback, end to end: the built
/// binary as the server and two TUIs in tmux, judged on the screen and against the server's
/// ground truth (`/admin/truth`). Deadlines are wall-clock and generous; the world runs at
/// x60 so a few seconds are minutes of chat.
@Suite("synchat server: people chatting through one world, on real sockets", .serialized, .timingSensitive)
struct NetworkChatTests {
    init() throws {
        try #require(FileManager.default.isExecutableFile(atPath: TmuxSession.binary), "build synchat first: \(TmuxSession.binary)")
    }

    // Two users chatting, every fault on one user, the join race and a restart run in one
    // process and in virtual time (Tests/NetworkTests); here stays the real
    // thing end to end: two TUIs in tmux on real sockets. (A real kill -9 of the server and its
    // restart: ServerFullDiskEndToEndTests.)

    @Test("two terminals chat through one server: each sees the other's line, a backgrounded one gets it when it comes back, one under every fault key (s, p, t, r, x) gets every line once, once the network is back; the clock is the server's")
    func twoTerminals() throws {
        try TmuxSession.requireReady()
        let server = try ServerEndToEndTests.Running(["--speed", "10", "--contacts", "0"])
        defer { server.stop() }
        let url = "http://127.0.0.1:\(server.port)"
        let ada = try TmuxSession(width: 120, height: 32, arguments: "--server \(url) --user ada --ephemeral")
        defer { ada.close() }
        ada.wait(for: " live │", seconds: 60)
        let bo = try TmuxSession(width: 120, height: 32, arguments: "--server \(url) --user bo --ephemeral")
        defer { bo.close() }
        bo.wait(for: " live │", seconds: 60)
        #expect(bo.screen().contains("on \(url) as bo (joined): the server's clock, x10"))
        // Ada learns of bo (another user joined) and writes.
        ada.wait("bo in ada's list") { $0.split(separator: "\n").contains { $0.hasPrefix("▸ bo") || $0.hasPrefix("› bo") } }
        try ada.keys("Enter")
        try ada.type("hello bo, from ada ✓")
        try ada.keys("Enter")
        ada.wait(for: "› you: hello bo, from ada ✓")
        bo.wait("ada's line in bo's list") { $0.contains("ada") && $0.contains(" 1 ") || $0.contains("ada                       1") }
        try bo.keys("Enter")
        bo.wait(for: "ada: hello bo, from ada ✓")
        try bo.type("hi ada!")
        try bo.keys("Enter")
        ada.wait(for: "bo: hi ada!")
        // Bo goes to the background: the OS stops listening; a line written meanwhile is there when bo comes back.
        try bo.keys("Escape", "b")
        bo.wait(for: "background")
        try ada.type("are you there?")
        try ada.keys("Enter")
        ada.wait(for: "› you: are you there?")
        try bo.keys("f")
        bo.wait(for: "ada: are you there?", seconds: 60)
        // A fault key goes to the server for this user: the status bar shows it once the server took it.
        try ada.keys("Escape", "x")
        ada.wait(for: "fault: indexer down")
        try ada.keys("x")
        ada.wait("the indexer up again") { !$0.contains("indexer down │") && $0.contains("world: indexer up") }
        // Every fault key of ada's at once (push dropped, realtime down, stale, token expired):
        // bo's lines written meanwhile are all on ada's screen once the network is back.
        try ada.keys("s")
        ada.wait(for: "realtime stale")
        try ada.keys("p")
        ada.wait(for: "push drop 100%")
        try ada.keys("t")
        try ada.keys("r")
        ada.wait(for: "realtime down")
        // Back to bo's compose line: bo's keys are in the list since b and f (Esc then Enter
        // in one write would be Alt-Enter, as a terminal sends it).
        bo.wait(for: "to ada> Tab or Enter to write")
        try bo.keys("Enter")
        bo.wait("bo's compose prompt") { $0.split(separator: "\n").contains { $0.hasPrefix("to ") && $0.hasSuffix(">") } }
        for i in 1...3 {
            try bo.type("under faults \(i)")
            try bo.keys("Enter")
            bo.wait(for: "› you: under faults \(i)")
        }
        try ada.keys("r", "p", "p")  // realtime up; push: drop all → delay 90s → ok
        let after = ada.wait("the three lines written under faults", seconds: 90) { screen in (1...3).allSatisfy { screen.contains("bo: under faults \($0)") } }
        for i in 1...3 {  // once each: no duplicate
            #expect(after.components(separatedBy: "bo: under faults \(i)").count == 2, "line \(i) shown \(after.components(separatedBy: "bo: under faults \(i)").count - 1) times")
        }
        // Speed keys do not change the server's clock.
        try bo.keys("Escape", "+")
        bo.wait(for: "the clock is the server's")
        // The world's truth agrees: nothing lost on either side, nothing written in a person's name.
        for user in ["ada", "bo"] {
            let ledger = try server.truth(user)["ledger"] as! [[String: Any]]
            #expect(ledger.count == 6, "\(user): \(ledger.count) messages in the world")
        }
        try ada.keys("Escape", "q")
        ada.wait(for: "EXIT=0")
        try bo.keys("Escape", "q")
        bo.wait(for: "EXIT=0")
    }
}
