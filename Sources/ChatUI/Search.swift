import SyncCore
import SyncEngine

/// Search, as the view keeps it: the prompt being typed (`/`), then the
/// query that ran, where (one conversation, or all), and its hits, which the store found
/// through its full-text index — in all of the history, not only what is loaded.
public struct SearchState: Equatable, Sendable {
    public enum Scope: Equatable, Sendable {
        case conversation(Address)
        case all
    }

    /// A message the search found, as the results show it (text made visible-safe).
    public struct Hit: Equatable, Sendable {
        public var txId: String
        public var conversation: Address
        public var sender: String
        public var text: String
        public var blockTime: Instant

        public init(txId: String, conversation: Address, sender: String, text: String, blockTime: Instant) {
            self.txId = txId
            self.conversation = conversation
            self.sender = UntrustedText.visible(sender)
            self.text = UntrustedText.visible(text, newlines: .marked)  // a hit has one row
            self.blockTime = blockTime
        }
    }

    /// The prompt is open and takes the keys.
    public var editing = true
    public var input = LineEditor()
    public var scope: Scope
    /// The query that ran (nil while it is being typed the first time).
    public var query: SearchQuery?
    /// Newest first.
    public var hits: [Hit] = []
    /// The hit shown: `n` goes to older ones, `N` to newer ones; in all conversations, the
    /// highlighted line of the list.
    public var current = 0
    public var searching = false

    public init(scope: Scope) { self.scope = scope }

    public var currentHit: Hit? { hits.indices.contains(current) ? hits[current] : nil }
}

extension ViewModel {
    /// The keys of the search prompt: text, Tab (this conversation / all), Enter, Esc.
    static func searchKey(_ state: inout ViewState, _ key: Key) -> [Command] {
        guard var search = state.search else { return [] }
        switch key {
        case .escape, .ctrl("c"):
            state.search = search.query == nil ? nil : { search.editing = false; return search }()
            return []
        case .tab:
            if case .conversation = search.scope { search.scope = .all } else if let open = state.open { search.scope = .conversation(open) }
        case .enter:
            guard let query = SearchQuery(search.input.string) else {
                state.notice = "type a word to search for (letters or digits)"
                return []
            }
            search.editing = false
            search.query = query
            search.searching = true
            state.search = search
            if case .conversation(let a) = search.scope { return [.search(query, in: a)] }
            return [.search(query, in: nil)]
        case .backspace: search.input.backspace()
        case .left: search.input.left()
        case .right: search.input.right()
        case .home, .ctrl("a"): search.input.home()
        case .end, .ctrl("e"): search.input.end()
        case .ctrl("u"): search.input.killToStart()
        case .ctrl("w"): search.input.killWord()
        case .char(let ch): search.input.insert(ch, maxBytes: 1024)
        default: break
        }
        state.search = search
        return []
    }

    /// `n` (older) and `N` (newer) through the hits; in the list of all conversations, down
    /// and up.
    static func stepSearch(_ state: inout ViewState, older: Bool) {
        guard var search = state.search, search.query != nil else {
            state.notice = "no search yet: / searches"
            return
        }
        guard !search.hits.isEmpty else {
            state.notice = "nothing found: no hit to move to"
            return
        }
        let next = older ? search.current + 1 : search.current - 1
        // At either end, say so: a key that seems to do nothing looks broken.
        guard search.hits.indices.contains(next) else {
            state.notice = older ? "the oldest hit: N goes back to newer ones" : "the newest hit: n goes on to older ones"
            return
        }
        search.current = next
        state.search = search
    }

    /// Enter on a hit of the list of all conversations: open its conversation there, with
    /// the same query, on that message.
    static func openSearchHit(_ state: inout ViewState) -> [Command] {
        guard var search = state.search, case .all = search.scope, let hit = search.currentHit, let query = search.query else { return [] }
        guard let i = state.conversations.firstIndex(where: { $0.address == hit.conversation }) else { return [] }
        state.selected = i
        var commands = perform(&state, .open)
        state.focus = .messages
        search.scope = .conversation(hit.conversation)
        search.hits = search.hits.filter { $0.conversation == hit.conversation }
        search.current = search.hits.firstIndex { $0.txId == hit.txId } ?? 0
        search.searching = true
        state.search = search
        commands.append(.search(query, in: hit.conversation))
        return commands
    }
}
