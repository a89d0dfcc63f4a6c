import Foundation
import NIOCore
import NIOSSL
import Testing
import Wire
@testable import ServerClient

/// A client WebSocket closed while it is still opening (connected, not upgraded): `b` just
/// after `f` did it, and the client wrote a close *frame* into the HTTP pipeline, which NIO
/// answers by stopping the process ("tried to decode as type HTTPPart… but found
/// WebSocketFrame"; found by the tmux suite under load, reproduced in 1 of 17 runs).
@Suite("NetIO: a socket closed before its upgrade")
struct ClientSocketTests {
    /// A loopback listener that accepts and never answers: an upgrade that never completes.
    final class SilentServer: @unchecked Sendable {
        let fd: Int32
        let port: Int
        private var accepted: [Int32] = []
        private let lock = NSLock()

        init() throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            self.fd = fd
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 8) == 0 && getsockname(fd, $0, &length) == 0 }
            }
            guard bound else { throw POSIXError(.EADDRINUSE) }
            port = Int(UInt16(bigEndian: address.sin_port))
            Thread {
                let client = accept(fd, nil, nil)
                if client >= 0 { self.lock.lock(); self.accepted.append(client); self.lock.unlock() }
            }.start()
        }

        deinit {
            lock.lock()
            for c in accepted { close(c) }
            lock.unlock()
            close(fd)
        }
    }

    @Test("close() before the upgrade ends the connection, says so once, and sends no frame into HTTP; send() then is dropped")
    func closeBeforeUpgrade() throws {
        let server = try SilentServer()
        let io = NetIO(host: "127.0.0.1", port: server.port)
        var closed: [(Int, String)] = []
        var opened = false
        let socket = io.openSocket("/v1/node", token: "x", opened: { _ in opened = true }, text: { _ in }, closed: { closed.append(($0, $1)) })
        let ws = try #require(socket as? WebSocket)
        let deadline = Date().addingTimeInterval(20)
        while !ws.state.attached, Date() < deadline { usleep(1_000) }
        #expect(ws.state.attached && !ws.state.upgraded, "connected, not upgraded")
        ws.send(.object([("id", .int(1)), ("method", .string("ping"))]))  // dropped: no WebSocket yet
        ws.close()
        while closed.isEmpty, Date() < deadline { io.wait(milliseconds: 50); io.drain() }
        #expect(closed.count == 1 && closed.first?.0 == 1006 && !opened, "\(closed)")
    }
}

@Suite("NetIO: a WebSocket opening the server never answers")
struct SocketOpeningTimeoutTests {
    @Test("a server that accepts and never answers the opening: the socket is closed (1006, saying why) once the opening's time is up, so the reconnect's backoff runs, not 'connecting' forever")
    func openingTimesOut() throws {
        let server = try ClientSocketTests.SilentServer()
        let io = NetIO(host: "127.0.0.1", port: server.port, openingTimeout: .milliseconds(300))
        var closed: [(Int, String)] = []
        _ = io.openSocket("/v1/node", token: "x", opened: { _ in Issue.record("opened") }, text: { _ in }, closed: { closed.append(($0, $1)) })
        let deadline = Date().addingTimeInterval(20)
        while closed.isEmpty, Date() < deadline { io.wait(milliseconds: 50); io.drain() }
        #expect(closed.count == 1 && closed.first?.0 == 1006, "\(closed)")
        #expect(closed.first?.1.hasPrefix("no answer to the WebSocket opening in ") == true, "\(closed)")
    }
}

@Suite("The pool: a close during the TLS handshake is a request that never left")
struct HandshakeCloseTests {
    @Test("a clean close, a reset, NIOSSL's uncleanShutdown and its 'EOF during handshake' (how a close mid-handshake comes under load: the soak's 50 bots starting at once) are the other side closing, so the request is sent again; a refused connect is not")
    func closedInHandshake() {
        #expect(ConnectionPool.closedInHandshake(nil))
        #expect(ConnectionPool.closedInHandshake(IOError(errnoCode: ECONNRESET, reason: "read(descriptor:pointer:size:)")))
        #expect(ConnectionPool.closedInHandshake(NIOSSLError.uncleanShutdown))
        #expect(ConnectionPool.closedInHandshake(NIOSSLError.handshakeFailed(.sslError([.eofDuringHandshake]))))
        #expect(!ConnectionPool.closedInHandshake(IOError(errnoCode: ECONNREFUSED, reason: "connect")))
        #expect(!ConnectionPool.closedInHandshake(NIOSSLError.handshakeFailed(.sslError([]))))
        #expect(!ConnectionPool.closedInHandshake(NIOSSLError.handshakeFailed(.zeroReturn)))
    }
}

/// A hostile server's answer without end: the client reads at most
/// `MessageLimits.maxAnswerBytes` of it, fails the request in words, and drops the connection.
@Suite("An answer without end: read up to the cap, no further")
struct EndlessAnswerTests {
    /// Accepts one connection, reads its request, answers 200 with a declared gigabyte (or
    /// chunked, without end) and writes until the client goes or 64 MiB are written.
    final class EndlessServer: @unchecked Sendable {
        let fd: Int32
        let port: Int
        private let lock = NSLock()
        private var sent = 0
        private var finished = false
        var written: (bytes: Int, done: Bool) { lock.lock(); defer { lock.unlock() }; return (sent, finished) }

        init(chunked: Bool) throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            self.fd = fd
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 8) == 0 && getsockname(fd, $0, &length) == 0 }
            }
            guard bound else { throw POSIXError(.EADDRINUSE) }
            port = Int(UInt16(bigEndian: address.sin_port))
            Thread { [self] in
                let client = accept(fd, nil, nil)
                guard client >= 0 else { return }
                defer { close(client) }
                var buffer = [UInt8](repeating: 0, count: 4096)
                _ = read(client, &buffer, buffer.count)  // the request's head (one read: it is small)
                let head = chunked ? "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" : "HTTP/1.1 200 OK\r\nContent-Length: 1073741824\r\n\r\n"
                _ = head.utf8CString.withUnsafeBufferPointer { write(client, $0.baseAddress, $0.count - 1) }
                let block = [UInt8](repeating: UInt8(ascii: "x"), count: 65_536)
                let chunk = Array("10000\r\n".utf8) + block + Array("\r\n".utf8)
                let piece = chunked ? chunk : block
                while true {
                    let n = piece.withUnsafeBufferPointer { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    lock.lock()
                    if n > 0 { sent += n }
                    let stop = n <= 0 || sent >= 64 << 20
                    if stop { finished = true }
                    lock.unlock()
                    if stop { return }
                }
            }.start()
        }

        deinit { close(fd) }
    }

    @Test("a declared gigabyte, and a chunked answer without end: the request fails saying the cap, and the server could write little past it before the client went",
          arguments: [false, true])
    func capped(chunked: Bool) throws {
        let server = try EndlessServer(chunked: chunked)
        let io = NetIO(host: "127.0.0.1", port: server.port)
        #expect {
            _ = try io.requestNow(.GET, "/v1/indexer/tip", body: nil, token: "x")
        } throws: { error in
            "\(error)".contains("longer than the 8 MiB a client reads")
        }
        let deadline = Date().addingTimeInterval(20)
        while !server.written.done, Date() < deadline { usleep(10_000) }
        let written = server.written
        #expect(written.done && written.bytes < 16 << 20, "the client closed after the cap: the server wrote \(written.bytes) bytes")
    }
}
