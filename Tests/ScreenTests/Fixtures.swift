import ChatUI
import SyncCore
import SyncEngine
// Every file of this target sees TestSupport's helpers (`at`, `TestStore`, `expectGolden`, …).
@_exported import TestSupport

let alice = Address("kaspa:alice"), bob = Address("kaspa:bob"), carol = Address("kaspa:carol")

/// The sample state sent to the background, with a banner from Bob and the badge at 3.
func backgroundedSampleState() -> ViewState {
    var s = sampleState()
    var st = s.status.engine
    st.lifecycle = .background
    st.realtime = .stale
    st.badge = 3
    _ = ViewModel.reduce(&s, .engineStatus(st))
    _ = ViewModel.reduce(&s, .banner(BannerRow(conversation: bob, title: "Bob", body: "are you there?", at: at(400))))
    return s
}

/// A small, fixed world for screen tests.
func sampleState() -> ViewState {
    var s = ViewState()
    _ = ViewModel.reduce(&s, .conversations([
        ConversationRow(address: alice, handle: "alice", name: "Alice", unread: 2, muted: false, lastActivity: at(300)),
        ConversationRow(address: bob, handle: "bob", name: "Bob", unread: 0, muted: true, lastActivity: at(200)),
        ConversationRow(address: carol, handle: "carol", name: "Carol", unread: 0, muted: false, lastActivity: nil),
    ]))
    let rows = [
        MessageRow(txId: "1", outgoing: false, sender: "Alice", text: "hi there", kind: .contextual, blockTime: at(60), channel: .realtime),
        MessageRow(txId: "2", outgoing: true, sender: "Alice", text: "hello!", kind: .contextual, blockTime: at(120), channel: .sent),
        MessageRow(txId: "3", outgoing: false, sender: "Alice", text: "see you at 7", kind: .contextual, blockTime: at(300), channel: .push),
    ]
    _ = ViewModel.reduce(&s, .history(alice, rows))
    reduceAsApp(&s, .key(.enter))
    var st = EngineStatus()
    st.lifecycle = .foreground
    st.realtime = .live
    st.push = .reliable
    st.token = .active
    st.lastCatchUpAt = at(311 - 130)
    st.debounceEndsAt = at(311 + 470)
    st.requests = 42
    _ = ViewModel.reduce(&s, .engineStatus(st))
    _ = ViewModel.reduce(&s, .clock(at(311), speed: 30))
    _ = ViewModel.reduce(&s, .log(LogEntry(time: "08:05:11", text: "catch-up skipped (app-active): push reliable, last catch-up 2m10s ago, next allowed in 7m50s", kind: .decision)))
    return s
}

/// Reduces `input` as the live app does: a conversation the reducer opens is read by the
/// engine (the directive `open`), whose `.unread` event comes back at once.
@discardableResult
func reduceAsApp(_ s: inout ViewState, _ input: ViewInput) -> [Command] {
    let commands = ViewModel.reduce(&s, input)
    for case .apply(.open(let handle)) in commands {
        if let row = s.conversations.first(where: { $0.handle == handle }) { _ = ViewModel.reduce(&s, .unread(row.address, 0)) }
    }
    return commands
}
