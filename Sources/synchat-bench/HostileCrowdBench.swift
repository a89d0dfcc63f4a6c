import Foundation
import ServerProtocol
import Spawn

// `synchat-bench hostile`, the crowd: many addresses holding all they may, requests left
// behind, control frames by the million, invites guessed from many addresses. Each beside a
// normal user whose latency is measured, on its own server, with the server's growth.

/// A normal user's `GET /v1/world`, one at a time on `connection` (its own keep-alive, made
/// before the attack from 127.0.0.2), every `interval` s for `seconds`: the latencies in ms
/// and the failures. With a thousand users the answer is about 90 KB and costs 23 of the
/// user's 200 requests a second: a crowd's server is asked less often.
func normalUser(port: Int, secret: String, seconds: Double, on connection: RawSocket?, interval: Double = 0.02) -> (latencies: [Double], failures: Int) {
    let probe = "GET \(Route.world) HTTP/1.1\r\nHost: x\r\n\(RawSocket.version)Authorization: Bearer \(secret)\r\n\r\n"
    var latencies: [Double] = [], failures = 0
    var normal = connection
    let end = now() + UInt64(seconds * 1e9)
    while now() < end {
        let t0 = now()
        if let s = normal, s.send(probe), let a = s.answer(), a.status == 200 {
            latencies.append(Double(now() - t0) / 1e6)
        } else {
            failures += 1
            normal = RawSocket(port: port, from: "127.0.0.2")
        }
        usleep(UInt32(interval * 1e6))
    }
    return (latencies, failures)
}

/// One line of the table: the attack, the normal user's answers and latency, the growth.
func attackRow(_ name: String, _ measured: (latencies: [Double], failures: Int), growth: Double, _ extra: String = "") {
    let l = measured.latencies
    let p50 = l.isEmpty ? .infinity : percentile(l, 0.5), p95 = l.isEmpty ? .infinity : percentile(l, 0.95)
    let verdict = p95 <= 50 && growth <= 50 ? "" : "  (goal: p95 ≤ 50 ms, growth ≤ 50 MB)"
    say(pad(name, 50) + String(format: "%6d %@ %9.1f ms %9.1f ms %9.1f ms %9.1f MB", l.count, measured.failures > 0 ? "(\(measured.failures) failed)" : "",
                                p50, p95, l.max() ?? .infinity, growth) + verdict + (extra.isEmpty ? "" : "\n" + String(repeating: " ", count: 52) + extra))
}

extension RawSocket {
    /// Whether the peer has closed it (nothing read; the end of the stream seen).
    var isClosed: Bool {
        var byte: UInt8 = 0
        let n = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    /// Reads what comes until the end or `seconds` of quiet, and counts the frames of `opcode`
    /// in it; the close code if a close frame came.
    func countFrames(_ opcode: UInt8, seconds: Double = 0.3) -> (count: Int, close: Int?) {
        var tv = timeval(tv_sec: 0, tv_usec: Int(seconds * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var bytes: [UInt8] = [], chunk = [UInt8](repeating: 0, count: 65_536)
        while bytes.count < 8 << 20 {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        var i = 0, count = 0, close: Int?
        while i + 2 <= bytes.count {
            let op = bytes[i] & 0x0F
            var length = Int(bytes[i + 1] & 0x7F), at = i + 2
            if length == 126, at + 2 <= bytes.count { length = Int(bytes[at]) << 8 | Int(bytes[at + 1]); at += 2 }
            if op == opcode { count += 1 }
            if op == 8, at + 2 <= bytes.count { close = Int(bytes[at]) << 8 | Int(bytes[at + 1]) }
            i = at + length
        }
        return (count, close)
    }
}

/// A crowd of 130 addresses each holding its 64 connections (8 320 against a cap of 8 192),
/// kept up by reopening what the server closes, while 5 fresh addresses ask 4 times each over
/// 30 s and a normal user is measured: upgraded node sockets of 1 040 users, then heads that
/// never finish.
func crowds(_ binary: String) {
    guard let server = BenchServer.start(binary, ["--speed", "1", "--contacts", "1", "--traffic", "0/h", "--open", "--peer-joins", "1000000"]) else { return }
    defer { server.stop() }
    crowds(on: server)
}

func crowds(on server: BenchServer) {
    let port = server.port
    guard let calm = server.join("calm"), let newcomer = server.join("newcomer") else { say("skipped: cannot join"); return }
    let secrets = (0..<1_040).compactMap { server.join("crowd\($0)", from: "127.0.0.\(3 + $0 % 200)") }
    guard secrets.count == 1_040 else { say("skipped: \(secrets.count) of 1 040 joined"); return }
    say("crowd (130 addresses × 64, 5 fresh addresses 4 times each)  normal user: answers   p50        p95        max      server growth")
    func address(_ a: Int) -> String { "127.0.\(20 + a / 200).\(1 + a % 200)" }
    for kind in ["upgraded node sockets", "heads that never finish"] {
        let before = server.rssMB
        let normal = RawSocket(port: port, from: "127.0.0.2")
        _ = normal.map { $0.send("GET \(Route.world) HTTP/1.1\r\nHost: x\r\n\(RawSocket.version)Authorization: Bearer \(calm)\r\n\r\n") && $0.answer() != nil }
        func open(_ slot: Int) -> RawSocket? {
            if kind.hasPrefix("upgraded") {
                return RawSocket.webSocket(port: port, path: Route.node, secret: secrets[slot / 8], from: address(slot / 64))
            }
            guard let s = RawSocket(port: port, from: address(slot / 64), timeout: 1) else { return nil }
            s.send("GET \(Route.world) HTTP/1.1\r\nHost: x\r\n\(RawSocket.version)")
            return s
        }
        let holder = CrowdHolder(slots: 130 * 64, open: open)
        holder.fill()
        let held = holder.open
        let done = StopFlag()
        let keep = Thread { while !done.isSet { holder.refill(); usleep(500_000) } }
        keep.start()
        let fresh = FreshAddresses()
        let asking = Thread {
            for round in 0..<4 {
                for n in 0..<5 {
                    let a = RawSocket.exchange(port: port, from: "127.0.1.\(n + 1)", "GET \(Route.world) HTTP/1.1\r\nHost: x\r\n\(RawSocket.version)Connection: close\r\nAuthorization: Bearer \(newcomer)\r\n\r\n")
                    fresh.record(n, served: a?.status == 200)
                }
                if round < 3 { usleep(7_000_000) }
            }
        }
        asking.start()
        let measured = normalUser(port: port, secret: calm, seconds: 30, on: normal, interval: 0.15)
        done.set()
        usleep(600_000)
        let growth = server.rssMB - before
        attackRow("\(kind), \(held) opened", measured, growth: growth,
                  "fresh addresses served \(fresh.served.map { "\($0)/4" }.joined(separator: " ")); the crowd reopened \(holder.reopened) the server closed")
        holder.closeAll()
        usleep(6_000_000)  // the server gives freed pages back every 5 s: the next row starts from there
    }
}

/// The crowd's connections, reopened as the server closes them.
final class CrowdHolder: @unchecked Sendable {
    private let lock = NSLock()
    private var sockets: [RawSocket?]
    private let make: (Int) -> RawSocket?
    private(set) var reopened = 0

    init(slots: Int, open: @escaping (Int) -> RawSocket?) {
        sockets = Array(repeating: nil, count: slots)
        make = open
    }

    var open: Int { lock.lock(); defer { lock.unlock() }; return sockets.filter { $0 != nil }.count }

    func fill() { for i in sockets.indices { let s = make(i); lock.lock(); sockets[i] = s; lock.unlock() } }

    func refill() {
        for i in sockets.indices {
            lock.lock()
            let s = sockets[i]
            lock.unlock()
            guard s == nil || s!.isClosed else { continue }
            let again = make(i)
            lock.lock()
            sockets[i] = again
            reopened += 1
            lock.unlock()
        }
    }

    func closeAll() { lock.lock(); sockets = sockets.map { _ in nil }; lock.unlock() }
}

final class FreshAddresses: @unchecked Sendable {
    private let lock = NSLock()
    private var counts = [0, 0, 0, 0, 0]
    func record(_ n: Int, served: Bool) { lock.lock(); if served { counts[n] += 1 }; lock.unlock() }
    var served: [Int] { lock.lock(); defer { lock.unlock() }; return counts }
}

/// 12 400 indexer requests whose peers hang up at once, by 20 users whose own fault made
/// their indexer slow (`indexer latency 10m`, 10 s of wall time at x60): the growth through
/// them, and once their answers were due.
func slowRequests(_ binary: String) {
    guard let server = BenchServer.start(binary, ["--speed", "60", "--contacts", "1", "--traffic", "0/h", "--open", "--peer-joins", "1000000"]) else { return }
    defer { server.stop() }
    slowRequests(on: server)
}

func slowRequests(on server: BenchServer, interval: Double = 0.02) {
    let port = server.port
    guard let calm = server.join("calm") else { return }
    let secrets = (0..<20).compactMap { server.join("slow\($0)") }
    for s in secrets {
        _ = RawSocket.exchange(port: port, "POST \(Route.fault) HTTP/1.1\r\nHost: x\r\n\(RawSocket.version)Connection: close\r\nAuthorization: Bearer \(s)\r\nContent-Length: 19\r\n\r\nindexer latency 10m")
    }
    usleep(300_000)
    let before = server.rssMB
    let normal = RawSocket(port: port, from: "127.0.0.2")
    let sent = Counter()
    let threads = secrets.enumerated().map { i, secret in
        Thread {
            for _ in 0..<620 {
                guard let s = RawSocket(port: port, from: "127.0.2.\(i + 1)") else { continue }
                s.send("GET \(IndexerRoute.path(for: .tip)) HTTP/1.1\r\nHost: x\r\n\(RawSocket.version)Authorization: Bearer \(secret)\r\n\r\n")
                sent.add(1)
            }
        }
    }
    threads.forEach { $0.start() }
    let measured = normalUser(port: port, secret: calm, seconds: 30, on: normal, interval: interval)
    let growth = server.rssMB - before
    usleep(15_000_000)  // every answer is due by now
    attackRow("12 400 requests abandoned (own latency 10m)", measured, growth: growth,
              String(format: "%d sent; 15 s after their answers were due: %+.1f MB from before", sent.value, server.rssMB - before))
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    func add(_ k: Int) { lock.lock(); n += k; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return n }
}
