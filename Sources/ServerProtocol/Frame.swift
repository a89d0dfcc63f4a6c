import NIOCore
import NIOWebSocket

/// One WebSocket frame as either end reads it (RFC 6455 §5): what it is, with its payload
/// unmasked and checked. The server and the client each decide what to do with it; the
/// reading is here once.
public enum Frame: Equatable {
    /// A text frame: valid UTF-8 (§5.6).
    case text([UInt8])
    case binary
    case ping([UInt8])
    case pong
    /// A close frame: its code (nil for none) and reason.
    case close(code: UInt16?, reason: String)
    /// A frame that ends the socket with this code: 1002 for one that breaks the protocol (a
    /// reserved opcode, a close frame no peer may send), 1007 for text that is not UTF-8
    /// (§7.4.1).
    case refused(code: UInt16, reason: String)

    public init(_ frame: WebSocketFrame) {
        var payload = frame.unmaskedData
        switch frame.opcode {
        case .text:
            let bytes = payload.readBytes(length: payload.readableBytes) ?? []
            self = String(validating: bytes, as: UTF8.self) == nil ? .refused(code: 1007, reason: "a text frame that is not UTF-8") : .text(bytes)
        case .binary: self = .binary
        case .ping: self = .ping(payload.readBytes(length: payload.readableBytes) ?? [])
        case .pong: self = .pong
        case .connectionClose: self = Self.close(&payload)
        case .continuation: self = .refused(code: 1002, reason: "a continuation frame with no message to continue")
        default: self = .refused(code: 1002, reason: "opcode \(UInt8(webSocketOpcode: frame.opcode)) is reserved")
        }
    }

    /// RFC 6455 §5.5.1 and §7.4: no payload, or a code of two bytes and a UTF-8 reason; the
    /// codes a peer may send are 1000–1003, 1007–1011 and 3000–4999.
    private static func close(_ payload: inout ByteBuffer) -> Frame {
        guard payload.readableBytes != 1 else { return .refused(code: 1002, reason: "a close frame of one byte") }
        guard let code = payload.readInteger(as: UInt16.self) else { return .close(code: nil, reason: "") }
        let allowed = (1000...1003).contains(code) || (1007...1011).contains(code) || (3000...4999).contains(code)
        guard allowed else { return .refused(code: 1002, reason: "close code \(code) is not one a peer may send") }
        let bytes = payload.readBytes(length: payload.readableBytes) ?? []
        guard let reason = String(validating: bytes, as: UTF8.self) else { return .refused(code: 1007, reason: "a close reason that is not UTF-8") }
        return .close(code: code, reason: reason)
    }
}

extension Frame {
    /// Why a WebSocket closed, in words for a person (the log, the bar): the peer's reason
    /// when it gave one, else what its close code means (RFC 6455 §7.4.1); 1006 is no code a
    /// peer sends, but the close a client sees when the connection was lost.
    public static func closeWords(code: Int?, reason: String) -> String {
        if !reason.isEmpty { return reason }
        switch code {
        case nil: return "closed without a reason"
        case 1000: return "closed normally"
        case 1001: return "the server is going away"
        case 1002: return "a protocol error"
        case 1003: return "a kind of frame the other side does not take"
        case 1006: return "the connection was lost"
        case 1007: return "a frame that is not text it could read"
        case 1008: return "refused by the server's policy"
        case 1009: return "a message too big"
        case 1011: return "the server could not go on"
        case 1012: return "the server is restarting"
        case 1013: return "the server is busy: try again later"
        case let code?: return "closed with code \(code)"
        }
    }
}
