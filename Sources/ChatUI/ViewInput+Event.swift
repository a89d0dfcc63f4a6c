import SyncCore
import SyncEngine

extension ViewInput {
    /// What one engine event means to the view: the one route from the engine to the
    /// screen (STYLE.md "One stream to the UI"). Pure: the event carries everything, so
    /// nothing is read back from the store or the engine. Log lines carry the world's clock,
    /// the same clock as the status bar.
    public static func from(_ e: TimedEvent) -> [ViewInput] {
        switch e.event {
        case .messageStored(let m, let contact):
            // The message pane shows it; the log keeps to decisions.
            return [.message(m.message.conversation, MessageRow(m, contact: contact))]
        case .messageSent:
            return []
        case .status(let status):
            return [.engineStatus(status)]
        case .contact(let c):
            return [.contact(c)]
        case .inspection(let i):
            return [.inspection(i)]
        case .outgoing(let m):
            return [.outgoing(m)]
        case .banner(let b, _):
            return [.banner(BannerRow(conversation: b.conversation, title: b.title, body: b.body, at: e.at)), logLine(e)]
        default:
            return [logLine(e)]
        }
    }

    static func logLine(_ e: TimedEvent) -> ViewInput {
        .logLine(Clock.time(e.at) + " " + e.event.line)
    }
}

extension MessageRow {
    /// A stored message as the pane shows it: the contact's display name as its sender.
    public init(_ m: StoredMessage, contact: Contact) {
        self.init(txId: m.txId, outgoing: m.message.direction == .outgoing, sender: contact.displayName, text: m.message.body,
                  kind: m.message.kind, blockTime: m.message.blockTime, channel: m.via)
    }
}
