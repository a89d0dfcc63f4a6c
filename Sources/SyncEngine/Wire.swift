import Foundation
import SyncCore
import Wire

// The client's side of the wire formats. Everything from the network is decoded and
// validated here; anything that does not fit is a `WireError`, which the driver turns into
// an error event. A rejected document changes nothing: no message is stored from it and no
// cursor moves, so the next sync asks again and nothing is lost. An indexer reply is read
// item by item (`IndexerPage.read`), so that one item the indexer keeps serving broken can
// be told apart from a broken document and, in the end, skipped (`RejectedItems`).

public struct WireError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A push as the app receives it: an APNs-style `userInfo` object,
/// `{"aps": {"alert": {...}, "mutable-content": 1}, "synchat": {"txId", "sender", "kind", "blockTime", "payload"}}`.
/// How far ahead of the client's clock a block time may be (clock skew). Later is a lie: a
/// cursor moved there would skip every message until then.
public let wireFutureTolerance = Interval.minutes(5)

public enum PushPayload {
    /// `now`, when given, rejects block times more than `wireFutureTolerance` ahead of it.
    public static func decode(_ data: Data, me: Address, now: Instant? = nil) throws -> NetworkMessage {
        let root = try object(data, "push payload")
        guard case .object = root["aps"] else { throw WireError("push payload: missing \"aps\" object") }
        guard case .object(let body) = root["synchat"] else { throw WireError("push payload: missing \"synchat\" object") }
        let txId = try string(body, "txId", "push payload")
        let sender = try string(body, "sender", "push payload")
        let kind = try kind(body, "push payload")
        let blockTime = try millis(body, "blockTime", "push payload")
        try notFuture(blockTime, now, "push payload")
        let payload = try string(body, "payload", "push payload", allowEmpty: true)
        guard sender != me.value else { throw WireError("push payload: sender is the user's own address") }
        return NetworkMessage(txId: txId, conversation: Address(sender), direction: .incoming, kind: kind, body: payload, blockTime: blockTime)
    }
}

/// An indexer reply: `{"messages": [{"txId", "sender", "recipient", "kind", "blockTime", "payload"}], "nextPage": Int|null}`.
public struct IndexerPage: Sendable {
    public var messages: [NetworkMessage]
    public var nextPage: Int?
    /// Items of the reply that were rejected one by one (the rest of the document is sound).
    public var rejected: [RejectedItem] = []

    /// One rejected item: what identifies it across replies, and what is known of it.
    public struct RejectedItem: Hashable, Sendable {
        /// Its txId, or, when that cannot be read, the item's own text.
        public var key: String
        public var txId: String?
        public var blockTime: Instant?
        public var reason: String

        public init(key: String, txId: String?, blockTime: Instant?, reason: String) {
            self.key = key
            self.txId = txId
            self.blockTime = blockTime
            self.reason = reason
        }
    }

    /// Decodes and checks a reply against the call that asked for it: every message must be
    /// of the asked kind and direction, in the asked conversation, and not older than `since`.
    /// Strict: any bad item rejects the whole document.
    public static func decode(_ data: Data, for call: IndexerCall, me: Address, now: Instant? = nil) throws -> IndexerPage {
        let page = try read(data, for: call, me: me, now: now)
        if let bad = page.rejected.first { throw WireError(bad.reason) }
        return page
    }

    /// Like `decode`, but a bad item is set aside in `rejected` instead of rejecting the
    /// document; only a broken document (not JSON, no `messages`, a bad `nextPage`) throws.
    public static func read(_ data: Data, for call: IndexerCall, me: Address, now: Instant? = nil) throws -> IndexerPage {
        let what = "indexer \(call.kind) reply"
        let root = try object(data, what)
        guard case .array(let list) = root["messages"] else { throw WireError("\(what): missing \"messages\" array") }
        var nextPage: Int?
        if let raw = root["nextPage"], raw != .null {
            guard case .number(let number) = raw, let n = Int(exactly: number), n > 0 else {
                throw WireError("\(what): \"nextPage\" is not a positive integer")
            }
            nextPage = n
        }
        var messages: [NetworkMessage] = []
        var rejected: [RejectedItem] = []
        var seen: Set<String> = []
        for (i, element) in list.enumerated() {
            do {
                messages.append(try item(element, index: i, what: what, call: call, me: me, now: now, seen: &seen))
            } catch let error as WireError {
                let m: [String: WireValue]? = if case .object(let m) = element { m } else { nil }
                let txId: String? = if case .string(let s) = m?["txId"], !s.isEmpty { s } else { nil }
                let blockTime: Instant? = if case .number(let n) = m?["blockTime"], let v = Int64(exactly: n), v >= 0 {
                    Instant(milliseconds: v)
                } else { nil }
                rejected.append(RejectedItem(key: txId ?? element.canonical, txId: txId, blockTime: blockTime, reason: error.message))
            }
        }
        return IndexerPage(messages: messages, nextPage: nextPage, rejected: rejected)
    }

    private static func item(_ element: WireValue, index i: Int, what: String, call: IndexerCall, me: Address, now: Instant?,
                             seen: inout Set<String>) throws -> NetworkMessage {
        let at = "\(what) messages[\(i)]"
        guard element.object != nil else { throw WireError("\(what): messages[\(i)] is not an object") }
        let m = try MessageDocument.decode(element, me: me, now: now, at: at)
        guard seen.insert(m.txId).inserted else { throw WireError("\(at): duplicate txId \(m.txId)") }
        try check(call: call, kind: m.kind, direction: m.direction, conversation: m.conversation.value, blockTime: m.blockTime, at: at)
        if case .messageById(let id) = call, m.txId != id { throw WireError("\(at): asked for \(id), got \(m.txId)") }
        return m
    }

    private static func check(call: IndexerCall, kind: MessageKind, direction: Direction, conversation: String, blockTime: Instant, at: String) throws {
        switch call {
        case .handshakes(let d, let since, _):
            guard kind == .handshake, direction == d else { throw WireError("\(at): not a \(d.rawValue) handshake") }
            guard blockTime >= since else { throw WireError("\(at): blockTime before the requested start") }
        case .contextual(let a, let d, let since, _):
            guard kind == .contextual, direction == d, conversation == a.value else {
                throw WireError("\(at): not a \(d.rawValue) contextual message of \(a.value)")
            }
            guard blockTime >= since else { throw WireError("\(at): blockTime before the requested start") }
        case .payments(let since, _):
            guard kind == .payment else { throw WireError("\(at): not a payment") }
            guard blockTime >= since else { throw WireError("\(at): blockTime before the requested start") }
        case .messageById:
            break  // any kind; the txId must be the one asked for (checked by the caller)
        case .tip, .tipCounting:
            throw WireError("\(at): a tip reply has no messages")
        }
    }
}

/// One message as the wire carries it, to or from the user `me` — an indexer page's item, the
/// node's notification, publishing's answer:
/// `{"txId", "sender", "recipient", "kind", "blockTime", "payload"}`.
public enum MessageDocument {
    public static func encode(_ m: NetworkMessage, me: Address) -> JSONValue {
        .object([
            ("txId", .string(m.txId)),
            ("sender", .string(m.direction == .incoming ? m.conversation.value : me.value)),
            ("recipient", .string(m.direction == .incoming ? me.value : m.conversation.value)),
            ("kind", .string(m.kind.rawValue)),
            ("blockTime", .int(m.blockTime.milliseconds)),
            ("payload", .string(m.body)),
        ])
    }

    /// The message a document holds, checked: every field there and of its type, the user its
    /// sender or its recipient, a block time not ahead of `now` (when given) by more than
    /// `wireFutureTolerance`. `at` names the document in an error.
    public static func decode(_ value: WireValue, me: Address, now: Instant?, at: String = "message") throws -> NetworkMessage {
        guard case .object(let m) = value else { throw WireError("\(at): not an object") }
        let txId = try string(m, "txId", at)
        let sender = try string(m, "sender", at)
        let recipient = try string(m, "recipient", at)
        let kind = try kind(m, at)
        let blockTime = try millis(m, "blockTime", at)
        try notFuture(blockTime, now, at)
        let payload = try string(m, "payload", at, allowEmpty: true)
        let direction: Direction
        let conversation: String
        if recipient == me.value { direction = .incoming; conversation = sender }
        else if sender == me.value { direction = .outgoing; conversation = recipient }
        else { throw WireError("\(at): neither sender nor recipient is the user") }
        return NetworkMessage(txId: txId, conversation: Address(conversation), direction: direction, kind: kind, body: payload, blockTime: blockTime)
    }
}

/// The indexer's tips (docs/server.md#the-indexer-over-http), one request: `{"tip": MS, "objects": {"OBJECT": MS, …}}`.
/// `tip` is the newest indexed block time of any message to or from the user (null when
/// there is none); `objects` holds the newest of each sync object that has any, keyed as
/// `SyncObject` names them (`handshakes/in`, `contextual/ADDRESS/out`, `payments`). An object
/// the client does not know (a conversation not yet opened by a handshake) is ignored. Asked
/// with a window (`IndexerCall.tipCounting`), each object's value is `[MS, N]`: its newest, and
/// how many incoming messages of it landed in the window (`counts`; nil when the reply has none,
/// as from a server that does not count).
public struct IndexerTips: Equatable, Sendable {
    public var latest: Instant?
    public var objects: [String: Instant]
    public var counts: [String: Int]?

    public init(latest: Instant?, objects: [String: Instant], counts: [String: Int]? = nil) {
        self.latest = latest
        self.objects = objects
        self.counts = counts
    }

    /// The newest indexed block time of one object, or nil when it has none.
    public func tip(of object: SyncObject) -> Instant? { objects[object.description] }

    /// How many incoming messages of one object landed in the window asked (0 when the object
    /// has none), or nil when the reply counted nothing.
    public func count(of object: SyncObject) -> Int? { counts.map { $0[object.description] ?? 0 } }

    public static func read(_ data: Data, now: Instant?) throws -> IndexerTips {
        let what = "tip"
        let root = try object(data, what)
        guard let value = root["tip"] else { throw WireError("\(what): missing \"tip\"") }
        var latest: Instant?
        if value != .null {
            latest = try millis(root, "tip", what)
            try notFuture(latest!, now, what)
        }
        guard let raw = root["objects"] else { throw WireError("\(what): missing \"objects\"") }
        guard case .object(let list) = raw else { throw WireError("\(what): \"objects\" is not an object") }
        var objects: [String: Instant] = [:]
        var counts: [String: Int] = [:]
        for (name, value) in list {
            let at = "\(what) of \(String(name.prefix(80)).debugDescription)"
            let t: Instant
            if case .array(let pair) = value {
                guard pair.count == 2, case .number(let n) = pair[1], let count = Int(exactly: n), count >= 0 else {
                    throw WireError("\(at): not [newest, count] with count a non-negative integer")
                }
                t = try millis(["newest": pair[0]], "newest", at)
                counts[name] = count
            } else {
                t = try millis(list, name, at)
            }
            try notFuture(t, now, at)
            guard let latest, t <= latest else { throw WireError("\(at): newer than the tip") }
            objects[name] = t
        }
        guard counts.isEmpty || counts.count == objects.count else { throw WireError("\(what): some objects counted, some not") }
        return IndexerTips(latest: latest, objects: objects, counts: counts.isEmpty ? nil : counts)
    }
}

// MARK: - JSON helpers

private func object(_ data: Data, _ what: String) throws -> [String: WireValue] {
    guard let parsed = WireValue.parse(data) else { throw WireError("\(what): not valid JSON (\(data.count) bytes)") }
    guard case .object(let dict) = parsed else { throw WireError("\(what): not a JSON object") }
    return dict
}

private func string(_ d: [String: WireValue], _ key: String, _ at: String, allowEmpty: Bool = false) throws -> String {
    guard let raw = d[key] else { throw WireError("\(at): missing \"\(key)\"") }
    guard case .string(let s) = raw else { throw WireError("\(at): \"\(key)\" is not a string") }
    guard allowEmpty || !s.isEmpty else { throw WireError("\(at): \"\(key)\" is empty") }
    guard s.utf8.count <= 65_536 else { throw WireError("\(at): \"\(key)\" is longer than 64 KiB") }
    return s
}

private func millis(_ d: [String: WireValue], _ key: String, _ at: String) throws -> Instant {
    guard let raw = d[key] else { throw WireError("\(at): missing \"\(key)\"") }
    guard case .number(let n) = raw, let v = Int64(exactly: n), v >= 0 else {
        throw WireError("\(at): \"\(key)\" is not a non-negative integer")
    }
    return Instant(milliseconds: v)
}

private func notFuture(_ blockTime: Instant, _ now: Instant?, _ at: String) throws {
    guard let now, blockTime > now + wireFutureTolerance else { return }
    throw WireError("\(at): blockTime \(blockTime) is ahead of the clock (\(now))")
}

private func kind(_ d: [String: WireValue], _ at: String) throws -> MessageKind {
    let raw = try string(d, "kind", at)
    guard let k = MessageKind(rawValue: raw) else { throw WireError("\(at): unknown kind \"\(raw)\"") }
    return k
}
