/// The compose line: readline-style editing with history (SPEC §7). A value type; the
/// reducer owns it.
public struct LineEditor: Equatable, Sendable {
    public private(set) var text: [Character] = []
    /// Insertion point, 0…text.count.
    public private(set) var cursor = 0
    public private(set) var history: [String] = []
    /// Position while browsing history (nil: editing a fresh line).
    private var historyIndex: Int?
    private var draft: [Character] = []

    public init() {}

    public var string: String { String(text) }

    public mutating func insert(_ ch: Character) {
        text.insert(ch, at: cursor)
        cursor += 1
    }

    public mutating func left() { cursor = max(0, cursor - 1) }
    public mutating func right() { cursor = min(text.count, cursor + 1) }
    public mutating func home() { cursor = 0 }
    public mutating func end() { cursor = text.count }

    public mutating func backspace() {
        guard cursor > 0 else { return }
        text.remove(at: cursor - 1)
        cursor -= 1
    }

    public mutating func deleteForward() {
        guard cursor < text.count else { return }
        text.remove(at: cursor)
    }

    /// Ctrl-U: delete from the start of the line to the cursor.
    public mutating func killToStart() {
        text.removeFirst(cursor)
        cursor = 0
    }

    /// Ctrl-W: delete the word before the cursor (and the spaces after it).
    public mutating func killWord() {
        var start = cursor
        while start > 0, text[start - 1] == " " { start -= 1 }
        while start > 0, text[start - 1] != " " { start -= 1 }
        text.removeSubrange(start..<cursor)
        cursor = start
    }

    /// ↑: the previous history entry (the line being typed is kept as a draft).
    public mutating func historyUp() {
        guard !history.isEmpty else { return }
        let next: Int
        if let i = historyIndex { next = max(0, i - 1) } else { draft = text; next = history.count - 1 }
        historyIndex = next
        text = Array(history[next])
        cursor = text.count
    }

    /// ↓: the next history entry, then back to the draft.
    public mutating func historyDown() {
        guard let i = historyIndex else { return }
        if i + 1 < history.count {
            historyIndex = i + 1
            text = Array(history[i + 1])
        } else {
            historyIndex = nil
            text = draft
        }
        cursor = text.count
    }

    /// Enter: returns the line (nil when blank), records it in history, clears the editor.
    public mutating func submit() -> String? {
        let line = string
        text = []
        cursor = 0
        historyIndex = nil
        draft = []
        guard !line.allSatisfy({ $0 == " " }) else { return nil }
        if history.last != line { history.append(line) }
        if history.count > 100 { history.removeFirst() }
        return line
    }
}
