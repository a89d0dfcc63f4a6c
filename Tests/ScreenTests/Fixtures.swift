import ChatUI
import SyncCore
import SyncEngine

let alice = Address("kaspa:alice"), bob = Address("kaspa:bob"), carol = Address("kaspa:carol")

func sec(_ s: Int64) -> Instant { .zero + .seconds(s) }

/// A small, fixed world for screen tests.
func sampleState() -> ViewState {
    var s = ViewState()
    _ = ViewModel.reduce(&s, .conversations([
        ConversationRow(address: alice, name: "Alice", unread: 2, muted: false, lastActivity: sec(300)),
        ConversationRow(address: bob, name: "Bob", unread: 0, muted: true, lastActivity: sec(200)),
        ConversationRow(address: carol, name: "Carol", unread: 0, muted: false, lastActivity: nil),
    ]))
    let rows = [
        MessageRow(txId: "1", outgoing: false, sender: "Alice", text: "hi there", kind: .contextual, blockTime: sec(60), channel: .realtime),
        MessageRow(txId: "2", outgoing: true, sender: "Alice", text: "hello!", kind: .contextual, blockTime: sec(120), channel: .sent),
        MessageRow(txId: "3", outgoing: false, sender: "Alice", text: "see you at 7", kind: .contextual, blockTime: sec(300), channel: .push),
    ]
    _ = ViewModel.reduce(&s, .history(alice, rows))
    _ = ViewModel.reduce(&s, .key(.enter))
    var st = EngineStatus()
    st.lifecycle = .foreground
    st.realtime = .live
    st.push = .reliable
    st.token = .active
    st.lastCatchUpAt = sec(311 - 130)
    st.debounceEndsAt = sec(311 + 470)
    st.requests = 42
    _ = ViewModel.reduce(&s, .engineStatus(st))
    _ = ViewModel.reduce(&s, .clock(sec(311), speed: 30))
    _ = ViewModel.reduce(&s, .logLine("00:05:11.000 catch-up skipped (app-active): push reliable, last catch-up 2m10s ago, next allowed in 7m50s"))
    return s
}
