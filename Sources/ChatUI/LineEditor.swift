/// The compose line of one conversation: readline-style editing (SPEC §7). A value type;
/// the view state keeps one per conversation (`ViewState.drafts`), so that unsent text and
/// its cursor stay with the conversation they were written for.
public struct LineEditor: Equatable, Sendable {
    public private(set) var text: [Character] = []
    /// Insertion point, 0…text.count.
    public private(set) var cursor = 0
    /// Position in the shared history while browsing it (nil: editing this line).
    private var historyIndex: Int?
    /// The line as it was before browsing the history, given back by ↓ past the newest entry.
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

    /// ↑: the previous entry of `history` (the line being typed is kept as a draft).
    public mutating func historyUp(_ history: ComposeHistory) {
        let entries = history.entries
        guard !entries.isEmpty else { return }
        let next: Int
        // Another conversation's sends may have shortened the history since (it keeps 100).
        if let i = historyIndex { next = max(0, min(i, entries.count) - 1) } else { draft = text; next = entries.count - 1 }
        historyIndex = next
        text = Array(entries[next])
        cursor = text.count
    }

    /// ↓: the next entry of `history`, then back to the draft.
    public mutating func historyDown(_ history: ComposeHistory) {
        guard let i = historyIndex else { return }
        if i + 1 < history.entries.count {
            historyIndex = i + 1
            text = Array(history.entries[i + 1])
        } else {
            historyIndex = nil
            text = draft
            draft = []
        }
        cursor = text.count
    }

    /// Enter: returns the line (nil when blank) and clears the editor.
    public mutating func submit() -> String? {
        let line = string
        self = LineEditor()
        guard !line.allSatisfy({ $0 == " " }) else { return nil }
        return line
    }
}

/// The lines sent, newest last, shared by every conversation's compose line (↑/↓).
public struct ComposeHistory: Equatable, Sendable {
    public private(set) var entries: [String] = []
    public static let capacity = 100

    public init() {}

    public mutating func record(_ line: String) {
        if entries.last != line { entries.append(line) }
        if entries.count > Self.capacity { entries.removeFirst() }
    }
}
