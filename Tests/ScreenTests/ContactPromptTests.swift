import Directives
import ChatUI
import SyncCore
import Testing

/// In the view: `a` asks for an address then a name, `E` renames the selected
/// contact, `M` mutes or unmutes it; each ends as a directive the session applies.
@Suite("Contacts from the app")
struct ContactPromptTests {
    @Test("a: an address, then a name, then the add directive; a bad address says why beside the prompt, which stays with its text")
    func add() {
        let store = TestStore(sampleState())
        store.send(.key(.escape)) { $0.focus = .list }
        store.send(.key(.char("a"))) { $0.prompt = ContactPrompt(step: .address) }
        store.type("not-an-address") { $0.prompt?.input = LineEditor("not-an-address") }
        store.send(.key(.enter)) { $0.prompt?.error = "an address is kaspa: and 8 to 80 lower-case letters and digits" }  // the prompt stays
        // The error shows beside the prompt and its text, in the warning role.
        let g = Render.screen(store.state, width: 120, height: 24)
        let row = g.text[21]
        #expect(row.hasPrefix("add contact, address> not-an-address"), "\(row)")
        #expect(row.contains("an address is kaspa: and 8 to 80 lower-case letters and digits (Esc: cancel)"))
        let x = row.distance(from: row.startIndex, to: row.range(of: "an address is")!.lowerBound)
        #expect(g.roles(row: 21)[x] == .warning)
        // The next key edits the text the user sees, and the error goes.
        store.send(.key(.char("a"))) {
            $0.prompt?.input = LineEditor("not-an-addressa")
            $0.prompt?.error = nil
        }
        let edited = Render.screen(store.state, width: 120, height: 24).text[21]
        #expect(edited.hasPrefix("add contact, address> not-an-addressa ") && edited.contains("(Enter · Esc)") && !edited.contains("kaspa:"))
        store.send(.key(.ctrl("u"))) { $0.prompt?.input = LineEditor() }
        store.type("kaspa:qzoe12345678") { $0.prompt?.input = LineEditor("kaspa:qzoe12345678") }
        store.send(.key(.enter)) { $0.prompt = ContactPrompt(step: .name(address: "kaspa:qzoe12345678")) }
        store.type("Zoë") { $0.prompt?.input = LineEditor("Zoë") }
        store.send(.key(.enter), commands: [.apply(.add(address: "kaspa:qzoe12345678", displayName: "Zoë"))]) { $0.prompt = nil }
        let t = Render.screen(store.state, width: 100, height: 24).text
        #expect(!t.contains { $0.hasPrefix("their name>") })
    }

    @Test("E renames the selected contact, starting from its name; M mutes and unmutes it; Esc cancels a prompt")
    func renameAndMute() {
        let store = TestStore(sampleState())
        store.send(.key(.escape)) { $0.focus = .list }
        store.send(.key(.char("E"))) {
            $0.prompt = ContactPrompt(step: .rename(alice))
            $0.prompt?.input = LineEditor("Alice")
        }
        #expect(Render.screen(store.state, width: 100, height: 24).text.contains { $0.hasPrefix("rename to> Alice") })
        store.send(.key(.ctrl("u"))) { $0.prompt?.input = LineEditor() }
        store.type("Alice B.") { $0.prompt?.input = LineEditor("Alice B.") }
        store.send(.key(.enter), commands: [.apply(.contact(handle: "alice", displayName: "Alice B."))]) { $0.prompt = nil }
        // The name changes when the session tells the list (.contact), not before.
        store.send(.key(.char("M")), commands: [.apply(.mute(handle: "alice"))])
        store.send(.key(.down)) { $0.selected = 1 }
        store.send(.key(.char("M")), commands: [.apply(.unmute(handle: "bob"))])  // Bob is muted in the sample
        store.send(.key(.char("a"))) { $0.prompt = ContactPrompt(step: .address) }
        store.send(.key(.escape)) { $0.prompt = nil }
    }
}
