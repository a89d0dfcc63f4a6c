// Notifications — docs/spec.md rule 15.
//
// Decides whether an incoming message raises a banner and what it shows: the mode must
// deliver notifications at all, muted contacts never do, and a conversation gets at most
// one banner per `notificationRateLimit`. The badge is the total unread count (the store's).
// No timers: the rate limit is a comparison.

public struct Banner: Hashable, Sendable {
    public var conversation: Address
    public var title: String
    public var body: String

    public init(conversation: Address, title: String, body: String) {
        self.conversation = conversation
        self.title = title
        self.body = body
    }
}

public struct NotificationPresenter: Hashable, Sendable {
    public enum Decision: Equatable, Sendable {
        /// Show this banner.
        case show(Banner)
        /// No banner, and why.
        case suppressed(reason: Suppression)
    }

    /// Why no banner shows (its words are the log's, at the engine's edge).
    public enum Suppression: Equatable, Sendable {
        case notificationsOff
        case muted(handle: String)
        /// One banner per conversation per this long.
        case rateLimited(oneEvery: Interval)
    }

    public let settings: SyncSettings
    public var preview: PreviewMode
    private var lastShown: [Address: Instant] = [:]

    public init(settings: SyncSettings = .default, preview: PreviewMode = .message) {
        self.settings = settings
        self.preview = preview
    }

    /// An incoming message reached the app while backgrounded (push extension or refresh).
    public mutating func incoming(from contact: Contact, kind: MessageKind, text: String, mode: NotificationMode, now: Instant) -> Decision {
        if mode == .off { return .suppressed(reason: .notificationsOff) }
        if contact.muted { return .suppressed(reason: .muted(handle: contact.handle)) }
        if let last = lastShown[contact.address], now - last < settings.notificationRateLimit {
            return .suppressed(reason: .rateLimited(oneEvery: settings.notificationRateLimit))
        }
        lastShown[contact.address] = now
        return .show(banner(for: contact, kind: kind, text: text))
    }

    /// What a banner says under each preview mode.
    public func banner(for contact: Contact, kind: MessageKind, text: String) -> Banner {
        let content: String
        switch kind {
        case .contextual: content = text
        case .handshake: content = "wants to chat"
        case .payment: content = "sent you a payment: " + text
        }
        switch preview {
        case .message: return Banner(conversation: contact.address, title: contact.displayName, body: content)
        case .contact: return Banner(conversation: contact.address, title: contact.displayName, body: "New message")
        case .hidden: return Banner(conversation: contact.address, title: "synchat", body: "New message")
        }
    }
}
