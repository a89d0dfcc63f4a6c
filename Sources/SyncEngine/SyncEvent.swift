import SyncCore

/// Everything the engine decides or observes, as typed values a view-model can subscribe
/// to. Each has a one-line human rendering that says what happened and why; untrusted text
/// in it (names, bodies) is made visible-safe first.
///
/// The large cases are `indirect`: an event is as big as its largest case, and the logs keep
/// every decision, so a status bar's worth of fields inline in each would make a million-message
/// run's log about a kilobyte an event.
public enum SyncEvent: Equatable, Sendable {
    case launched(messages: Int, pushState: PushState, mode: NotificationMode)
    case lifecycle(Lifecycle, detail: String)
    case realtime(RealtimeState, reason: String)
    case pushState(from: PushState, to: PushState, reason: String)
    case observationHit(txId: String, pushOffset: Interval, via: EvidenceChannel)
    case observationMiss(txId: String, consecutiveMisses: Int, threshold: Int, via: EvidenceChannel)
    /// (a): a miss judged after a hit on a later tx: not a miss in a row.
    case observationSuperseded(txId: String, via: EvidenceChannel)
    /// (a): a hit judged late on a tx seen before a miss already counted: not a sign push works now.
    case observationHitSuperseded(txId: String, via: EvidenceChannel)
    case catchUpStarted(trigger: CatchUpTrigger, kind: CatchUpGate.SyncKind, forced: Bool, objects: Int)
    case catchUpJoined(trigger: CatchUpTrigger, running: String)
    case catchUpSkipped(trigger: CatchUpTrigger, lastAgo: Interval, nextAllowedIn: Interval)
    /// At a relaunch: a catch-up did not complete before the app quit (it was running, or it
    /// had failed), so it is owed (rule 14): the next trigger runs it, not debounced.
    case catchUpOwed(kind: CatchUpGate.SyncKind, forced: Bool)
    /// (g): a forced catch-up called for as the app resumes, owed to the foreground's
    /// recovery: the reconnect's catch-up runs it, or rule 11's fallback `until` later.
    case catchUpDeferred(trigger: CatchUpTrigger, until: Interval)
    indirect case catchUpFinished(trigger: CatchUpTrigger, kind: CatchUpGate.SyncKind, stored: Int, requests: Int, failed: Int, took: Interval, stoppedBy: String?)
    /// A message the app did not have, stored (or kept in memory while the store cannot
    /// write), with its conversation's contact: all a view needs to show it.
    indirect case messageStored(StoredMessage, contact: Contact)
    case messageSent(txId: String, to: String)
    /// The network could not take a message; it is tried again in `retryIn`.
    /// `retryIn` nil: refused for good, not tried again unless the user asks.
    indirect case sendFailed(to: String, reason: String, retryIn: Interval?, failures: Int)
    /// An outgoing message changed state (sending, failed, sent). Not a decision: the
    /// decisions are `messageSent` and `sendFailed`.
    indirect case outgoing(OutgoingMessage)
    case polling(String)
    /// (d): a poll asks the indexer's tips (one backend request) before syncing, for the
    /// `objects` a full sync would fetch.
    case tipAsked(objects: Int)
    /// (d): the tips answered: the newest indexed block time, and the objects (of `of`) whose
    /// tip is past their cursor, which a targeted sync fetches; none, no sync.
    /// `age`: how old the newest indexed message is (nil: there is none). An event line says
    /// no instant of its own: the line's stamp is its one clock, whichever clock a screen shows.
    indirect case tipsAnswered(age: Interval?, moved: [String], of: Int)
    /// (e): verifying push while realtime is not live: started, stopped, a check skipped.
    case pushCheck(String)
    /// (e): a push check asks the indexer's tip (one backend request).
    case pushCheckAsked(objects: Int)
    /// (e): the tips answered, and the objects (of `of`) past what any channel brought.
    indirect case pushCheckAnswered(age: Interval?, moved: [String], of: Int)
    /// (h): the closing look of a realtime outage push was trusted to cover: scheduled, dropped.
    case closingLook(String)
    /// (h): the closing look asks the indexer's tips counted over the gap (one backend request).
    case closingLookAsked(objects: Int)
    /// (h): the tips answered, and the objects (of `of`) short of what the app holds.
    indirect case closingLookAnswered(age: Interval?, moved: [String], of: Int)
    case backgroundRefresh(String)
    /// (f), (g): push's record: a message push lost.
    case pushWatch(String)
    /// (f): a background refresh looks first: the indexer's tips (one backend request), for
    /// the `objects` a full sync would fetch; `why`: what push's watch said.
    case refreshLookAsked(objects: Int, why: String)
    /// The push service dropped what it held for the device (FCM's "messages deleted").
    case pushMessagesDeleted
    /// The push path closed or opened again (`pushPath(open:)`); `letGo`: sightings that
    /// waited for a push it could no longer bring.
    case pushPath(open: Bool, letGo: Int)
    case tokenStatus(TokenStatus)
    case tokenRegistration(String)
    indirect case banner(Banner, badge: Int)
    case bannerSuppressed(conversation: String, reason: String)
    case error(source: String, message: String)
    /// The store cannot write (`trouble` says why), or writes again (`trouble` nil):
    /// logged once per change; `unsaved` changes are kept in memory meanwhile.
    indirect case storeTrouble(String?, unsaved: Int, retryEvery: Interval)
    /// A scenario directive or user action that changed the world (a fault, a mute, …).
    case world(String)
    /// What the status bar says changed. Not a decision: not in the decision log.
    indirect case status(EngineStatus)
    /// A contact (a conversation) was added, renamed, muted or unmuted. Not a decision.
    case contact(Contact)
    /// What an inspector shows changed (sent only while one looks). Not a decision.
    indirect case inspection(EngineInspection)
    /// A conversation's unread count as the store now has it, after a write that changed it
    /// (messages stored, or the conversation read). The store owns the count; a view shows
    /// this and keeps no counter of its own. Not a decision.
    case unread(conversation: Address, count: Int)

    /// What an event is about, as its line names it first (`catch-up …`, `push check: …`): the
    /// typed way to pick events out of a log, for a filter, a pane or a test.
    public enum Topic: Equatable, Hashable, Sendable, CaseIterable {
        case launched, lifecycle, realtime
        /// Push's state (`push reliable → unreliable: …`).
        case pushState
        case observation, catchUp
        /// A message stored; one sent; a send that failed.
        case message, sent, send, outgoing
        /// Rule 13's polling, and (d)'s tips before a poll.
        case polling
        /// (e): push verified while realtime cannot.
        case pushCheck
        /// (h): the closing look of an outage.
        case closingLook
        case pushPath, pushService
        case backgroundRefresh, pushWatch
        /// The push token's status and its registration.
        case pushToken
        /// A banner, shown or suppressed.
        case banner
        case error, store, world, contact, inspection, unread, status
    }

    public var topic: Topic {
        switch self {
        case .launched: return .launched
        case .lifecycle: return .lifecycle
        case .realtime: return .realtime
        case .pushState: return .pushState
        case .observationHit, .observationMiss, .observationSuperseded, .observationHitSuperseded: return .observation
        case .catchUpStarted, .catchUpJoined, .catchUpSkipped, .catchUpOwed, .catchUpDeferred, .catchUpFinished: return .catchUp
        case .messageStored: return .message
        case .messageSent: return .sent
        case .sendFailed: return .send
        case .outgoing: return .outgoing
        case .polling, .tipAsked, .tipsAnswered: return .polling
        case .pushCheck, .pushCheckAsked, .pushCheckAnswered: return .pushCheck
        case .closingLook, .closingLookAsked, .closingLookAnswered: return .closingLook
        case .pushPath: return .pushPath
        case .pushMessagesDeleted: return .pushService
        case .backgroundRefresh, .refreshLookAsked: return .backgroundRefresh
        case .pushWatch: return .pushWatch
        case .tokenStatus, .tokenRegistration: return .pushToken
        case .banner, .bannerSuppressed: return .banner
        case .error: return .error
        case .storeTrouble: return .store
        case .world: return .world
        case .contact: return .contact
        case .inspection: return .inspection
        case .unread: return .unread
        case .status: return .status
        }
    }

    /// Every event but the view's own (`.status`, `.contact`, `.inspection`, `.outgoing`, `.unread`) is a decision of the log.
    public var isDecision: Bool {
        switch self {
        case .status, .contact, .inspection, .outgoing, .unread: return false
        default: return true
        }
    }

    /// The event in the log's words (`simulate --events`, the TUI's sync log, `--log`, `bot
    /// --events`): the one edge where an event becomes text, so every word in it that came from
    /// the network (a txId, a close reason, a contact's name) is made visible here, never
    /// written to a terminal raw (an ESC shows as `^[`).
    public var line: String {
        let raw = rawLine
        // Most lines are printable ASCII, and stay as they are without a copy.
        if raw.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return raw }
        return UntrustedText.visible(raw)
    }

    private var rawLine: String {
        switch self {
        case .launched(let n, let push, let mode):
            return "launched: \(n) stored messages, push \(push.rawValue), mode \(mode.rawValue)"
        case .lifecycle(let l, let detail):
            return "lifecycle \(l.rawValue)" + (detail.isEmpty ? "" : ": \(detail)")
        case .realtime(let s, let reason):
            return "realtime \(s.rawValue): \(reason)"
        case .pushState(let from, let to, let reason):
            return "push \(from.rawValue) → \(to.rawValue): \(reason)"
        case .observationHit(let tx, let offset, let via):
            let rel = offset.milliseconds < 0 ? "\(Interval(milliseconds: -offset.milliseconds)) before" : "\(offset) after"
            return "observation hit \(tx.prefix(8)) (\(via.rawValue)): push \(rel) " + (via == .realtime ? "realtime" : "it landed")
        case .observationMiss(let tx, let misses, let threshold, let via):
            let count = misses <= threshold ? "misses \(misses)/\(threshold)" : "\(misses) consecutive misses"
            return "observation miss \(tx.prefix(8)) (\(via.rawValue)): no push within grace, \(count)"
        case .observationSuperseded(let tx, let via):
            return "observation miss \(tx.prefix(8)) (\(via.rawValue)): no push within grace, but push brought a tx that landed later: not a miss in a row"
        case .observationHitSuperseded(let tx, let via):
            return "observation hit \(tx.prefix(8)) (\(via.rawValue)): its push came in time, but push missed a tx seen after it: no sign that push works now"
        case .catchUpStarted(let trigger, let kind, let forced, let objects):
            return "catch-up started (\(trigger.rawValue)): \(kind.rawValue) sync of \(Words.count(objects, "object"))" + (forced ? ", forced" : "")
        case .catchUpJoined(let trigger, let running):
            return "catch-up joined (\(trigger.rawValue)): rides on the running \(running) sync"
        case .catchUpSkipped(let trigger, let lastAgo, let left):
            return "catch-up skipped (\(trigger.rawValue)): push reliable, last catch-up \(lastAgo) ago, next allowed in \(left)"
        case .catchUpOwed(let kind, let forced):
            return "catch-up owed: a \(kind.rawValue) catch-up\(forced ? " (forced)" : "") did not complete before the app quit; the next trigger runs it, not debounced"
        case .catchUpDeferred(let trigger, let until):
            return "catch-up deferred (\(trigger.rawValue)): forced, owed to the foreground's reconnect: one full sync once realtime is live, or at the fallback within \(until)"
        case .catchUpFinished(let trigger, let kind, let stored, let requests, let failed, let took, let stoppedBy):
            var s = "catch-up finished (\(trigger.rawValue)): \(kind.rawValue), \(stored) new, \(Words.count(requests, "request")), \(took)"
            if failed > 0 { s += ", \(failed) failed" }
            if let stoppedBy { s += ", stopped: \(stoppedBy)" }
            return s
        case .messageStored(let m, let contact):
            let dir = m.message.direction == .incoming ? "from" : "to"
            return "message \(m.txId.prefix(8)) \(dir) \(UntrustedText.visible(contact.handle)) (\(m.message.kind.rawValue)) via \(m.via.rawValue)"
        case .messageSent(let tx, let to):
            return "sent \(tx.prefix(8)) to \(UntrustedText.visible(to))"
        case .sendFailed(let to, let reason, let wait, let failures):
            guard let wait else { return "send to \(UntrustedText.visible(to)) refused: \(UntrustedText.visible(reason)); not tried again (R tries)" }
            return "send to \(UntrustedText.visible(to)) failed: \(UntrustedText.visible(reason)); retry in \(wait) (\(failures) failed)"
        case .outgoing(let m):
            return "outgoing \(m.localId) to \(m.to.value): \(m.state)"
        case .polling(let s):
            return "polling: \(s)"
        case .tipAsked(let objects):
            return "polling: asking the indexer's tips: a sync only of the objects (of \(objects)) whose tip moved past their cursor"
        case .tipsAnswered(let latest, let moved, let of):
            let tip = "polling: tip " + (latest.map { "\($0) old" } ?? "none")
            guard !moved.isEmpty else { return tip + ": no object moved past its cursor: nothing new, no sync" }
            return tip + ": \(moved.count) of \(Words.count(of, "object")) moved past their cursor (\(Self.names(moved))): syncing those"
        case .pushCheck(let s):
            return "push check: \(s)"
        case .pushCheckAsked(let objects):
            return "push check: realtime cannot verify push; asking the indexer's tips for the \(Words.count(objects, "object"))"
        case .pushCheckAnswered(let latest, let moved, let of):
            let tip = "push check: tip " + (latest.map { "\($0) old" } ?? "none")
            guard !moved.isEmpty else { return tip + ": push and realtime brought everything indexed, no sync" }
            return tip + ": \(moved.count) of \(Words.count(of, "object")) \(moved.count == 1 ? "has" : "have") messages no channel brought (\(Self.names(moved))): fetching those; push has the grace to match them"
        case .closingLook(let s):
            return "closing look: \(s)"
        case .closingLookAsked(let objects):
            return "closing look: push is overdue for the gap's last message; asking the indexer's tips, counted over the gap, for the \(Words.count(objects, "object"))"
        case .closingLookAnswered(let latest, let moved, let of):
            let tip = "closing look: tip " + (latest.map { "\($0) old" } ?? "none")
            guard !moved.isEmpty else { return tip + ": push brought everything the gap held, no sync" }
            return tip + ": \(moved.count) of \(Words.count(of, "object")) \(moved.count == 1 ? "holds" : "hold") messages push did not bring (\(Self.names(moved))): fetching those"
        case .pushPath(let open, let letGo):
            if open { return "push path open again: pushes reach the app; what landed while it was closed is no evidence against push" }
            let waiting = letGo == 0 ? "" : "; \(Words.count(letGo, "sighting")) waiting for a push it can no longer bring let go"
            return "push path closed (the server cannot be heard): no push counts against the channel until it opens" + waiting
        case .pushMessagesDeleted:
            return "push service: it dropped the notifications it held while the device was unreachable (messages deleted); a full catch-up, forced"
        case .backgroundRefresh(let s):
            return "background refresh: \(s)"
        case .pushWatch(let s):
            return "push watch: \(s)"
        case .refreshLookAsked(let objects, let why):
            return "background refresh: looking first: the indexer's tips for the \(Words.count(objects, "object")) (\(why))"
        case .tokenStatus(let s):
            return "push token \(s.rawValue)"
        case .tokenRegistration(let s):
            return "push token registration: \(s)"
        case .banner(let b, let badge):
            return "banner [\(UntrustedText.brief(b.title))] \(UntrustedText.brief(b.body)) (badge \(badge))"
        case .bannerSuppressed(let conv, let reason):
            return "banner suppressed for \(UntrustedText.visible(conv)): \(reason)"
        case .error(let source, let message):
            return "error (\(source)): \(UntrustedText.visible(message))"
        case .storeTrouble(let trouble?, let unsaved, let every):
            return "store: cannot write (\(trouble)); the chat goes on in memory (\(unsaved) unsaved), retrying every \(every)"
        case .storeTrouble(nil, let unsaved, _):
            return "store: writing again; the \(Words.count(unsaved, "change")) kept in memory meanwhile \(unsaved == 1 ? "is" : "are") saved"
        case .world(let s):
            return "world: \(UntrustedText.visible(s))"
        case .contact(let c):
            return "contact \(UntrustedText.visible(c.handle)): \(UntrustedText.visible(c.displayName))" + (c.muted ? ", muted" : "")
        case .inspection(let i):
            return "inspection: push \(i.push.state.rawValue), \(i.push.pending.count) pending, \(i.gate.running.count) running, \(i.cursors.count) cursors"
        case .unread(let a, let n):
            return "unread \(UntrustedText.visible(a.value)): \(n)"
        case .status(let s):
            return "status: \(s.lifecycle.rawValue), \(s.realtime.rawValue), push \(s.push.rawValue) \(s.misses)/\(s.missThreshold), token \(s.token.rawValue)"
        }
    }
}

extension SyncEvent {
    /// The first three objects a tips answer named, made safe to print.
    static func names(_ moved: [String]) -> String {
        moved.prefix(3).map(UntrustedText.visible).joined(separator: ", ") + (moved.count > 3 ? ", …" : "")
    }
}

/// An event with the instant it happened.
public struct TimedEvent: Equatable, Sendable {
    public var at: Instant
    public var event: SyncEvent

    public init(at: Instant, event: SyncEvent) {
        self.at = at
        self.event = event
    }

    /// `HH:MM:SS.mmm <event line>`.
    public var line: String { "\(at) \(event.line)" }
}
