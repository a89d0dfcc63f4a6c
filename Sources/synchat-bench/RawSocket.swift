import Foundation
import ServerProtocol
import Spawn

/// A running server: its pid, port and the line it printed.
struct BenchServer {
    let pid: pid_t
    let port: Int
    let output: String
    let startedIn: Double
    /// The secrets of the users joined so far: attacks made in turn on one server join their
    /// users once.
    let joined = SecretBook()

    static func start(_ binary: String, _ args: [String]) -> BenchServer? {
        let output = NSTemporaryDirectory() + "synchat-bench-hostile-\(getpid())-\(UInt32.random(in: 0 ... .max)).out"
        let t0 = now()
        guard let pid = try? ChildProcess.start([binary, "server", "--port", "0"] + args, output: output) else { return nil }
        var line = ""
        for _ in 0..<3000 where !line.contains("admin token") {
            usleep(1_000)
            line = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        }
        let took = Double(now() - t0) / 1e9
        guard let port = line.firstMatch(of: /127\.0\.0\.1:(\d+)/).flatMap({ Int($0.1) }) else {
            say("skipped: the server did not start: \(line.prefix(300))")
            kill(pid, SIGKILL)
            _ = ChildProcess.wait(pid)
            return nil
        }
        return BenchServer(pid: pid, port: port, output: output, startedIn: took)
    }

    var token: String { ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").firstMatch(of: /admin token ([0-9a-f]{32})/).map { String($0.1) } ?? "" }

    func stop(_ signal: Int32 = SIGTERM) {
        kill(pid, signal)
        _ = ChildProcess.wait(pid)
        unlink(output)
    }

    var rssMB: Double {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return 0 }
        return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
    }

    /// Joins `name`: its secret.
    func join(_ name: String, from source: String = "127.0.0.1") -> String? {
        if let known = joined[name] { return known }
        let body = "{\"user\": \"\(name)\"}"
        guard let answer = RawSocket.exchange(port: port, from: source, "POST \(Route.join) HTTP/1.1\r\nHost: x\r\n\(RawSocket.version)Connection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"),
              answer.status == 201 || answer.status == 200 else { return nil }
        // The secret alone, not the whole answer parsed: at 10 000 users a join's answer (every
        // user is a contact) is about 900 KB, and parsing it would be most of a bench's 10 000 joins.
        let secret = String(decoding: answer.body.prefix(4_096), as: UTF8.self).firstMatch(of: /"secret"\s*:\s*"([0-9a-f]+)"/).map { String($0.1) }
        joined[name] = secret
        return secret
    }
}

final class SecretBook: @unchecked Sendable {
    private let lock = NSLock()
    private var secrets: [String: String] = [:]
    subscript(name: String) -> String? {
        get { lock.lock(); defer { lock.unlock() }; return secrets[name] }
        set { lock.lock(); secrets[name] = newValue; lock.unlock() }
    }
}

/// One blocking TCP connection from a chosen loopback address, with timeouts.
final class RawSocket {
    /// The protocol's version header, one line of a head, that every request here carries.
    static let version = "\(ProtocolVersion.header): \(ProtocolVersion.headerValue)\r\n"

    let fd: Int32
    private var buffer: [UInt8] = []

    init?(port: Int, from source: String = "127.0.0.1", timeout: Double = 10) {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, source, &local.sin_addr)
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        // The source port is chosen at connect, by the whole 4-tuple (IP_BIND_ADDRESS_NO_PORT,
        // Linux 4.2): bind's own choice avoids every port in TIME_WAIT, and a flood of short
        // connections from one address slowed to about 1 300 a second searching for one.
        setsockopt(fd, Int32(IPPROTO_IP), 24, &one, socklen_t(MemoryLayout<Int32>.size))
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr)
        let ok = withUnsafePointer(to: &local) { l in
            l.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        } && withUnsafePointer(to: &remote) { r in
            r.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard ok else { Foundation.close(fd); return nil }
    }

    deinit { Foundation.close(fd) }

    /// Closes with a reset rather than a FIN (SO_LINGER 0), as a flood does: no TIME_WAIT here.
    func abort() {
        var l = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, socklen_t(MemoryLayout<linger>.size))
    }

    /// Sends all of `bytes`; false when the peer is gone or the send timed out.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBufferPointer { Foundation.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return false }
            sent += n
        }
        return true
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = recv(fd, &chunk, chunk.count, 0)
        guard n > 0 else { return false }
        buffer += chunk[0..<n]
        return true
    }

    /// The next HTTP answer: its status and body (by Content-Length).
    func answer() -> (status: Int, head: String, body: [UInt8])? {
        let end: [UInt8] = [13, 10, 13, 10]
        var at: Int?
        while at == nil {
            if buffer.count >= 4 { at = (0...(buffer.count - 4)).first { buffer[$0..<($0 + 4)].elementsEqual(end) } }
            if at == nil, !fill() { return nil }
        }
        let head = String(decoding: buffer[0..<at!], as: UTF8.self)
        buffer.removeFirst(at! + 4)
        let length = head.firstMatch(of: /(?i)content-length:\s*(\d+)/).flatMap { Int($0.1) } ?? 0
        while buffer.count < length { if !fill() { return nil } }
        let body = Array(buffer[0..<length])
        buffer.removeFirst(length)
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        return (status, head, body)
    }

    /// One request on a new connection.
    static func exchange(port: Int, from source: String = "127.0.0.1", _ request: String) -> (status: Int, head: String, body: [UInt8])? {
        guard let s = RawSocket(port: port, from: source), s.send(request) else { return nil }
        return s.answer()
    }

    /// A WebSocket on `path`, upgraded (101), or nil.
    static func webSocket(port: Int, path: String, secret: String, from source: String = "127.0.0.1") -> RawSocket? {
        guard let s = RawSocket(port: port, from: source) else { return nil }
        let key = Data((0..<16).map { _ in UInt8.random(in: 0 ... 255) }).base64EncodedString()
        s.send("GET \(path) HTTP/1.1\r\nHost: x\r\n\(RawSocket.version)Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: \(key)\r\n"
               + "Sec-WebSocket-Version: 13\r\nAuthorization: Bearer \(secret)\r\n\r\n")
        guard let a = s.answer(), a.status == 101 else { return nil }
        return s
    }

    /// A masked client frame.
    static func frame(_ opcode: UInt8, _ payload: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x80 | opcode]
        if payload.count < 126 { out.append(0x80 | UInt8(payload.count)) } else {
            out.append(0x80 | 126)
            out += [UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        let mask = (0..<4).map { _ in UInt8.random(in: 0 ... 255) }
        out += mask
        out += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        return out
    }
}
