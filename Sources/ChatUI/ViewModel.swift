import AppActions
import SyncCore
import SyncEngine

/// What the view-model asks the outside world to do. The app performs these; the reducer
/// stays values in, values out. Whatever changes the world or the client is a directive
/// (`apply`), the one vocabulary of keys, scenario lines and recordings: a send, reading a
/// conversation, a mode, a rename, a mute. The rest is the app's own pacing and queries.
public enum Command: Equatable, Sendable {
    /// A change to the world, the client or the app's lifecycle, as a scenario line makes it.
    case apply(Directive)
    /// A fault key: the session resolves it against the world's truth (`FaultToggle`).
    case toggleFault(FaultToggle)
    case setSpeed(Double)
    /// Stop or restart the world's clock (the app's pacing, not the world: nothing is recorded).
    case togglePause
    /// While paused: run the world to its next logged event.
    case step
    /// Ask the engine for its `.inspection` events (true) or stop (false).
    case inspect(Bool)
    /// Search the store's history: one conversation, or all (nil).
    case search(SearchQuery, in: Address?)
    /// Ring the terminal's bell (a message while you look elsewhere, `--bell`).
    case bell
    case quit
}

/// Everything that reaches the view-model.
public enum ViewInput: Equatable, Sendable {
    case key(Key)
    /// The conversation list, fresh from the store (names, unread counts, activity).
    case conversations([ConversationRow])
    /// A message stored by the engine, in its conversation.
    case message(Address, MessageRow)
    /// A conversation's unread count, as the store has it (the engine's `.unread` event).
    case unread(Address, Int)
    /// A page of one conversation's history (`ViewState.historyWanted`), oldest first:
    /// the first when it is opened, then older ones; `complete` when it reaches the first
    /// message.
    case history(Address, [MessageRow], complete: Bool = true)
    /// A line of the app's own for the log (a notice), already with its time if it has one.
    case logLine(String)
    /// One engine event as a line of the sync log.
    case log(LogEntry)
    case banner(BannerRow)
    /// What the engine's status bar says (its `.status` event).
    case engineStatus(EngineStatus)
    /// A contact added, renamed, muted or unmuted.
    case contact(Contact)
    /// The world's clock now, and the speed of time (each frame).
    case clock(Instant, speed: Double)
    /// Where a played scenario is (told when it changes), nil without one.
    case script(ScriptPhase?)
    /// The faults the world has now (the session's ground truth, not the engine's).
    case faults([String])
    /// The world's clock stopped (true) or runs (false).
    case paused(Bool)
    /// The clock is a server's, at this speed: no key here pauses, steps or changes it.
    case serverClock(Double)
    /// Whether this screen knows the world's truth (the embedded world; a server's client
    /// does not, and says nothing rather than pretend).
    case truthKnown(Bool)
    /// How the terminal draws emoji sequences, found at start (`EmojiWidths`).
    case emojiWidths(EmojiWidths)
    /// What the engine's inspector shows (its `.inspection` event, while `i` is open).
    case inspection(EngineInspection)
    /// A message written changed state: sending, failed, sent.
    case outgoing(OutgoingMessage)
    /// A conversation opened from outside the keys (a played `open NAME`).
    case openConversation(Address)
    /// Where the last session left off: open conversation, scroll, drafts (after the list).
    case restore(ViewMemory)
    /// Unsent lines survive a quit (a profile keeps them) or not (--ephemeral).
    case keepsDrafts(Bool)
    /// The keys in force (keys.toml).
    case keys(KeyMap)
    /// A click or the wheel, over the area of the screen under it (`Render.area`).
    case mouse(MouseEvent, ScreenArea)
    /// What a search found, newest first.
    case searchResults(SearchQuery, [SearchState.Hit])
    /// A catch-up started (its kind) or was skipped, for the timeline strip.
    case syncMark(TimelineStrip.Mark, at: Instant)
    /// A sync ended having made `n` backend requests, for the timeline strip.
    case syncRequests(Int, at: Instant)
    case notice(String)
}

/// What the compose line says when a message would pass `MessageLimits.maxBodyBytes`.
public enum Notices {
    static let limit = "message limit: \(MessageLimits.maxBodyBytes / 1024) KiB (\(MessageLimits.maxBodyBytes) bytes)"

    /// Built once: a paste past the limit says it for every key it refuses.
    public static let limitReached = limit + "; nothing more is added"

    public static let scriptOver = "the scenario is over: the world goes on live, and every key still works"

    /// What a key that paces the clock (space, `.`, `+`, `-`) says on a server's clock.
    public static func serverClock(_ speed: Double) -> String {
        "the clock is the server's: x\(Render.speedWord(speed)), not paused, stepped or changed from here"
    }

    public static func tooLongToSend(bytes: Int) -> String { limit + "; this line is \(bytes) bytes, nothing was sent" }
}

/// The reducer (Elm / bubbletea `Update`, TCA `Reduce`).
public enum ViewModel {
    /// The speeds `+` and `-` step through (issue 14: from a quarter of real time to ×300).
    public static let speeds: [Double] = [0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]

    public static func reduce(_ state: inout ViewState, _ input: ViewInput) -> [Command] {
        switch input {
        case .key(let key):
            state.notice = nil
            if case .char("q") = key {} else if key != .ctrl("c") { state.quitAsked = false }
            return handleKey(&state, key)
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
            // Read as it came (`reading`): the engine marked it read when it stored it (it
            // knows the conversation on screen), at the message's own instant.
            if reading { return [] }
            // Looking elsewhere: the bell, if asked for and the preview shows anything at all.
            if !row.outgoing, state.bellEnabled, state.status.preview != .hidden { return [.bell] }
            return []
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
            return reduce(&state, .log(LogEntry(time: "", text: line, kind: .notice)))
        case .log(let entry):
            state.log.append(entry)
            state.logCount += 1
            if state.log.count > ViewState.logCapacity { state.log.removeFirst(state.log.count - ViewState.logCapacity) }
            return []
        case .banner(let banner):
            state.banners.append(banner)
            if state.banners.count > 20 { state.banners.removeFirst() }
            return []
        case .engineStatus(let status):
            let cameBack = state.status.lifecycle != .foreground && status.lifecycle == .foreground
            state.status.engine = status
            state.timeline.status(status, at: state.status.clock)
            state.status.truth.observe(status, at: state.status.clock)  // what it believes, beside the world's faults
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
            return []
        case .script(let phase):
            let ended = phase == .live && state.status.scriptPhase != .live
            state.status.scriptPhase = phase
            // The end of a played scenario is announced where the eye is, not only in the log.
            if ended { state.notice = Notices.scriptOver }
            return []
        case .faults(let faults):
            state.status.faults = faults
            state.timeline.faults(faults, at: state.status.clock)
            state.status.truth.faultsChanged(faults, at: state.status.clock)
            return []
        case .truthKnown(let known):
            state.status.knowsTruth = known
            return []
        case .emojiWidths(let widths):
            state.emojiWidths = widths
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
            state.conversations[i].unread = 0  // the session has marked it read already
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
            return []
        }
    }

    /// The handle a directive names a conversation by (its row's; else its address).
    static func handle(_ state: ViewState, _ conversation: Address) -> String {
        state.conversations.first { $0.address == conversation }?.handle ?? conversation.value
    }

    /// Opening or returning to a conversation reads it: its count goes to 0 at once, and
    /// what was unread gets a `new` line above it (issue 15 #3).
    private static func markRead(_ state: inout ViewState, _ conversation: Address) -> [Command] {
        if let c = state.conversations.firstIndex(where: { $0.address == conversation }) {
            let unread = state.conversations[c].unread
            if unread > 0 {
                state.newMarker = NewMarker(conversation: conversation, unread: unread)
                placeMarker(&state)
            } else if state.newMarker?.conversation != conversation {
                state.newMarker = nil
            }
            state.conversations[c].unread = 0
        }
        return [.apply(.open(handle: handle(state, conversation)))]
    }

    /// Puts the `new` line above the first unread message, once the history is there: the
    /// `unread`-th incoming message from the end.
    private static func placeMarker(_ state: inout ViewState) {
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

    private static func handleKey(_ state: inout ViewState, _ key: Key) -> [Command] {
        if state.showHelp {
            // ↑/↓/PgUp/PgDn scroll a help taller than the screen; any other key closes it.
            switch key {
            case .up, .char("k"): state.helpScroll = max(0, state.helpScroll - 1)
            case .down, .char("j"): state.helpScroll += 1
            case .pageUp: state.helpScroll = max(0, state.helpScroll - 10)
            case .pageDown: state.helpScroll += 10
            default:
                state.showHelp = false
                state.helpScroll = 0
            }
            return []
        }
        if state.search?.editing == true { return searchKey(&state, key) }
        if state.prompt != nil { return contactPromptKey(&state, key) }
        if state.search != nil {
            switch key {
            case .escape:
                state.search = nil
                return []
            case .enter where state.search?.scope == .all && state.focus != .compose:
                return openSearchHit(&state)
            default: break
            }
        }
        if state.focus == .compose {
            if let action = KeyTable.action(for: key, in: state.keys.compose) { return perform(&state, action) }
            if case .char(let ch) = key {
                var fitted = true
                editDraft(&state) { fitted = $0.insert(ch, maxBytes: MessageLimits.maxBodyBytes) }
                if !fitted { state.notice = Notices.limitReached }
            }
            return []
        }
        guard let action = KeyTable.action(for: key, in: state.keys.global) else { return [] }
        return perform(&state, action)
    }

    static func perform(_ state: inout ViewState, _ action: KeyAction) -> [Command] {
        switch action {
        case .focusNext:
            switch state.focus {
            case .list: state.focus = .messages
            case .messages: state.focus = state.open != nil ? .compose : state.showLog ? .log : .list
            case .compose: state.focus = state.showLog ? .log : .list
            case .log: state.focus = .list
            }
        case .moveUp:
            switch state.focus {
            case .messages: state.scroll += 1
            case .log: scrollLog(&state, by: 1)
            default: state.selected = max(0, state.selected - 1)
            }
        case .moveDown:
            switch state.focus {
            case .messages: state.scroll = max(0, state.scroll - 1)
            case .log: scrollLog(&state, by: -1)
            default: state.selected = min(max(0, state.conversations.count - 1), state.selected + 1)
            }
        case .open:
            guard let row = state.selectedConversation else { return [] }
            state.open = row.address
            state.scroll = 0
            state.focus = .compose
            return markRead(&state, row.address)
        case .scrollUp:
            if state.focus == .log { scrollLog(&state, by: 10) } else { state.scroll += 10 }
        case .scrollDown:
            if state.focus == .log { scrollLog(&state, by: -10) } else { state.scroll = max(0, state.scroll - 10) }
        case .scrollEnd:
            if state.focus == .log { scrollLog(&state, by: -state.logScroll) } else { state.scroll = 0 }
        case .background: return [.apply(.background)]
        case .foreground: return [.apply(.foreground)]
        case .openBanner:
            guard let banner = state.banners.last else { return [] }
            state.open = banner.conversation
            if let i = state.conversations.firstIndex(where: { $0.address == banner.conversation }) { state.selected = i }
            state.scroll = 0
            state.focus = .compose
            return [.apply(.foreground)] + markRead(&state, banner.conversation)
        case .cyclePushFault: return [.toggleFault(.push)]
        case .toggleRealtime: return [.toggleFault(.realtime)]
        case .makeStale: return [.apply(.realtimeStale)]
        case .toggleIndexer: return [.toggleFault(.indexer)]
        case .expireToken: return [.apply(.tokenExpire)]
        case .toggleNetwork: return [.toggleFault(.network)]
        case .syncNow: return [.apply(.sync)]
        case .cycleMode:
            let all = NotificationMode.allCases
            let next = all[((all.firstIndex(of: state.status.mode) ?? 0) + 1) % all.count]
            return [.apply(.mode(next))]
        case .cyclePreview:
            let all = PreviewMode.allCases
            return [.apply(.preview(all[((all.firstIndex(of: state.status.preview) ?? 0) + 1) % all.count]))]
        case .toggleLog:
            state.showLog.toggle()
            if !state.showLog, state.focus == .log { state.focus = .list }
        case .toggleLogFilter:
            state.logFilter = state.logFilter == .decisions ? .all : .decisions
            scrollLog(&state, by: -state.logScroll)  // another view: start from its newest line
        case .faster, .slower:
            let i = speeds.lastIndex { $0 <= state.status.speed } ?? 0
            let j = action == .faster ? min(speeds.count - 1, i + 1) : max(0, i - 1)
            return [.setSpeed(speeds[j])]
        case .toggleHelp: state.showHelp = true
        case .toggleTimeline: state.showTimeline.toggle()
        case .search:
            state.search = SearchState(scope: state.open.map { .conversation($0) } ?? .all)
            return []
        case .addContact:
            state.prompt = ContactPrompt(step: .address)
            return []
        case .renameContact:
            guard let row = state.selectedConversation else { return [] }
            var prompt = ContactPrompt(step: .rename(row.address))
            prompt.input = LineEditor(row.name)
            state.prompt = prompt
            return []
        case .toggleMute:
            guard let row = state.selectedConversation else { return [] }
            return [.apply(row.muted ? .unmute(handle: row.handle) : .mute(handle: row.handle))]
        case .searchOlder: stepSearch(&state, older: true)
        case .searchNewer: stepSearch(&state, older: false)
        case .nextUnread:
            let rows = state.conversations, from = state.selected
            let n = max(1, rows.count)
            guard let i = (1...n).map({ (from + $0) % n }).first(where: { rows.indices.contains($0) && rows[$0].unread > 0 }) else {
                state.notice = "no unread messages"
                return []
            }
            state.selected = i
            return perform(&state, .open)
        case .togglePause: return [.togglePause]
        case .retrySends:
            guard state.outbox.values.contains(where: { $0.contains { if case .failed = $0.state { true } else { false } } }) else {
                state.notice = "no message is waiting to be sent again"
                return []
            }
            return [.apply(.retry)]
        case .step:
            if let speed = state.status.serverClock {
                state.notice = Notices.serverClock(speed)
                return []
            }
            guard state.status.paused else {
                state.notice = "the clock runs: space pauses it, then . steps to the next event"
                return []
            }
            return [.step]
        case .toggleInspector:
            state.showInspector.toggle()
            if !state.showInspector { state.inspection = nil }  // a reopened inspector never shows stale values
            return [.inspect(state.showInspector)]
        case .quit:
            // An unsent line is kept with a profile (and the app says so when it ends); with
            // nothing kept (--ephemeral), the first q says what would be lost.
            let unsent = state.drafts.filter { !$0.value.isEmpty }.keys
            if !state.keepsDrafts, !unsent.isEmpty, !state.quitAsked {
                state.quitAsked = true
                let names = unsent.compactMap { a in state.conversations.first { $0.address == a }?.name }.sorted()
                state.notice = "an unsent line to \(names.joined(separator: ", ")) would be lost (nothing is kept): press q again to quit"
                return []
            }
            state.quitting = true
            return [.quit]
        case .left: editDraft(&state) { $0.left() }
        case .right: editDraft(&state) { $0.right() }
        case .home: editDraft(&state) { $0.home() }
        case .end: editDraft(&state) { $0.end() }
        case .backspace: editDraft(&state) { $0.backspace() }
        case .delete: editDraft(&state) { $0.deleteForward() }
        case .killToStart: editDraft(&state) { $0.killToStart() }
        case .killWord: editDraft(&state) { $0.killWord() }
        case .historyUp: let history = state.history; editDraft(&state) { $0.historyUp(history) }
        case .historyDown: let history = state.history; editDraft(&state) { $0.historyDown(history) }
        case .leaveCompose: state.focus = .list
        case .send:
            guard let to = state.open, let draft = state.drafts[to] else { return [] }
            // Typing stops at the limit; a longer line (from elsewhere) is refused whole,
            // never cut, and stays here to be shortened.
            guard draft.utf8Count <= MessageLimits.maxBodyBytes else {
                state.notice = Notices.tooLongToSend(bytes: draft.utf8Count)
                return []
            }
            guard let text = state.drafts[to]?.submit() else { return [] }
            state.drafts[to] = nil
            state.history.record(text)
            state.scroll = 0
            return [.apply(.send(handle: handle(state, to), text: text))]
        }
        return []
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
    private static func editDraft(_ state: inout ViewState, _ edit: (inout LineEditor) -> Void) {
        guard let open = state.open else { return }
        edit(&state.drafts[open, default: LineEditor()])
    }
}
