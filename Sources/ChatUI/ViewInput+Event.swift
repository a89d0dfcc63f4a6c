import SyncCore
import SyncEngine

extension ViewInput {
    /// What one engine event means to the view: the one route from the engine to the
    /// screen (docs/design.md "The UI learns everything from the engine's events"). Pure: the event carries everything, so
    /// nothing is read back from the store or the engine. Log lines carry the world's clock,
    /// the same clock as the status bar.
    public static func from(_ e: TimedEvent) -> [ViewInput] {
        switch e.event {
        case .messageStored(let m, let contact):
            // The message pane shows it; the log has its arrival (shown when the filter is `all`).
            return [.message(m.message.conversation, MessageRow(m, contact: contact)), log(e, .arrival)]
        case .catchUpStarted(_, let kind, _, _):
            return [log(e, .decision), .syncMark(kind == .full ? .full : kind == .targeted ? .targeted : .light, at: e.at)]
        case .catchUpSkipped:
            return [log(e, .decision), .syncMark(.skipped, at: e.at)]
        case .catchUpFinished(_, _, _, let requests, _, _, _) where requests > 0:
            return [log(e, .decision), .syncRequests(requests, at: e.at)]
        case .tipAsked, .pushCheckAsked, .refreshLookAsked, .closingLookAsked:
            return [log(e, .decision), .syncRequests(1, at: e.at)]  // (d), (e), (f): one request, outside any sync
        case .observationHit(let txId, let offset, let via):
            return [log(e, .hit(txId: txId, pushOffset: offset, via: via))]
        case .messageSent:
            return [log(e, .arrival)]  // the pane shows the message; "all" shows the line
        case .status(let status):
            return [.engineStatus(status)]
        case .contact(let c):
            return [.contact(c)]
        case .unread(let a, let n):
            return [.unread(a, n)]
        case .inspection(let i):
            return [.inspection(i)]
        case .outgoing(let m):
            return [.outgoing(m)]
        case .banner(let b, _):
            return [.banner(BannerRow(conversation: b.conversation, title: b.title, body: b.body, at: e.at)), log(e, .decision)]
        default:
            return [log(e, .decision)]
        }
    }

    static func log(_ e: TimedEvent, _ kind: LogEntry.Kind) -> ViewInput {
        .log(LogEntry(time: Clock.time(e.at), text: Clock.worldTimes(in: e.event.line), kind: kind))
    }
}

extension MessageRow {
    /// A stored message as the pane shows it: the contact's display name as its sender.
    public init(_ m: StoredMessage, contact: Contact) {
        self.init(txId: m.txId, outgoing: m.message.direction == .outgoing, sender: contact.displayName, text: m.message.body,
                  kind: m.message.kind, blockTime: m.message.blockTime, channel: m.via)
    }
}
