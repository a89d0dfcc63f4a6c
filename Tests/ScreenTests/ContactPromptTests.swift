import AppActions
import ChatUI
import SyncCore
import Testing

/// In the view: `a` asks for an address then a name, `E` renames the selected
/// contact, `M` mutes or unmutes it; each ends as a directive the session applies.
@Suite("Contacts from the app")
struct ContactPromptTests {
    func typed(_ s: inout ViewState, _ text: String) { for ch in text { _ = ViewModel.reduce(&s, .key(.char(ch))) } }

    @Test("a: an address, then a name, then the add directive; a bad address says why beside the prompt, which stays with its text")
    func add() {
        var s = sampleState()
        _ = ViewModel.reduce(&s, .key(.escape))
        _ = ViewModel.reduce(&s, .key(.char("a")))
        #expect(s.prompt?.step == .address)
        typed(&s, "not-an-address")
        #expect(ViewModel.reduce(&s, .key(.enter)).isEmpty)
        #expect(s.prompt?.error == "an address is kaspa: and 8 to 80 lower-case letters and digits" && s.prompt?.step == .address)
        // The error shows beside the prompt and its text, which stays, in the warning role.
        let g = Render.screen(s, width: 120, height: 24)
        let row = g.text[21]
        #expect(row.hasPrefix("add contact, address> not-an-address"), "\(row)")
        #expect(row.contains("an address is kaspa: and 8 to 80 lower-case letters and digits (Esc: cancel)"))
        let x = row.distance(from: row.startIndex, to: row.range(of: "an address is")!.lowerBound)
        #expect(g.roles(row: 21)[x] == .warning)
        // The next key edits the text the user sees, and the error goes.
        _ = ViewModel.reduce(&s, .key(.char("a")))
        #expect(s.prompt?.input.string == "not-an-addressa" && s.prompt?.error == nil)
        let edited = Render.screen(s, width: 120, height: 24).text[21]
        #expect(edited.hasPrefix("add contact, address> not-an-addressa ") && edited.contains("(Enter · Esc)") && !edited.contains("kaspa:"))
        _ = ViewModel.reduce(&s, .key(.ctrl("u")))
        typed(&s, "kaspa:qzoe12345678")
        _ = ViewModel.reduce(&s, .key(.enter))
        #expect(s.prompt?.step == .name(address: "kaspa:qzoe12345678"))
        typed(&s, "Zoë")
        #expect(ViewModel.reduce(&s, .key(.enter)) == [.apply(.add(address: "kaspa:qzoe12345678", displayName: "Zoë"))])
        #expect(s.prompt == nil)
        let t = Render.screen(s, width: 100, height: 24).text
        #expect(!t.contains { $0.hasPrefix("their name>") })
    }

    @Test("E renames the selected contact, starting from its name; M mutes and unmutes it; Esc cancels a prompt")
    func renameAndMute() {
        var s = sampleState()
        _ = ViewModel.reduce(&s, .key(.escape))
        _ = ViewModel.reduce(&s, .key(.char("E")))
        #expect(s.prompt?.input.string == "Alice")
        #expect(Render.screen(s, width: 100, height: 24).text.contains { $0.hasPrefix("rename to> Alice") })
        _ = ViewModel.reduce(&s, .key(.ctrl("u")))
        typed(&s, "Alice B.")
        #expect(ViewModel.reduce(&s, .key(.enter)) == [.apply(.contact(handle: "alice", displayName: "Alice B."))])
        #expect(ViewModel.reduce(&s, .key(.char("M"))) == [.apply(.mute(handle: "alice"))])
        _ = ViewModel.reduce(&s, .key(.down))
        #expect(ViewModel.reduce(&s, .key(.char("M"))) == [.apply(.unmute(handle: "bob"))])  // Bob is muted in the sample
        _ = ViewModel.reduce(&s, .key(.char("a")))
        _ = ViewModel.reduce(&s, .key(.escape))
        #expect(s.prompt == nil)
    }
}
