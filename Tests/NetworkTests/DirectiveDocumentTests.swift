import Directives
import Foundation
import ServerProtocol
import SyncCore
import Testing
import TestSupport
import Wire
import ServerPair

/// A directive crosses the wire as a typed document (`DirectiveDocument`): written by the
/// client, read by the server, with no scenario line in between; what a careless peer sends
/// is refused in one line naming the field.
@Suite("A directive on the wire: a typed document both ways")
struct DirectiveDocumentTests {
    static let changes: [WorldFaults.Change] = [
        .pushDrop(percent: 12.5), .pushDrop(percent: 100), .pushDelay(.seconds(90)), .pushDown, .pushUp,
        .realtimeDown, .realtimeUp, .realtimeStale, .realtimeFlaky(percent: 30),
        .indexerDown, .indexerUp, .indexerLatency(.milliseconds(1234)), .indexerLatency(.zero),
        .tokenExpire, .tokenInvalidate, .networkOff, .networkOn,
    ]

    static let directives: [Directive] = changes.map { .fault($0) } + [
        .foreground, .background, .sync, .retry, .quit, .stop, .mode(.backgroundFetch), .preview(.hidden),
        .send(handle: "alice", text: "hi \"there\"\n\u{1B}[2J ☃"), .receive(handle: "bob", text: "\u{202E}x"),
        .contact(handle: "carol", displayName: "Carol C."), .add(address: "kaspa:qqabcdefgh", displayName: "Dan"),
        .mute(handle: "alice"), .unmute(handle: "alice"), .open(handle: "kaspa:qqabcdefgh"),
    ]

    @Test("a fault's names on the wire are the ones docs/server.md's table gives, one per kind of change")
    func wireNamesAreDocumented() throws {
        let doc = try String(contentsOf: BuiltProducts.packageRoot.appendingPathComponent("docs/server.md"), encoding: .utf8)
        let row = try #require(doc.split(separator: "\n").first { $0.hasPrefix("| `fault` | `change`:") })
        let documented = Set(row.matches(of: /`([a-z]+-[a-z]+)`/).map { String($0.output.1) })
        let sent = try WorldFaults.Change.Kind.allCases.map { kind -> String in
            let value = try #require(WireValue.parse(DirectiveDocument.encode(.fault(kind.zero)).data))
            return try #require(value["change"]?.string)
        }
        #expect(Set(sent).count == WorldFaults.Change.Kind.allCases.count, "a name for each kind: \(sent)")
        #expect(Set(sent) == documented)
    }

    @Test("every directive, every change of the faults among them, reads back as itself from its document's bytes")
    func roundTrip() throws {
        #expect(Set(Self.changes.map(\.part)) == Set(WorldFaults.Part.allCases))
        // Every kind of change there is (Kind's switches have no default) is tried, and each
        // kind's zero change is of that kind.
        #expect(Set(Self.changes.map(\.kind)) == Set(WorldFaults.Change.Kind.allCases))
        for kind in WorldFaults.Change.Kind.allCases { #expect(kind.zero.kind == kind) }
        for d in Self.directives {
            let bytes = DirectiveDocument.encode(d).data
            let back = try DirectiveDocument.decode(try #require(WireValue.parse(bytes)))
            #expect(back == d, "\(String(decoding: bytes, as: UTF8.self))")
        }
    }

    @Test("a careless or hostile document is refused in one line naming what is wrong", arguments: [
        (#"[1]"#, "not a JSON object"),
        (#"{}"#, "missing \"directive\""),
        (#"{"directive": "dance"}"#, "unknown verb \"dance\""),
        (#"{"directive": "fault"}"#, "missing \"change\""),
        (#"{"directive": "fault", "change": "push-explode"}"#, "unknown change \"push-explode\""),
        (#"{"directive": "fault", "change": "push-drop"}"#, "\"percent\" must be a number from 0 to 100"),
        (#"{"directive": "fault", "change": "push-drop", "percent": 101}"#, "\"percent\" must be a number from 0 to 100"),
        (#"{"directive": "fault", "change": "push-drop", "percent": "50"}"#, "\"percent\" must be a number from 0 to 100"),
        (#"{"directive": "fault", "change": "indexer-latency", "ms": -1}"#, "\"ms\" must be milliseconds"),
        (#"{"directive": "fault", "change": "indexer-latency", "ms": 9999999999999999}"#, "\"ms\" must be milliseconds"),
        (#"{"directive": "send", "handle": "a b", "text": "x"}"#, "bad contact name"),
        (#"{"directive": "send", "handle": "alice"}"#, "missing \"text\""),
        (#"{"directive": "mode", "mode": "loud"}"#, "unknown mode \"loud\""),
        (#"{"directive": "preview", "preview": "all"}"#, "unknown preview \"all\""),
        (#"{"directive": "add", "address": "bitcoin:1", "name": "x"}"#, "bad address"),
        (#"{"directive": "send", "handle": "alice", "text": ""# + String(repeating: "y", count: 16_385) + #""}"#, "a message is at most 16384 bytes"),
        (#"{"directive": "mute", "handle": "alice\u001b[2J"}"#, "bad contact name"),
        (#"{"directive": "fault", "change": "push-drop", "percent": 50} {"directive": "sync"}"#, ""),
    ])
    func refused(_ text: String, _ words: String) throws {
        // Two documents in one body are no document: refused before any reading of fields.
        guard let value = WireValue.parse(Data(text.utf8)) else {
            #expect(words.isEmpty, "\(text.prefix(60)) does not parse")
            return
        }
        #expect(!words.isEmpty, "\(text.prefix(60)) parses as one document")
        #expect(throws: RouteError.self) { try DirectiveDocument.decode(value) }
        do { _ = try DirectiveDocument.decode(value) } catch {
            #expect(error.message.contains(words), "\(error.message)")
            #expect(!error.message.contains("\n"))
        }
    }

    @Test("the server takes a document and, from an operator's curl, a line; both do the same, and its answer names what it applied")
    func serverTakesBoth() throws {
        let pair = try WorldPair(contacts: 1, speed: 60)
        let secret = try ServerLimitsTests.join(pair, "zed")
        let zed = try #require(pair.host.user(named: "zed"))
        let doc = String(decoding: DirectiveDocument.encode(.fault(.pushDrop(percent: 100))).data, as: UTF8.self)
        let typed = ServerLimitsTests.request(pair, .POST, Route.fault, body: doc, token: secret)
        #expect(typed?.status == 200, "\(ServerLimitsTests.words(typed))")
        #expect(zed.world.faults.push.dropPercent == 100)
        let line = ServerLimitsTests.request(pair, .POST, Route.fault, body: "push up", token: secret)
        #expect(line?.status == 200)
        #expect(zed.world.faults.push == WorldFaults.Push())
        let applied = try #require(typed.flatMap { WireValue.parse($0.body) }?["applied"]?.string)
        #expect(applied == "push drop 100%")
        let broken = ServerLimitsTests.request(pair, .POST, Route.fault, body: #"{"directive": "fault", "change": "push-drop", "percent": 400}"#, token: secret)
        #expect(broken?.status == 400)
        #expect(ServerLimitsTests.words(broken).contains("\"percent\" must be a number from 0 to 100"), "\(ServerLimitsTests.words(broken))")
        #expect(zed.world.faults.push == WorldFaults.Push(), "a refused document changes nothing")
        let half = ServerLimitsTests.request(pair, .POST, Route.fault, body: #"{"directive": "fault""#, token: secret)
        #expect(half?.status == 400)
        #expect(ServerLimitsTests.words(half).contains("is not JSON"), "\(ServerLimitsTests.words(half))")
    }
}
