import Directives
import SyncCore
import SyncEngine

/// The reducer (Elm / bubbletea `Update`, TCA `Reduce`).
public enum ViewModel {
    /// The speeds `+` and `-` step through (from a quarter of real time to ×300).
    public static let speeds: [Double] = [0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]

    public static func reduce(_ state: inout ViewState, _ input: ViewInput) -> [Command] {
        switch input {
        case .key(let key):
            let noticeUp = state.noticeUp
            state.notice = nil
            state.noticeUnbidden = false
            if case .forgotten = state.status.link { state.forgottenSeen = true }
            if case .char("q") = key {} else if key != .ctrl("c") { state.quitAsked = false }
            return handleKey(&state, key, noticeUp: noticeUp)
        case .paste(let text):
            state.notice = nil
            state.noticeUnbidden = false
            state.quitAsked = false
            return paste(&state, text)
        case .conversations(let rows):
            let current = state.selectedConversation?.address
            state.conversations = rows.sorted {
                let a = $0.lastActivity ?? .zero, b = $1.lastActivity ?? .zero
                return a == b ? $0.name < $1.name : a > b
            }
            if let current, let i = state.conversations.firstIndex(where: { $0.address == current }) {
                state.selected = i
            } else {
                state.selected = min(state.selected, max(0, state.conversations.count - 1))
            }
            return []
        case .message(let conversation, let row):
            // Keep block-time order; new messages almost always go at the end. A conversation
            // not loaded yet gets it with its first page, from the store; one older than
            // every loaded message of a partly loaded history comes with its page.
            let loaded = state.messages[conversation]
            guard loaded?.contains(where: { $0.txId == row.txId }) != true else { return [] }
            if var list = loaded, !(state.partialHistory.contains(conversation) && list.first.map { row.blockTime < $0.blockTime } ?? false) {
                var i = list.count
                while i > 0, list[i - 1].blockTime > row.blockTime { i -= 1 }
                list.insert(row, at: i)
                state.messages[conversation] = list
                if conversation == state.open, state.scroll > 0 { state.scroll += 1 }  // keep the view still while scrolled back
            }
            // The list learns its activity from the message itself; the unread count comes
            // from the store, as its own event (`.unread`): the view counts nothing.
            let reading = conversation == state.open && state.status.lifecycle == .foreground
            if let c = state.conversations.firstIndex(where: { $0.address == conversation }) {
                var rows = state.conversations
                rows[c].lastActivity = max(rows[c].lastActivity ?? .zero, row.blockTime)
                _ = reduce(&state, .conversations(rows))
            }
            // Away from the terminal (it lost the focus, or never says): the desktop is told,
            // the open conversation's messages too.
            let listed = state.conversations.first { $0.address == conversation }
            let notified = state.attention.message(row, in: listed, status: state.status).map { [$0] } ?? []
            // Read as it came (`reading`): the engine marked it read when it stored it (it
            // knows the conversation on screen), at the message's own instant.
            if reading { return notified }
            // Looking elsewhere: the bell, if asked for and the preview shows anything at all.
            if !row.outgoing, state.bellEnabled, state.status.preview != .hidden { return notified + [.bell] }
            return notified
        case .unread(let conversation, let count):
            if let c = state.conversations.firstIndex(where: { $0.address == conversation }) {
                state.conversations[c].unread = count
            }
            return []
        case .history(let conversation, let rows, let complete):
            if let loaded = state.messages[conversation] {
                // An older page: before what is loaded (a message that arrived meanwhile
                // is not taken twice).
                let have = Set(loaded.map(\.txId))
                state.messages[conversation] = rows.filter { !have.contains($0.txId) } + loaded
            } else {
                state.messages[conversation] = rows
            }
            if complete { state.partialHistory.remove(conversation) } else { state.partialHistory.insert(conversation) }
            placeMarker(&state)
            return []
        case .logLine(let line):
            // Stamped on the world's clock like every other row, so the log reads one way.
            return reduce(&state, .log(LogEntry(time: Clock.time(state.status.clock), text: line, kind: .notice)))
        case .log(let entry):
            state.log.append(entry)
            state.logCount += 1
            if state.log.count > ViewState.logCapacity { state.log.removeFirst(state.log.count - ViewState.logCapacity) }
            return []
        case .banner(let banner):
            state.banners.append(banner)
            if state.banners.count > 20 { state.banners.removeFirst() }
            return state.attention.banner(banner).map { [$0] } ?? []
        case .engineStatus(let status):
            let cameBack = state.status.lifecycle != .foreground && status.lifecycle == .foreground
            state.status.engine = status
            state.timeline.status(status, at: state.status.clock)
            if cameBack {
                state.banners.removeAll()
                if let open = state.open { return markRead(&state, open) }
            }
            return []
        case .contact(let c):
            var rows = state.conversations
            if let i = rows.firstIndex(where: { $0.address == c.address }) {
                rows[i] = ConversationRow(address: c.address, handle: c.handle, name: c.displayName, unread: rows[i].unread, muted: c.muted,
                                          lastActivity: rows[i].lastActivity)
            } else {
                rows.append(ConversationRow(address: c.address, handle: c.handle, name: c.displayName, unread: 0, muted: c.muted, lastActivity: nil))
            }
            return reduce(&state, .conversations(rows))
        case .clock(let now, let speed):
            state.status.clock = now
            state.status.speed = speed
            if state.attention.since == nil { state.attention.since = now }
            return []
        case .script(let phase):
            let ended = phase == .live && state.status.scriptPhase != .live
            state.status.scriptPhase = phase
            // The end of a played scenario is announced where the eye is, not only in the log.
            if ended {
                state.notice = Notices.scriptOver
                state.noticeUnbidden = true
            }
            return []
        case .serverLink(let link):
            if case .forgotten = link {} else { state.forgottenSeen = false }
            state.status.link = link
            return []
        case .truth(let truth):
            if truth.faults != state.status.faults { state.timeline.faults(truth.faults.words, at: state.status.clock) }
            state.status.truth = truth
            return []
        case .emojiWidths(let widths):
            state.emojiWidths = widths
            return []
        case .messagesShown(let scroll):
            // Only once the whole history is loaded: before, older pages come as it scrolls.
            if let open = state.open, !state.partialHistory.contains(open), state.scroll > scroll { state.scroll = scroll }
            return []
        case .searchResults(let query, let hits):
            guard var search = state.search, search.query == query else { return [] }  // an older search's answer
            let keep = search.currentHit?.txId
            if search.scope == .all {
                // By conversation (the one with the newest hit first), each newest first.
                var order: [Address] = []
                for h in hits where !order.contains(h.conversation) { order.append(h.conversation) }
                search.hits = order.flatMap { a in hits.filter { $0.conversation == a } }
            } else {
                search.hits = hits
            }
            search.searching = false
            search.current = keep.flatMap { k in search.hits.firstIndex { $0.txId == k } } ?? 0
            state.search = search
            if hits.isEmpty { state.notice = "no message has \(query.terms.joined(separator: " ")) (Esc ends the search)" }
            return []
        case .mouse(let event, let area):
            return mouse(&state, event, area: area)
        case .keys(let map):
            state.keys = map
            return []
        case .keepsDrafts(let kept):
            state.keepsDrafts = kept
            return []
        case .restore(let memory):
            for (address, draft) in memory.drafts where MessageLimits.maxBodyBytes >= draft.text.utf8.count {
                state.drafts[Address(address)] = LineEditor(draft.text, cursor: draft.cursor)
            }
            guard let open = memory.open.map(Address.init), let i = state.conversations.firstIndex(where: { $0.address == open }) else {
                return []
            }
            state.selected = i
            state.open = open
            state.scroll = max(0, memory.scroll)
            state.focus = state.drafts[open] != nil ? .compose : .messages
            return markRead(&state, open)
        case .syncMark(let mark, let at):
            state.timeline.mark(mark, at: at)
            return []
        case .syncRequests(let n, let at):
            state.timeline.requests(n, at: at)
            return []
        case .paused(let paused):
            state.status.paused = paused
            return []
        case .serverClock(let speed):
            state.status.serverClock = speed
            return []
        case .inspection(let inspection):
            state.inspection = inspection
            return []
        case .openConversation(let address):
            guard state.open != address, let i = state.conversations.firstIndex(where: { $0.address == address }) else { return [] }
            state.selected = i
            state.open = address
            state.scroll = 0
            if state.focus == .list { state.focus = .messages }
            return []
        case .outgoing(let m):
            var list = state.outbox[m.to] ?? []
            if case .sent = m.state {
                list.removeAll { $0.localId == m.localId }  // its stored message is in the pane already
            } else if let i = list.firstIndex(where: { $0.localId == m.localId }) {
                list[i] = m
            } else {
                list.append(m)
            }
            state.outbox[m.to] = list.isEmpty ? nil : list
            return []
        case .notice(let text):
            state.notice = text
            state.noticeUnbidden = false
            return []
        case .focus(let focused):
            state.attention.focused = focused
            return []
        case .notifyBy(let method, let passthrough):
            state.attention.method = method
            state.attention.passthrough = passthrough
            return []
        }
    }

    /// The handle a directive names a conversation by (its row's; else its address).
    static func handle(_ state: ViewState, _ conversation: Address) -> String {
        state.conversations.first { $0.address == conversation }?.handle ?? conversation.value
    }

    /// Opening or returning to a conversation reads it (the directive `open`; the engine's
    /// `.unread` event then zeroes its count), and what was unread gets a `new` line above it.
    static func markRead(_ state: inout ViewState, _ conversation: Address) -> [Command] {
        if let c = state.conversations.firstIndex(where: { $0.address == conversation }) {
            let unread = state.conversations[c].unread
            if unread > 0 {
                state.newMarker = NewMarker(conversation: conversation, unread: unread)
                placeMarker(&state)
            } else if state.newMarker?.conversation != conversation {
                state.newMarker = nil
            }
        }
        return [.apply(.open(handle: handle(state, conversation)))]
    }

    /// Puts the `new` line above the first unread message, once the history is there: the
    /// `unread`-th incoming message from the end.
    static func placeMarker(_ state: inout ViewState) {
        guard var marker = state.newMarker, marker.txId == nil, let list = state.messages[marker.conversation] else { return }
        var seen = 0
        for m in list.reversed() where !m.outgoing {
            seen += 1
            if seen == marker.unread { marker.txId = m.txId; break }
        }
        // Not in what is loaded: the next page has it (`historyWanted`), unless this is all.
        if marker.txId == nil, !state.partialHistory.contains(marker.conversation) { marker.txId = list.first { !$0.outgoing }?.txId }
        state.newMarker = marker
    }

    /// Scrolls the log by `rows` (positive: back). Leaving the newest line freezes the view on
    /// the entries there are, so new ones do not move it; coming back to it follows again.
    static func scrollLog(_ state: inout ViewState, by rows: Int) {
        state.logScroll = max(0, state.logScroll + rows)
        if state.logScroll == 0 {
            state.logFrozenAt = nil
        } else if state.logFrozenAt == nil {
            state.logFrozenAt = state.logCount
        }
    }

    /// Edits the open conversation's draft in place (the dictionary's own accessor: no copy
    /// of the line per key).
    static func editDraft(_ state: inout ViewState, _ edit: (inout LineEditor) -> Void) {
        guard let open = state.open else { return }
        edit(&state.drafts[open, default: LineEditor()])
    }
}
