import ChatUI
import SyncCore
import SyncEngine
import Testing

/// On the screen: a message the network has not taken shows where it will be,
/// marked `…` while sending and `!` when refused (with the reason and the retry), and the
/// status bar counts what is unsent.
@Suite("Outgoing messages on the screen")
struct OutboxScreenTests {
    static func message(_ state: OutgoingMessage.State) -> OutgoingMessage {
        OutgoingMessage(localId: "local-1", to: alice, body: "are you there?", createdAt: at(305), failures: 1, state: state)
    }

    @Test("sending, failed, then sent: the pending row follows each state and goes when the message is stored")
    func reducer() {
        let store = TestStore(sampleState())
        store.send(.outgoing(Self.message(.sending))) { $0.outbox[alice] = [Self.message(.sending)] }
        let failed = Self.message(.failed(reason: "node unreachable", retryAt: at(323)))
        store.send(.outgoing(failed)) { $0.outbox[alice] = [failed] }
        store.send(.outgoing(Self.message(.sent(txId: "tx9")))) { $0.outbox[alice] = nil }
    }

    @Test("the pane shows … sending and ! not sent with the reason and the time to the retry; the bar says how many are unsent")
    func grid() {
        var s = sampleState()
        _ = ViewModel.reduce(&s, .outgoing(Self.message(.sending)))
        var text = Render.screen(s, width: 100, height: 24).text
        #expect(text.contains { $0.contains("08:05 … you: are you there? · sending…") })
        _ = ViewModel.reduce(&s, .outgoing(Self.message(.failed(reason: "node unreachable", retryAt: at(323)))))
        var st = s.status.engine
        st.unsent = 1
        _ = ViewModel.reduce(&s, .engineStatus(st))
        let g = Render.screen(s, width: 140, height: 24)  // one row for the whole line
        text = g.text
        let row = text.firstIndex { $0.contains("you: are you there? · not sent: node unreachable, retry in 12s (R: now)") }
        #expect(row != nil)
        if let row {
            #expect(text[row].contains("08:05 ! you:"))
            #expect(row == text.lastIndex { $0.contains("│ ") && $0.contains(":") && !$0.contains("sync log") && $0.contains("you") })  // the newest line
            let x = text[row].distance(from: text[row].startIndex, to: text[row].range(of: "you: are")!.lowerBound)
            #expect(g.roles(row: row)[x] == .warning)
        }
        #expect(text[22].contains("1 unsent"))
        // Under a second to the retry: it is under way, never "retry in 0ms".
        _ = ViewModel.reduce(&s, .outgoing(Self.message(.failed(reason: "node unreachable", retryAt: s.status.clock + .milliseconds(400)))))
        text = Render.screen(s, width: 140, height: 24).text
        #expect(text.contains { $0.contains("not sent: node unreachable, retrying (R: now)") }, "\(text)")
        #expect(!text.contains { $0.contains("0ms") })
    }

    @Test("R retries only when something failed; else it says so")
    func retryKey() {
        let store = TestStore(sampleState())
        store.send(.key(.escape)) { $0.focus = .list }
        store.send(.key(.char("R"))) { $0.notice = "no message is waiting to be sent again" }
        let failed = Self.message(.failed(reason: "node unreachable", retryAt: at(323)))
        store.send(.outgoing(failed)) { $0.outbox[alice] = [failed] }
        store.send(.key(.char("R")), commands: [.apply(.retry)]) { $0.notice = nil }
    }
}
