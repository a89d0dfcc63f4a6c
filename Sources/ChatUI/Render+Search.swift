import SyncCore

/// Search on the screen: the prompt in the compose line, the matched words
/// highlighted in the messages, and the list of hits across all conversations.
extension Render {
    static func drawSearchPrompt(_ g: inout Grid, _ s: ViewState, _ search: SearchState, y: Int, width: Int) {
        let scope: String
        switch search.scope {
        case .conversation(let a): scope = s.conversations.first { $0.address == a }?.name ?? "this conversation"
        case .all: scope = "all conversations"
        }
        let prompt = g.truncate("search " + scope, to: 30) + "> "
        let hint = s.open != nil ? "  (Tab: \(search.scope == .all ? "this conversation" : "all conversations") · Enter searches · Esc)" : "  (Enter searches · Esc)"
        var x = g.put(prompt, x: 0, y: y, role: .focus)
        let room = width - x - TextWidth.of(hint)
        for cell in composeWindow(search.input, cursor: search.input.cursor, columns: max(4, room), emoji: g.emoji) {
            x = g.put(cell.text, x: x, y: y, role: cell.isCursor ? .composeCursor : .compose, maxX: width)
        }
        if x + TextWidth.of(hint) <= width { g.put(hint, x: x, y: y, role: .messageMeta) }
    }

    /// Overlays the words of `text` that `query` matches (from its `from`-th character on) in
    /// the search role; `text` was put at `x`.
    static func highlight(_ g: inout Grid, _ text: String, query: SearchQuery, from: Int, x: Int, y: Int, maxX: Int) {
        let start = text.index(text.startIndex, offsetBy: min(from, text.count))
        for range in query.ranges(in: text) where range.lowerBound >= start {
            // Whole characters: a character is lit when one of its scalars matched.
            let lower = text.rangeOfCharacter(containing: range.lowerBound)
            let upper = text.rangeOfCharacter(containing: text.unicodeScalars.index(before: range.upperBound))
            let column = g.columns(String(text[..<lower.lowerBound]))
            g.put(String(text[lower.lowerBound..<upper.upperBound]), x: x + column, y: y, role: .searchMatch, maxX: maxX)
        }
    }

    /// The hits of a search in all conversations, newest first, each under its
    /// conversation's name; ↑/↓ (n/N) move, Enter opens the conversation there.
    static func drawSearchResults(_ g: inout Grid, _ s: ViewState, _ search: SearchState, _ l: Layout) {
        let height = l.paneHeight
        guard height > 1, let query = search.query else { return }
        let status = search.searching ? "searching…"
            : search.hits.isEmpty ? "nothing found · Esc"
            : "\(Words.count(search.hits.count, "hit")) in \(Words.count(Set(search.hits.map(\.conversation)).count, "conversation")) · n/N move · Enter opens · Esc"
        g.put(g.truncate(" search “\(UntrustedText.visible(search.input.string))”: \(status) ", to: l.paneWidth), x: l.paneX, y: l.contentTop, role: .focus)
        var rows: [(text: String, role: Role, hit: Int?)] = []
        var lastConversation: Address?
        for (i, hit) in search.hits.enumerated() {
            if hit.conversation != lastConversation {
                let name = s.conversations.first { $0.address == hit.conversation }?.name ?? hit.conversation.value
                rows.append((name, .title, nil))
                lastConversation = hit.conversation
            }
            rows.append((Clock.hhmm(hit.blockTime) + " " + hit.sender + ": " + hit.text.replacingOccurrences(of: "\n", with: " "), .messageIncoming, i))
        }
        // Keep the current hit in view.
        let at = rows.firstIndex { $0.hit == search.current } ?? 0
        let first = max(0, min(at - (height - 1) / 2, rows.count - (height - 1)))
        for (k, row) in rows.dropFirst(first).prefix(height - 1).enumerated() {
            let y = l.contentTop + 1 + k
            let current = row.hit == search.current
            let shown = g.truncate((row.hit == nil ? " " : "   ") + row.text, to: l.paneWidth - 1)
            g.put(shown, x: l.paneX, y: y, role: current ? .focus : row.role, maxX: l.width)
            if row.hit != nil, !current { highlight(&g, shown, query: query, from: 9, x: l.paneX, y: y, maxX: l.width) }
        }
    }
}

extension String {
    /// The range of the character (grapheme cluster) that holds the scalar at `i`.
    func rangeOfCharacter(containing i: String.Index) -> Range<String.Index> {
        var start = startIndex
        for idx in indices {
            let next = index(after: idx)
            if i < next { return idx..<next }
            start = next
        }
        return start..<endIndex
    }
}
