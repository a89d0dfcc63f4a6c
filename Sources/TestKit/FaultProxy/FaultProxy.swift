import Foundation
import NIOCore
import NIOPosix

/// A connection-level nemesis (the soak's, `synchat-bench soak`): a small TCP proxy on loopback
/// between each client and the server. It passes the bytes through untouched (TLS stays end to end: the proxy reads
/// nothing of what it carries) and, when told, breaks one client's connections the ways a
/// network does:
/// - `stall`: nothing passes either way, on the open connections and on those opened meanwhile
///   (a Wi-Fi that is up and carries nothing), until `resume`;
/// - `reset`: every open connection ends at once with a TCP reset (RST), both ways;
/// - `cut`: while armed, whatever the server sends on the client's connections passes only in
///   part and the connection closes there, in the middle of a TLS record, an HTTP answer or a
///   WebSocket frame.
/// One listener a client (127.0.0.1, a free port), so that a fault has one victim. Every fact
/// of the proxy lives on its one event loop; the caller's thread asks through `onLoop`.
public final class FaultProxy: @unchecked Sendable {
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let loop: EventLoop
    /// The server's port: where every accepted connection is carried.
    public let target: Int
    private var listeners: [String: Channel] = [:]
    private var down = false
    /// Each client's connections now open (loop only).
    private var links: [String: [Link]] = [:]
    private var stalled: Set<String> = []
    private var cutting: Set<String> = []
    /// Counts, for the report (loop only).
    private var counts = (accepted: 0, resets: 0, cuts: 0)

    /// One client's connection and the proxy's to the server (the loop's only).
    public final class Link: @unchecked Sendable {
        let name: String
        let client: Channel
        var server: Channel?
        init(name: String, client: Channel) {
            self.name = name
            self.client = client
        }
    }

    public init(target: Int) {
        self.target = target
        loop = group.next()
    }

    private func onLoop<T>(_ body: @escaping () -> T) -> T {
        let box = OwnerThreadOnly(body)
        return (try? loop.submit { OwnerThreadOnly(box.value()) }.wait())!.value
    }

    /// A listener for one client; its port, or nil when none could be bound.
    public func listen(for name: String) -> Int? {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            // A client's bytes are read only once the connection to the server is open.
            .childChannelOption(ChannelOptions.autoRead, value: false)
            .childChannelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture { try accepted(channel, name: name) }
            }
        guard let channel = try? bootstrap.bind(host: "127.0.0.1", port: 0).wait(), let port = channel.localAddress?.port else { return nil }
        onLoop { [self] in listeners[name] = channel }
        return port
    }

    /// The port of `name`'s listener.
    public func port(of name: String) -> Int? { onLoop { [self] in listeners[name]?.localAddress?.port } }

    /// A client connected: its bytes wait while the proxy connects to the server; then both
    /// sides read, unless the client is stalled.
    private func accepted(_ client: Channel, name: String) throws {
        counts.accepted += 1
        let link = Link(name: name, client: client)
        try client.pipeline.syncOperations.addHandler(Relay(proxy: self, link: link, fromServer: false))
        links[name, default: []].append(link)
        ClientBootstrap(group: loop)
            .connectTimeout(.seconds(5))
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .channelOption(ChannelOptions.autoRead, value: false)
            .channelInitializer { [self] server in
                server.eventLoop.makeCompletedFuture { try server.pipeline.syncOperations.addHandler(Relay(proxy: self, link: link, fromServer: true)) }
            }
            .connect(host: "127.0.0.1", port: target)
            .whenComplete { [self] result in
                switch result {
                case .failure:
                    client.close(promise: nil)  // the server is down: the client sees its connection end
                case .success(let server):
                    link.server = server
                    if !client.isActive { server.close(promise: nil); return }
                    if !stalled.contains(name) { reading(link, true) }
                }
            }
    }

    private func reading(_ link: Link, _ on: Bool) {
        for channel in [link.client, link.server].compactMap({ $0 }) {
            channel.setOption(ChannelOptions.autoRead, value: on).whenComplete { _ in }
            if on { channel.read() }
        }
    }

    /// Back-pressure, as a proxy owes it: a side that cannot take more stops the reading of the
    /// other (a stopped client's unread answers stay in the server's socket, as without the proxy).
    fileprivate func writable(_ link: Link, toServer: Bool, _ yes: Bool) {
        guard !stalled.contains(link.name), let from = toServer ? link.client : link.server else { return }
        from.setOption(ChannelOptions.autoRead, value: yes).whenComplete { _ in }
    }

    fileprivate func closed(_ link: Link) {
        link.client.close(promise: nil)
        link.server?.close(promise: nil)
        links[link.name]?.removeAll { $0 === link }
    }

    /// True when what the server sends to this link is to be cut now (once: the link closes).
    fileprivate func cuts(_ link: Link) -> Bool {
        guard cutting.contains(link.name) else { return false }
        counts.cuts += 1
        return true
    }

    // MARK: - Faults, asked from any thread

    /// Nothing passes for `name` until `resume`.
    public func stall(_ name: String) {
        onLoop { [self] in
            stalled.insert(name)
            for link in links[name] ?? [] { reading(link, false) }
        }
    }

    public func resume(_ name: String) {
        onLoop { [self] in
            stalled.remove(name)
            for link in links[name] ?? [] where link.server != nil { reading(link, true) }
        }
    }

    /// Every open connection of `name` reset (SO_LINGER 0, then close: an RST, not a FIN); the
    /// number reset.
    @discardableResult public func reset(_ name: String) -> Int {
        onLoop { [self] in
            let open = links[name] ?? []
            for link in open {
                for channel in [link.client, link.server].compactMap({ $0 }) {
                    if let options = channel as? SocketOptionProvider {
                        options.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
                    } else {
                        channel.close(promise: nil)
                    }
                }
            }
            counts.resets += open.count
            return open.count
        }
    }

    /// While armed, what the server sends to `name` is cut short and the connection closed.
    public func cut(_ name: String, armed: Bool) {
        onLoop { [self] in
            if armed { cutting.insert(name) } else { cutting.remove(name) }
        }
    }

    /// Every fault lifted (the soak's heal).
    public func healAll() {
        for name in onLoop({ [self] in Array(stalled) }) { resume(name) }
        onLoop { [self] in cutting.removeAll() }
    }

    public var figures: (accepted: Int, resets: Int, cuts: Int) { onLoop { [self] in counts } }

    public func shutdown() {
        guard !down else { return }
        down = true
        onLoop { [self] in
            for channel in listeners.values { channel.close(promise: nil) }
            for link in links.values.joined() { closed(link) }
        }
        try? group.syncShutdownGracefully()
    }
}

/// One side of a link: what it reads goes to the other side as it came, unless the proxy cuts it.
private final class Relay: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let proxy: FaultProxy
    let link: FaultProxy.Link
    let fromServer: Bool

    init(proxy: FaultProxy, link: FaultProxy.Link, fromServer: Bool) {
        self.proxy = proxy
        self.link = link
        self.fromServer = fromServer
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        guard let other = fromServer ? link.client : link.server else { return }
        if fromServer, bytes.readableBytes > 1, proxy.cuts(link) {
            let part = bytes.readSlice(length: bytes.readableBytes / 2)!
            let link = link, proxy = proxy
            other.writeAndFlush(part).whenComplete { _ in proxy.closed(link) }
            return
        }
        other.writeAndFlush(bytes, promise: nil)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        proxy.writable(link, toServer: fromServer, context.channel.isWritable)
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        proxy.closed(link)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        proxy.closed(link)
    }
}

/// A value only the proxy's loop touches, carried across to it and back.
private struct OwnerThreadOnly<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
