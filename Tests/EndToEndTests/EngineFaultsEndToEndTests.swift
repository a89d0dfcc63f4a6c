import Foundation
import Testing

/// In a real terminal: a catch-up interrupted by quitting is owed at the next launch, and the
/// device's network has a key of its own.
@Suite("End to end: an interrupted catch-up, the device offline", .serialized, .timingSensitive)
struct EngineFaultsEndToEndTests {
    init() throws { try TmuxSession.requireReady() }

    @Test("S then q at once: the relaunch says the catch-up is owed and runs it forced, never 'skipped'")
    func owedAfterQuit() throws {
        let dir = try TemporaryDirectory("owed")
        defer { dir.remove() }
        let env = ["XDG_DATA_HOME": dir.file("data")]
        do {
            let t = try TmuxSession(width: 140, height: 36, arguments: "--profile p --speed 1", environment: env)
            defer { t.close() }
            t.wait(for: "catch-up finished", seconds: 60)
            try t.keys("S", "q")
            t.wait(for: "EXIT=0")
        }
        let t = try TmuxSession(width: 140, height: 36, arguments: "--profile p --speed 1", environment: env)
        defer { t.close() }
        let screen = t.wait("the owed catch-up run again") { $0.contains("catch-up owed") && $0.contains(", forced") }
        #expect(screen.contains("catch-up owed: a full catch-up (forced) did not complete before the app quit"))
        #expect(!screen.contains("catch-up skipped"))
        try t.keys("q")
        t.wait(for: "EXIT=0")
    }

    @Test("A takes the device's network away (realtime, indexer and push fail, the bar says so) and gives it back")
    func airplaneMode() throws {
        let t = try TmuxSession(width: 140, height: 36, arguments: "--ephemeral --speed 10")
        defer { t.close() }
        t.wait(for: "realtime live", seconds: 60)
        try t.keys("A")
        let off = t.wait("the device offline") { $0.contains("fault: network off") && $0.contains("network unreachable") }
        #expect(off.contains("world: network off"))
        try t.keys("A")
        let on = t.wait("the network back") { $0.contains("world: network on") && !$0.contains("fault: network off") }
        #expect(on.contains("world: network on"))
        try t.keys("q")
        t.wait(for: "EXIT=0")
    }
}

/// The flags of the fault matrix, the push models and the bytes lane through the binary, as a
/// careless user types them.
@Suite("Command line: the fault matrix, push models, the bytes lane", .ownThread)
struct MatrixCommandLineTests {
    @Test("bad or clashing flags are one line on stderr and exit 2; --matrix-cell prints a world that simulate runs")
    func flags() throws {
        let demo = "Scenarios/demo.scenario"
        for args in [["simulate", "--matrix", "--scenario", demo], ["simulate", "--matrix", "--duration", "0s"],
                     ["simulate", "--matrix", "--duration", "soon"], ["simulate", "--matrix", "--duration", "30d"],
                     ["simulate", "--matrix-cell", "9999"], ["simulate", "--matrix-cell", "-1"], ["simulate", "--matrix", "--events"],
                     ["simulate", "--matrix", "--compare"], ["simulate", "--matrix", "--seed", "3"], ["simulate", "--scenario", demo, "--duration", "3h"],
                     ["simulate", "--scenario", demo, "--push-model", "gcm"], ["simulate", "--scenario", demo, "--chart-lane", "pies"],
                     ["simulate"], ["simulate", "--matrix", "--policy", "clever"],
                     ["simulate", "--matrix", "--matrix-seed", "-2"], ["simulate", "--matrix", "--matrix-seed", "two"],
                     ["simulate", "--scenario", demo, "--matrix-seed", "2"]] {
            let r = try runSynchat(args)
            #expect(r.status == 2, "\(args): \(r.status)")
            #expect(r.err.split(separator: "\n").count == 1, "\(args): \(r.err)")
            #expect(r.out.isEmpty, "\(args)")
        }
        let cell = try runSynchat(["simulate", "--matrix-cell", "6"])
        #expect(cell.status == 0 && cell.out.contains("realtime down") && cell.out.contains("push drop 100%"))
        let other = try runSynchat(["simulate", "--matrix-cell", "6", "--matrix-seed", "2"])
        #expect(other.status == 0 && other.out.contains("push drop 100%") && other.out != cell.out, "the same world on another seed")
        let dir = try TemporaryDirectory("cell")
        defer { dir.remove() }
        let file = dir.file("cell6.scenario")
        #expect(FileManager.default.createFile(atPath: file, contents: Data(cell.out.utf8)))
        let run = try runSynchat(["simulate", "--scenario", file, "--format", "json", "--push-model", "fcm"])
        #expect(run.status == 0 && run.out.contains("\"backend_bytes\"") && run.out.contains("\"belief_lag_s\": {\"push\": "))
    }

    @Test("synchat server's limit flags, given badly: one line on stderr naming the flag, exit 2, no server started")
    func serverLimitFlags() throws {
        for (args, flag) in [(["--peer-connections", "0"], "--peer-connections"), (["--peer-connections", "lots"], "--peer-connections"),
                             (["--head-timeout", "0s"], "--head-timeout"), (["--head-timeout", "soon"], "--head-timeout"),
                             (["--idle-timeout", "2d"], "--idle-timeout"), (["--peer-joins", "-3"], "--peer-joins"),
                             (["--peer-joins", "9999999"], "--peer-joins"), (["--peer-heads", "0"], "--peer-heads"),
                             (["--peer-heads", "sixteen"], "--peer-heads"), (["--peer-heads", "99999"], "--peer-heads"),
                             (["--user-connections", "0"], "--user-connections"), (["--user-connections", "lots"], "--user-connections"),
                             (["--user-connections", "99999"], "--user-connections"), (["--peer-rate", "0"], "--peer-rate"),
                             (["--peer-rate", "ten"], "--peer-rate"), (["--peer-rate", "1e9"], "--peer-rate"),
                             (["--max-users", "0"], "--max-users"), (["--max-users", "many"], "--max-users"), (["--away-after", "0s"], "--away-after"),
                             (["--away-after", "never"], "--away-after"), (["--away-after", "30d"], "--away-after")] {
            let r = try runSynchat(["server", "--port", "0"] + args)
            #expect(r.status == 2, "\(args): \(r.status)")
            #expect(r.err.split(separator: "\n").count == 1 && r.err.contains(flag), "\(args): \(r.err)")
            #expect(r.out.isEmpty, "\(args): \(r.out)")
        }
    }

    @Test("--matrix --policy adaptive --format json: one row a cell, each with its cell and the measures")
    func matrixJSON() throws {
        let r = try runSynchat(["simulate", "--matrix", "--policy", "adaptive", "--duration", "1h", "--format", "json"])
        #expect(r.status == 0)
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [[String: Any]])
        #expect(rows.count >= 40)
        #expect(rows.allSatisfy { ($0["policy"] as? String) == "adaptive" && $0["cell"] is [String: String] && ($0["messages_lost"] as? Int) == 0 })
    }
}
