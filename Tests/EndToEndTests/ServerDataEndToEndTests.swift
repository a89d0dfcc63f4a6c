import Foundation
import GRDB
import Testing

/// Issue 28 #6 and #7 through the binary: a second server on one `--data` is one line and
/// exit 1, naming the first one's pid; a folder other users can read is refused; the secret
/// of a join is in no file the server wrote.
@Suite("synchat server: its data folder", .serialized)
struct ServerDataEndToEndTests {
    init() throws {
        try #require(FileManager.default.isExecutableFile(atPath: TmuxSession.binary), "build synchat first: \(TmuxSession.binary)")
    }

    @Test("two servers on one --data: the second is refused in one line naming the first's pid; a 0755 folder too; no file holds a secret")
    func oneServerPrivateFolder() throws {
        let dir = try TemporaryDirectory("server-data")
        defer { dir.remove() }
        let data = dir.file("data")
        let first = try ServerEndToEndTests.Running(["--data", data, "--speed", "60"])
        var stopped = false
        defer { if !stopped { first.stop() } }
        let secret = try first.join("zed")
        let second = try runSynchat(["server", "--port", "0", "--data", data])
        #expect(second.status == 1)
        #expect(second.err == "synchat: server: the data directory \(data) is in use by another synchat server (pid \(first.pid)); stop it first, or choose another --data\n")
        let open = dir.file("open")
        try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let refused = try runSynchat(["server", "--port", "0", "--data", open])
        #expect(refused.status == 1 && refused.err.split(separator: "\n").count == 1 && refused.err.contains("run chmod 700 \(open)"))
        first.stop()
        stopped = true
        for file in try FileManager.default.contentsOfDirectory(atPath: data) {
            let bytes = try #require(FileManager.default.contents(atPath: (data as NSString).appendingPathComponent(file)))
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(file) holds the secret")
        }
        // Restarted on the same folder, the secret still opens the user.
        let again = try ServerEndToEndTests.Running(["--data", data, "--speed", "60"])
        defer { again.stop() }
        let (status, _) = try again.get("/v1/world", token: secret)
        #expect(status == 200)
        let (wrong, _) = try again.get("/v1/world", token: String(secret.reversed()))
        #expect(wrong == 401)
    }

    @Test("a corrupt world.sqlite (text in an INTEGER column, a clock of speed 1e308) is one line naming the file and the row, exit 1, never a trap")
    func corruptFile() throws {
        let dir = try TemporaryDirectory("server-data")
        defer { dir.remove() }
        let data = dir.file("data")
        do {
            let server = try ServerEndToEndTests.Running(["--data", data, "--speed", "60"])
            _ = try server.join("zed")
            server.stop()
        }
        let path = (data as NSString).appendingPathComponent("world.sqlite")
        for (damage, row) in [("UPDATE user SET seed = 'many'", "user row 1: seed is text"),
                              ("UPDATE meta SET value = '0 0 1e308' WHERE key = 'anchor'", "meta row 'anchor'")] {
            let db = try DatabaseQueue(path: path)
            try db.write { try $0.execute(sql: damage) }
            try db.close()
            let r = try runSynchat(["server", "--port", "0", "--data", data])
            #expect(r.status == 1, "\(damage): exit \(r.status)")
            #expect(r.err.split(separator: "\n").count == 1 && r.err.contains("\(path) is corrupt: \(row)"), "\(r.err)")
            try DatabaseQueue(path: path).write { try $0.execute(sql: "UPDATE user SET seed = 1") }
        }
    }
}
