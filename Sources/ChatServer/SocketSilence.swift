import Foundation
import NIOCore
import NIOWebSocket

/// An upgraded socket that says nothing is asked whether anyone is there: after `pingAfter`
/// with no frame from the peer, a protocol ping (RFC 6455 §5.5.2); if no frame at all — its
/// pong or anything else — comes within `pongWithin`, a close frame (1001) and the end of the
/// socket: a crowd that holds sockets open and never speaks would keep newcomers out.
///
/// Timers are the channel's event loop's (on `EmbeddedChannel`, its virtual time): one check
/// is armed at a time, at the instant the silence would end, so a busy socket costs a clock
/// read a frame and no timer.
final class SocketSilence: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let pingAfter: TimeAmount
    private let pongWithin: TimeAmount
    private var lastHeard = NIODeadline.uptimeNanoseconds(0)
    /// When the ping went, while its answer is awaited.
    private var pingedAt: NIODeadline?
    private var check: Scheduled<Void>?

    init(pingAfter: TimeAmount, pongWithin: TimeAmount) {
        self.pingAfter = pingAfter
        self.pongWithin = pongWithin
    }

    func handlerAdded(context: ChannelHandlerContext) {
        lastHeard = context.eventLoop.now
        arm(context, at: lastHeard + pingAfter)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        check?.cancel()
        check = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastHeard = context.eventLoop.now
        context.fireChannelRead(data)
    }

    private func arm(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        check?.cancel()
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        check = context.eventLoop.scheduleTask(deadline: deadline) {
            let (silence, context) = loopBound.value
            silence.due(context)
        }
    }

    private func due(_ context: ChannelHandlerContext) {
        let now = context.eventLoop.now
        if let pingedAt {
            guard lastHeard < pingedAt else {
                self.pingedAt = nil
                return arm(context, at: lastHeard + pingAfter)
            }
            var reason = context.channel.allocator.buffer(capacity: 64)
            reason.write(webSocketErrorCode: .goingAway)
            reason.writeString("no answer to a ping in \((Double(pongWithin.nanoseconds) / 1e9).formatted()) s")
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: reason)), promise: nil)
            context.close(promise: nil)
            return
        }
        guard now >= lastHeard + pingAfter else { return arm(context, at: lastHeard + pingAfter) }
        pingedAt = now
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .ping, data: context.channel.allocator.buffer(string: "still there?"))),
                              promise: nil)
        arm(context, at: now + pongWithin)
    }
}
