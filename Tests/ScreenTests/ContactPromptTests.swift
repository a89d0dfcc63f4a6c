import AppActions
import ChatUI
import SyncCore
import Testing

/// Issue 15 #8 in the view: `a` asks for an address then a name, `E` renames the selected
/// contact, `M` mutes or unmutes it; each ends as a directive the session applies.
@Suite("Contacts from the app")
struct ContactPromptTests {
    func typed(_ s: inout ViewState, _ text: String) { for ch in text { _ = ViewModel.reduce(&s, .key(.char(ch))) } }

    @Test("a: an address, then a name, then the add directive; a bad address says why and stays")
    func add() {
        var s = sampleState()
        _ = ViewModel.reduce(&s, .key(.escape))
        _ = ViewModel.reduce(&s, .key(.char("a")))
        #expect(s.prompt?.step == .address)
        typed(&s, "not-an-address")
        #expect(ViewModel.reduce(&s, .key(.enter)).isEmpty)
        #expect(s.notice == "an address is kaspa: and 8 to 80 lower-case letters and digits" && s.prompt?.step == .address)
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
