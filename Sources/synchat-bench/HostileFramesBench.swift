import Foundation
import ServerProtocol
import Spawn

// `synchat-bench hostile`: control frames by the million, invites guessed from 200
// addresses, bodies that must come back byte for byte after a kill -9, one user filling the
// disk.

/// A million frames of one opcode (pings, pongs, a reserved opcode) on node sockets, each
/// reopened when the server closes it, beside a normal user: how many the server answered,
/// and how it closed them.
func controlFloods(_ binary: String) {
    guard let server = BenchServer.start(binary, ["--speed", "1", "--contacts", "1", "--traffic", "0/h", "--open"]) else { return }
    defer { server.stop() }
    controlFloods(on: server)
}

func controlFloods(on server: BenchServer, interval: Double = 0.02) {
    let port = server.port
    guard let calm = server.join("calm"), let abuser = server.join("abuser") else { return }
    say("frames (a million, one socket after another)         normal user: answers   p50        p95        max      server growth")
    for (name, opcode) in [("pings", UInt8(0x9)), ("pongs", 0xA), ("frames of opcode 3", 0x3)] {
        let before = server.rssMB
        let normal = RawSocket(port: port, from: "127.0.0.2")
        let sent = Counter(), answered = Counter(), sockets = Counter()
        let closes = CloseCodes()
        let done = StopFlag()
        let batch = Array(repeating: RawSocket.frame(opcode, []), count: 1_000).flatMap { $0 }
        let flood = Thread {
            while !done.isSet, sent.value < 1_000_000 {
                guard let ws = RawSocket.webSocket(port: port, path: Route.node, secret: abuser, from: "127.0.0.3") else { usleep(5_000); continue }
                sockets.add(1)
                while !done.isSet, sent.value < 1_000_000, ws.send(batch) { sent.add(1_000) }
                let (count, close) = ws.countFrames(0xA)
                answered.add(count)
                closes.record(close)
            }
        }
        flood.start()
        let measured = normalUser(port: port, secret: calm, seconds: 8, on: normal, interval: interval)
        done.set()
        usleep(500_000)
        attackRow("\(name) on node sockets", measured, growth: server.rssMB - before,
                  "\(sent.value) sent on \(sockets.value) sockets, \(answered.value) pongs back; closes: \(closes.words)")
    }
}

final class CloseCodes: @unchecked Sendable {
    private let lock = NSLock()
    private var codes: [String: Int] = [:]
    func record(_ code: Int?) { lock.lock(); codes[code.map(String.init) ?? "none read", default: 0] += 1; lock.unlock() }
    var words: String { lock.lock(); defer { lock.unlock() }; return codes.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ") }
}

/// Wrong invites from 200 addresses at once for 5 s against a server with an invite: how many
/// the server checked a second (the rest refused unchecked), and whether it said so once.
func invitesGuessed(_ binary: String) {
    guard let server = BenchServer.start(binary, ["--speed", "1", "--contacts", "1", "--traffic", "0/h", "--peer-joins", "1000000"]) else { return }
    defer { server.stop() }
    let checked = Counter(), refused = Counter()
    let end = now() + 5_000_000_000
    let threads = (0..<200).map { i in
        Thread {
            var n = 0
            while now() < end {
                let body = "{\"user\": \"g\(i)x\(n)\", \"invite\": \"\(String(format: "%016x", i * 100_000 + n))\"}"
                n += 1
                let a = RawSocket.exchange(port: server.port, from: "127.0.3.\(i + 1)",
                                           "POST \(Route.join) HTTP/1.1\r\nHost: x\r\n\(RawSocket.version)Connection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
                if a?.status == 403 { checked.add(1) } else if a?.status == 429 { refused.add(1) }
            }
        }
    }
    threads.forEach { $0.start() }
    while now() < end { usleep(100_000) }
    usleep(1_000_000)
    let said = ((try? String(contentsOfFile: server.output, encoding: .utf8)) ?? "").components(separatedBy: "wrong invites a minute").count - 1
    hrow("invites guessed from 200 addresses, 5 s", String(format: "%.1f checked a second", Double(checked.value) / 5),
         "\(refused.value) refused unchecked (429); the log said so \(said) time(s)")
}

/// Bodies no store may change (a NUL in an amount, C0 and C1 controls, lone combining marks,
/// 16 KiB), published on `--data`, the server killed with SIGKILL and started again: how many
/// come back from the indexer changed or not at all.
func bodiesAcrossRestart(_ binary: String) {
    let dir = NSTemporaryDirectory() + "synchat-bench-bodies-\(getpid())"
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let args = ["--speed", "1", "--contacts", "1", "--traffic", "0/h", "--open", "--data", dir]
    guard let server = BenchServer.start(binary, args), let secret = server.join("zed"),
          let world = RawSocket.exchange(port: server.port, "GET \(Route.world) HTTP/1.1\r\nHost: x\r\n\(RawSocket.version)Connection: close\r\nAuthorization: Bearer \(secret)\r\n\r\n"),
          let to = (((try? JSONSerialization.jsonObject(with: Data(world.body))) as? [String: Any])?["contacts"] as? [[String: Any]])?.first?["address"] as? String else {
        hrow("bodies across kill -9", "skipped: cannot join"); return
    }
    let bodies = ["pay 100\u{0}99 EUR", String((0..<0x20).map { Character(Unicode.Scalar(UInt8($0))) }) + "\u{7F}",
                  String((0x80...0x9F).map { Character(Unicode.Scalar(UInt8($0))) }), "\u{301}\u{302} marks first",
                  String(repeating: "0123456789abcde\u{0}", count: 1024)]
    var confirmed: [(txId: String, body: String)] = []
    for body in bodies {
        let request = try! JSONSerialization.data(withJSONObject: ["to": to, "body": body])
        guard let a = RawSocket.exchange(port: server.port, "POST \(Route.publish) HTTP/1.1\r\nHost: x\r\n\(RawSocket.version)Connection: close\r\nAuthorization: Bearer \(secret)\r\nContent-Length: \(request.count)\r\n\r\n"
                                         + String(decoding: request, as: UTF8.self)), a.status == 200,
              let txId = (((try? JSONSerialization.jsonObject(with: Data(a.body))) as? [String: Any])?["message"] as? [String: Any])?["txId"] as? String else { continue }
        confirmed.append((txId, body))
    }
    usleep(3_000_000)  // indexed
    server.stop(SIGKILL)
    guard let again = BenchServer.start(binary, args) else { return }
    defer { again.stop() }
    usleep(500_000)
    var changed = 0, lost = 0
    for m in confirmed {
        let a = RawSocket.exchange(port: again.port, "GET \(IndexerRoute.path(for: .messageById(m.txId))) HTTP/1.1\r\nHost: x\r\n\(RawSocket.version)Connection: close\r\nAuthorization: Bearer \(secret)\r\n\r\n")
        let messages = ((a.flatMap { try? JSONSerialization.jsonObject(with: Data($0.body)) }) as? [String: Any])?["messages"] as? [[String: Any]]
        guard let body = messages?.first?["payload"] as? String else { lost += 1; continue }
        if Array(body.utf8) != Array(m.body.utf8) { changed += 1 }
    }
    hrow("bodies (NUL, C0, C1, marks, 16 KiB) across kill -9", "\(confirmed.count) confirmed: \(changed) changed, \(lost) lost", "goal: 0")
}

/// One user publishing 16 KiB messages as fast as it is answered on `--data`: where its quota
/// (8 MiB by default) stops it, and what the data folder holds then.
func quota(_ binary: String) {
    let dir = NSTemporaryDirectory() + "synchat-bench-quota-\(getpid())"
    defer { try? FileManager.default.removeItem(atPath: dir) }
    guard let server = BenchServer.start(binary, ["--speed", "1", "--contacts", "1", "--traffic", "0/h", "--open", "--data", dir]) else { return }
    defer { server.stop() }
    guard let secret = server.join("filler"), let s = RawSocket(port: server.port),
          let world = RawSocket.exchange(port: server.port, "GET \(Route.world) HTTP/1.1\r\nHost: x\r\n\(RawSocket.version)Connection: close\r\nAuthorization: Bearer \(secret)\r\n\r\n"),
          let to = (((try? JSONSerialization.jsonObject(with: Data(world.body))) as? [String: Any])?["contacts"] as? [[String: Any]])?.first?["address"] as? String else { return }
    let body = "{\"to\": \"\(to)\", \"body\": \"\(String(repeating: "q", count: 16_384))\"}"
    let request = "POST \(Route.publish) HTTP/1.1\r\nHost: x\r\n\(RawSocket.version)Authorization: Bearer \(secret)\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
    var ok = 0, words = ""
    let t0 = now()
    while now() - t0 < 20_000_000_000, s.send(request), let a = s.answer() {
        if a.status == 200 { ok += 1 } else if a.status == 507 { words = String(decoding: a.body, as: UTF8.self); break } else { usleep(5_000) }
    }
    let size = ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).reduce(0) {
        $0 + (((try? FileManager.default.attributesOfItem(atPath: dir + "/" + $1))?[.size] as? NSNumber)?.intValue ?? 0)
    }
    hrow("one user publishing 16 KiB as fast as answered", String(format: "%d kept, then 507 (%.1f s)", ok, Double(now() - t0) / 1e9),
         String(format: "data folder %.1f MB; %@", Double(size) / 1e6, String(words.prefix(110))))
}
