import Directives
import SyncCore
import SyncEngine

/// A key: the help, the prompts, the compose line and the key table's actions.
extension ViewModel {
    /// `noticeUp`: a notice was on the screen as the key came (`ViewState.noticeUp`).
    static func handleKey(_ state: inout ViewState, _ key: Key, noticeUp: Bool = false) -> [Command] {
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
            if case .char(let ch) = key { insertInDraft(&state, String(ch)) }
            return []
        }
        // A letter typed while a notice shows only takes the notice away: a person who
        // starts typing while the keys are elsewhere never breaks push with a `p`.
        if noticeUp, case .char = key { return [] }
        guard let action = KeyTable.action(for: key, in: state.keys.global) else { return [] }
        return perform(&state, action)
    }

    /// Types `text` at the compose line's cursor as one edit, up to the message limit (the
    /// limit's notice when some of it did not fit).
    static func insertInDraft(_ state: inout ViewState, _ text: String) {
        var fitted = true
        editDraft(&state) { line in
            for ch in text where fitted { fitted = line.insert(ch, maxBytes: MessageLimits.maxBodyBytes) }
        }
        if !fitted { state.notice = Notices.limitReached }
    }

    /// A paste (the terminal's bracketed paste): one edit, its new lines kept (CR, LF and
    /// CRLF each one new line), nothing sent. Outside the compose line it goes to the open
    /// conversation's, which takes the focus; one-line prompts (search, contact) take it with
    /// its new lines as spaces.
    static func paste(_ state: inout ViewState, _ text: String) -> [Command] {
        let lines = Paste.normalized(text)
        if state.showHelp { state.showHelp = false; state.helpScroll = 0 }
        if state.search?.editing == true {
            for ch in lines { state.search?.input.insert(ch == "\n" ? " " : ch, maxBytes: 1024) }
            return []
        }
        if state.prompt != nil {
            state.prompt?.error = nil
            for ch in lines { state.prompt?.input.insert(ch == "\n" ? " " : ch, maxBytes: 256) }
            return []
        }
        guard state.open != nil else {
            state.notice = "nothing pasted: open a conversation first (Enter), then paste"
            return []
        }
        state.focus = .compose
        insertInDraft(&state, lines)
        return []
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
        case .scrollOldest:
            state.scroll = ViewState.oldest  // the frame finds how far that is (.messagesShown)
        case .toggleFold:
            state.wholeMessages.toggle()
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
        case .makeStale: return [.apply(.fault(.realtimeStale))]
        case .toggleIndexer: return [.toggleFault(.indexer)]
        case .expireToken: return [.apply(.fault(.tokenExpire))]
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
            // The keys stay where they were: a second `u` jumps again, never types a "u".
            let focus = state.focus
            state.selected = i
            let opened = perform(&state, .open)
            state.focus = focus
            return opened
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
            // A message the network has not taken yet (sending, failed, refused) is lost the same way.
            let unsent = state.drafts.filter { !$0.value.isEmpty }.keys
            let waiting = state.outbox.filter { $0.value.contains { if case .sent = $0.state { false } else { true } } }.keys
            if !state.keepsDrafts, !unsent.isEmpty || !waiting.isEmpty, !state.quitAsked {
                state.quitAsked = true
                func names(_ a: some Sequence<Address>) -> [String] { a.compactMap { a in state.conversations.first { $0.address == a }?.name }.sorted() }
                state.notice = UnsentLines.wouldBeLost(names(unsent), waiting: names(waiting))
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
        case .newline: insertInDraft(&state, "\n")
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
}
