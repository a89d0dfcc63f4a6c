import Foundation
import Testing

/// Users away and back, with real processes: the built `synchat server` with a short `--away-after`,
/// read from outside through its truth (`/admin/truth`, which is the operator's and makes
/// nobody present). Deadlines are generous; the waits poll the truth.
@Suite("synchat server: users away and back, real processes", .serialized, .timingSensitive)
struct AwayEndToEndTests {
    @Test("a user with no request and no socket for --away-after is away: in the server's truth its contacts stop writing, and write again after its next request", .timeLimit(.minutes(2)))
    func awayAndBack() throws {
        // 600 messages an hour of the world at ×60: ten a wall second while the user is here.
        let server = try ServerEndToEndTests.Running(["--speed", "60", "--contacts", "2", "--traffic", "600/h", "--away-after", "1s"])
        defer { server.stop() }
        let secret = try server.join("zed")
        func incoming() throws -> Int {
            ((try server.truth("zed")["ledger"] as? [[String: Any]]) ?? []).filter { $0["direction"] as? String == "incoming" }.count
        }
        // The server looks for users away at its checkpoint (every 5 s): within 30 s the count
        // holds still for 2 s (20 messages' worth while present).
        var last = try incoming()
        var still = false
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, !still {
            usleep(2_000_000)
            let now = try incoming()
            still = now == last && now > 0
            last = now
        }
        #expect(still, "the contacts of a user away for 1 s never stopped writing (\(last) incoming)")
        usleep(3_000_000)
        #expect(try incoming() == last, "away: nothing written in 3 s more")
        let (status, _) = try server.get("/v1/world", token: secret)
        #expect(status == 200)
        let back = Date().addingTimeInterval(20)
        var now = last
        while Date() < back, now <= last + 5 {
            usleep(200_000)
            now = try incoming()
        }
        #expect(now > last + 5, "back after a request: its contacts write again (\(now) against \(last))")
        #expect(server.errors.isEmpty, "\(server.errors)")
    }
}
