import FaultProxy
import Foundation
import Testing

/// The soak's proxy, judged with plain sockets of the test's own (no NIO on this side): bytes
/// pass both ways untouched; an end on either side reaches the other; a stall holds everything
/// until it is lifted; a reset is an RST; a cut lets part of an answer through, then ends it.
@Suite("The soak's proxy: stalls, resets and cuts, and otherwise passes everything")
struct FaultProxyTests {
    /// A listening socket on 127.0.0.1 and its port (the server behind the proxy).
    static func listener() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard fd >= 0, bound == 0, listen(fd, 8) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    static func connectTo(_ port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard ok == 0 else { throw POSIXError(.ECONNREFUSED) }
        return fd
    }

    static func ready(_ fd: Int32, within ms: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, ms) == 1
    }

    static func accepted(_ listener: Int32) -> Int32? {
        guard ready(listener, within: 10_000) else { return nil }
        let fd = accept(listener, nil, nil)
        return fd >= 0 ? fd : nil
    }

    /// What one read gives within `ms`: bytes, `.end` (EOF), `.reset` (ECONNRESET) or `.nothing`.
    enum Read: Equatable { case bytes([UInt8]), end, reset, nothing }
    static func read(_ fd: Int32, within ms: Int32 = 10_000) -> Read {
        guard ready(fd, within: ms) else { return .nothing }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let n = recv(fd, &buffer, buffer.count, 0)
        if n < 0 { return errno == ECONNRESET ? .reset : .end }
        return n == 0 ? .end : .bytes(Array(buffer.prefix(n)))
    }

    /// Everything until the end, and how it ended.
    static func drain(_ fd: Int32) -> (bytes: Int, ending: Read) {
        var total = 0
        while true {
            switch read(fd) {
            case .bytes(let b): total += b.count
            case let other: return (total, other)
            }
        }
    }

    static func send(_ fd: Int32, _ bytes: [UInt8]) { _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }

    /// A proxy before a listening server, one client connected through it, the server's side accepted.
    final class Rig {
        let proxy: FaultProxy
        let server: Int32, client: Int32
        var upstream: Int32
        init() throws {
            let (server, port) = try FaultProxyTests.listener()
            proxy = FaultProxy(target: port)
            guard let front = proxy.listen(for: "alice") else { throw POSIXError(.EADDRNOTAVAIL) }
            self.server = server
            client = try FaultProxyTests.connectTo(front)
            guard let upstream = FaultProxyTests.accepted(server) else { throw POSIXError(.ETIMEDOUT) }
            self.upstream = upstream
        }
        func close() {
            proxy.shutdown()
            for fd in [server, client, upstream] where fd >= 0 { Glibc.close(fd) }
        }
    }

    @Test("bytes pass both ways as they were sent; the server's end reaches the client, and the client's the server")
    func passes() throws {
        let rig = try Rig()
        defer { rig.close() }
        Self.send(rig.client, Array("GET / HTTP/1.1\r\n\r\n".utf8))
        #expect(Self.read(rig.upstream) == .bytes(Array("GET / HTTP/1.1\r\n\r\n".utf8)))
        let answer = (0..<3000).map { UInt8($0 % 251) }
        Self.send(rig.upstream, answer)
        var got: [UInt8] = []
        while got.count < answer.count, case .bytes(let b) = Self.read(rig.client) { got += b }
        #expect(got == answer)
        // A server killed: its side ends, and the client's connection ends with it.
        shutdown(rig.upstream, Int32(SHUT_RDWR))
        #expect(Self.read(rig.client) == .end)

        // A server killed with unread bytes: its kernel resets the connection (RST).
        let reset = try Rig()
        defer { reset.close() }
        Self.send(reset.client, [1, 2, 3])
        #expect(Self.read(reset.upstream) == .bytes([1, 2, 3]))
        var hard = linger(l_onoff: 1, l_linger: 0)
        setsockopt(reset.upstream, SOL_SOCKET, SO_LINGER, &hard, socklen_t(MemoryLayout<linger>.size))
        shutdown(reset.upstream, Int32(SHUT_RDWR))
        Glibc.close(reset.upstream)
        reset.upstream = -1
        #expect(Self.read(reset.client) == .end)

        let second = try Rig()
        defer { second.close() }
        shutdown(second.client, Int32(SHUT_WR))
        #expect(Self.read(second.upstream) == .end)
    }

    @Test("a server that is down: the client's connection is accepted and then ends")
    func serverDown() throws {
        let (server, port) = try Self.listener()
        Glibc.close(server)  // nobody listens on the port any more
        let proxy = FaultProxy(target: port)
        defer { proxy.shutdown() }
        let client = try Self.connectTo(#require(proxy.listen(for: "bob")))
        defer { Glibc.close(client) }
        #expect(Self.drain(client).ending != .nothing)
    }

    @Test("a stall holds every byte both ways, on open connections and on new ones, until it is lifted; nothing is lost")
    func stall() throws {
        let rig = try Rig()
        defer { rig.close() }
        rig.proxy.stall("alice")
        Self.send(rig.client, [1, 2, 3])
        Self.send(rig.upstream, [4, 5])
        #expect(Self.read(rig.upstream, within: 300) == .nothing)
        #expect(Self.read(rig.client, within: 300) == .nothing)
        let late = try Self.connectTo(rig.proxy.port(of: "alice")!)
        defer { Glibc.close(late) }
        let lateUpstream = try #require(Self.accepted(rig.server))
        defer { Glibc.close(lateUpstream) }
        Self.send(late, [9])
        #expect(Self.read(lateUpstream, within: 300) == .nothing)
        rig.proxy.resume("alice")
        #expect(Self.read(rig.upstream) == .bytes([1, 2, 3]))
        #expect(Self.read(rig.client) == .bytes([4, 5]))
        #expect(Self.read(lateUpstream) == .bytes([9]))
    }

    @Test("a reset ends the client's connections with an RST (ECONNRESET), and only its own")
    func reset() throws {
        let rig = try Rig()
        defer { rig.close() }
        let other = try #require(rig.proxy.listen(for: "carol"))
        let bystander = try Self.connectTo(other)
        defer { Glibc.close(bystander) }
        let bystanderUpstream = try #require(Self.accepted(rig.server))
        defer { Glibc.close(bystanderUpstream) }
        #expect(rig.proxy.reset("alice") == 1)
        #expect(Self.read(rig.client) == .reset)
        Self.send(bystander, [7])
        #expect(Self.read(bystanderUpstream) == .bytes([7]))
    }

    @Test("while a cut is armed, an answer passes in part and its connection ends there; disarmed, answers pass whole")
    func cut() throws {
        let rig = try Rig()
        defer { rig.close() }
        rig.proxy.cut("alice", armed: true)
        Self.send(rig.upstream, [UInt8](repeating: 65, count: 2000))
        let (bytes, ending) = Self.drain(rig.client)
        #expect(bytes > 0 && bytes < 2000)
        #expect(ending == .end)
        rig.proxy.cut("alice", armed: false)
        let next = try Self.connectTo(rig.proxy.port(of: "alice")!)
        defer { Glibc.close(next) }
        let nextUpstream = try #require(Self.accepted(rig.server))
        defer { Glibc.close(nextUpstream) }
        Self.send(nextUpstream, [UInt8](repeating: 66, count: 2000))
        shutdown(nextUpstream, Int32(SHUT_WR))
        #expect(Self.drain(next) == (2000, .end))
        #expect(rig.proxy.figures.cuts == 1)
    }
}
