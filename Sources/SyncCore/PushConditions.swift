// Push reliability's inputs (docs/spec.md rules 1–2): when push is operational, and where a
// piece of evidence was seen.

/// The inputs of rule 1: when push can be relied on at all.
public struct PushConditions: Hashable, Sendable {
    public var mode: NotificationMode
    public var permissionGranted: Bool
    public var tokenStatus: TokenStatus

    public init(mode: NotificationMode, permissionGranted: Bool, tokenStatus: TokenStatus) {
        self.mode = mode
        self.permissionGranted = permissionGranted
        self.tokenStatus = tokenStatus
    }

    /// Rule 1: push is operational only in `remote-push` mode, with permission, with an active token.
    public var operational: Bool { mode == .remotePush && permissionGranted && tokenStatus == .active }

    /// Why push is not operational.
    public enum NotOperational: Equatable, Sendable {
        case mode(NotificationMode)
        case noPermission
        case token(TokenStatus)
    }

    /// Why push is not operational, for the log; nil when it is.
    public var whyNotOperational: NotOperational? {
        if mode != .remotePush { return .mode(mode) }
        if !permissionGranted { return .noPermission }
        if tokenStatus != .active { return .token(tokenStatus) }
        return nil
    }
}

/// Where a piece of push evidence was seen (rule 2, and improvement (a)).
public enum EvidenceChannel: String, Sendable {
    case realtime
    /// First found by a catch-up: improvement (a).
    case fetch
}
