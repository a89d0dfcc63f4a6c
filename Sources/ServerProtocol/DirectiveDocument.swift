import Directives
import Foundation
import SyncCore
import Wire

/// A directive as the wire carries it, typed: the body of `POST Route.fault` and
/// `POST Route.adminFault` a client sends, and the `directive` a server passes on to a client
/// (`RelayMethod.directive`). `{"directive": VERB, …}`:
///
/// - `{"directive": "fault", "change": "push-drop", "percent": 100}`; `push-delay` and
///   `indexer-latency` take `"ms"`, `realtime-flaky` `"percent"`; the others (`push-down`,
///   `push-up`, `realtime-down`, `realtime-up`, `realtime-stale`, `indexer-down`, `indexer-up`,
///   `token-expire`, `token-invalidate`, `network-off`, `network-on`) nothing more;
/// - `foreground`, `background`, `sync`, `retry`, `quit`, `stop`: nothing more;
/// - `mode` with `"mode"`, `preview` with `"preview"` (their scenario words);
/// - `send`, `receive` with `"handle"` and `"text"`; `contact` with `"handle"` and `"name"`;
///   `add` with `"address"` and `"name"`; `mute`, `unmute`, `open` with `"handle"`.
///
/// Values are held to the rules a scenario line is (a handle's letters, a share within 0–100 %,
/// a duration within `DirectiveParser.maxDuration`); anything else is a `RouteError` naming the field.
public enum DirectiveDocument {
    public static func encode(_ d: Directive) -> JSONValue {
        func doc(_ verb: String, _ fields: [(String, JSONValue)] = []) -> JSONValue { .object([("directive", .string(verb))] + fields) }
        switch d {
        case .fault(let change):
            var fields: [(String, JSONValue)] = [("change", .string(name(of: change)))]
            switch change {
            case .pushDrop(let p), .realtimeFlaky(let p): fields.append(("percent", .raw(WorldFaults.percent(p))))
            case .pushDelay(let i), .indexerLatency(let i): fields.append(("ms", .int(i.milliseconds)))
            default: break
            }
            return doc("fault", fields)
        case .foreground: return doc("foreground")
        case .background: return doc("background")
        case .sync: return doc("sync")
        case .retry: return doc("retry")
        case .quit: return doc("quit")
        case .stop: return doc("stop")
        case .mode(let m): return doc("mode", [("mode", .string(m.rawValue))])
        case .preview(let p): return doc("preview", [("preview", .string(p.rawValue))])
        case .send(let h, let t): return doc("send", [("handle", .string(h)), ("text", .string(t))])
        case .receive(let h, let t): return doc("receive", [("handle", .string(h)), ("text", .string(t))])
        case .contact(let h, let n): return doc("contact", [("handle", .string(h)), ("name", .string(n))])
        case .add(let a, let n): return doc("add", [("address", .string(a)), ("name", .string(n))])
        case .mute(let h): return doc("mute", [("handle", .string(h))])
        case .unmute(let h): return doc("unmute", [("handle", .string(h))])
        case .open(let h): return doc("open", [("handle", .string(h))])
        }
    }

    /// The directive a document holds, or why it holds none, in one line naming the field.
    public static func decode(_ v: WireValue) throws(RouteError) -> Directive {
        guard let object = v.object else { throw RouteError("directive: not a JSON object") }
        guard let verb = object["directive"]?.string else { throw RouteError("directive: missing \"directive\" (its verb)") }
        func string(_ key: String) throws(RouteError) -> String {
            guard let s = object[key]?.string else { throw RouteError("directive \(verb.prefix(20)): missing \"\(key)\" (a string)") }
            return s
        }
        func checked<T>(_ key: String, _ read: (String, (String) -> any Error) throws -> T) throws(RouteError) -> T {
            let raw = try string(key)
            do { return try read(raw) { RouteError("directive \(verb.prefix(20)): \(key): \($0)") } } catch let e as RouteError { throw e } catch {
                throw RouteError("directive \(verb.prefix(20)): \(key): \(error)")
            }
        }
        func handle() throws(RouteError) -> String { try checked("handle", DirectiveParser.handle) }
        switch verb {
        case "fault": return .fault(try change(object))
        case "foreground": return .foreground
        case "background": return .background
        case "sync": return .sync
        case "retry": return .retry
        case "quit": return .quit
        case "stop": return .stop
        case "mode": return .mode(try checked("mode", DirectiveParser.mode))
        case "preview":
            let raw = try string("preview")
            guard let p = PreviewMode(rawValue: raw) else { throw RouteError("directive preview: unknown preview \"\(raw.prefix(40))\"") }
            return .preview(p)
        case "send", "receive":
            let h = try handle(), t = try string("text")
            // As a line: you write within a message's limit; a peer (`receive`) is held to it where
            // the server takes it in (it scripts hostile peers in a scenario).
            if verb == "send", t.utf8.count > MessageLimits.maxBodyBytes {
                throw RouteError("directive send: \"text\" is \(t.utf8.count) bytes; a message is at most \(MessageLimits.maxBodyBytes) bytes")
            }
            return verb == "send" ? .send(handle: h, text: t) : .receive(handle: h, text: t)
        case "contact": return .contact(handle: try handle(), displayName: try string("name"))
        case "add":
            let a = try string("address")
            guard Directive.isAddress(a) else { throw RouteError("directive add: bad address \"\(a.prefix(90))\" (expected kaspa: and 8 to 80 lower-case letters and digits)") }
            return .add(address: a, displayName: try string("name"))
        case "mute": return .mute(handle: try handle())
        case "unmute": return .unmute(handle: try handle())
        case "open": return .open(handle: try handle())
        default:
            throw RouteError("directive: unknown verb \"\(verb.prefix(40))\" (expected fault, foreground, background, sync, retry, quit, stop, mode, preview, send, receive, contact, add, mute, unmute or open)")
        }
    }

    /// The change's name on the wire (`push-drop`): the protocol's own, written here so that
    /// rewording a change for the log or a scenario does not change what peers send.
    static func name(of change: WorldFaults.Change) -> String { name(of: change.kind) }

    static func name(of kind: WorldFaults.Change.Kind) -> String {
        switch kind {
        case .pushDrop: "push-drop"
        case .pushDelay: "push-delay"
        case .pushDown: "push-down"
        case .pushUp: "push-up"
        case .realtimeDown: "realtime-down"
        case .realtimeUp: "realtime-up"
        case .realtimeStale: "realtime-stale"
        case .realtimeFlaky: "realtime-flaky"
        case .indexerDown: "indexer-down"
        case .indexerUp: "indexer-up"
        case .indexerLatency: "indexer-latency"
        case .tokenExpire: "token-expire"
        case .tokenInvalidate: "token-invalidate"
        case .networkOff: "network-off"
        case .networkOn: "network-on"
        }
    }

    /// Every kind of change, by its name on the wire.
    static let changes: [String: WorldFaults.Change.Kind] = Dictionary(uniqueKeysWithValues: WorldFaults.Change.Kind.allCases.map { (name(of: $0), $0) })

    static func change(_ object: [String: WireValue]) throws(RouteError) -> WorldFaults.Change {
        guard let raw = object["change"]?.string else { throw RouteError("directive fault: missing \"change\" (e.g. push-drop)") }
        guard let kind = changes[raw] else {
            throw RouteError("directive fault: unknown change \"\(raw.prefix(40))\" (expected \(changes.keys.sorted().joined(separator: ", ")))")
        }
        func percent() throws(RouteError) -> Double {
            guard let p = object["percent"]?.double, p.isFinite, (0...100).contains(p) else {
                throw RouteError("directive fault \(raw): \"percent\" must be a number from 0 to 100")
            }
            return p
        }
        func duration() throws(RouteError) -> Interval {
            guard let ms = object["ms"]?.int64, ms >= 0, ms <= DirectiveParser.maxDuration.milliseconds else {
                throw RouteError("directive fault \(raw): \"ms\" must be milliseconds from 0 to \(DirectiveParser.maxDuration.milliseconds) (3650d)")
            }
            return Interval(milliseconds: ms)
        }
        switch kind {
        case .pushDrop: return .pushDrop(percent: try percent())
        case .realtimeFlaky: return .realtimeFlaky(percent: try percent())
        case .pushDelay: return .pushDelay(try duration())
        case .indexerLatency: return .indexerLatency(try duration())
        default:
            return kind.zero
        }
    }
}
