/// The compose line of one conversation: readline-style editing (docs/keys.md). A value type;
/// the view state keeps one per conversation (`ViewState.drafts`), so that unsent text and
/// its cursor stay with the conversation they were written for.
///
/// Its elements are grapheme clusters, as the screen draws them: a scalar typed that extends
/// the cluster before the cursor (a skin tone, a joiner and the emoji after it, the second
/// letter of a flag, a combining mark) joins it, as the keys of one emoji arrive one scalar at
/// a time. So ←/→ move, Backspace and Ctrl-W delete, and the limit cuts, by whole clusters.
///
/// A key costs the same on a 16 KiB line as on an empty one: the text is a gap buffer, so
/// typing, Backspace and Delete at the cursor move nothing, and the line's UTF-8 size is
/// kept as it changes, so the message limit is checked without measuring the line. Only
/// a jump (Home, End, a history entry) followed by an edit moves the gap, once.
public struct LineEditor: Equatable, Sendable, RandomAccessCollection {
    private var text = GapBuffer()
    /// Insertion point, 0…count.
    public private(set) var cursor = 0
    /// The line's size in UTF-8 bytes, what `MessageLimits.maxBodyBytes` counts.
    public private(set) var utf8Count = 0
    /// Set when a character did not fit under the limit. The characters after it are
    /// refused too until the line is edited or the cursor moves, so that a paste is cut at
    /// one place rather than losing a wide character here and there.
    private var full = false
    /// Position in the shared history while browsing it (nil: editing this line).
    private var historyIndex: Int?
    /// The line as it was before browsing the history, given back by ↓ past the newest entry.
    private var draft = GapBuffer()

    public init() {}

    /// A line holding `text`, the cursor at its end.
    public init(_ text: String) {
        self.text = GapBuffer(text)
        cursor = self.text.count
        utf8Count = text.utf8.count
    }

    /// A line holding `text` with the cursor at `cursor` (clamped to the line).
    public init(_ text: String, cursor: Int) {
        self.init(text)
        moved(Swift.max(0, Swift.min(count, cursor)))
    }

    // MARK: The characters, for the screen (what is visible around the cursor, never all)

    public var startIndex: Int { 0 }
    public var endIndex: Int { text.count }
    public subscript(position: Int) -> Character { text[position] }

    /// The whole line, for sending: O(n), once per Enter.
    public var string: String { text.string }

    // MARK: Editing

    /// Types `ch` at the cursor unless the line would then pass `maxBytes` of UTF-8.
    /// Returns false when it did not fit (nothing is added, and a cluster it would have
    /// extended goes too: a cut never splits a cluster).
    @discardableResult
    public mutating func insert(_ ch: Character, maxBytes: Int = .max) -> Bool {
        let size = ch.utf8.count
        let joinsBefore = cursor > 0 ? Self.joined(text[cursor - 1], ch) : nil
        guard !full, utf8Count + size <= maxBytes else {
            if joinsBefore != nil { remove(cursor - 1..<cursor) }
            full = true
            return false
        }
        if let joinsBefore {
            text[cursor - 1] = joinsBefore
        } else {
            text.insert(ch, at: cursor)
            cursor += 1
        }
        utf8Count += size
        // What follows may join the cluster now (a joiner typed between two emoji).
        if cursor < count, let next = Self.joined(text[cursor - 1], text[cursor]) {
            text[cursor - 1] = next
            text.remove(cursor..<cursor + 1)
        }
        return true
    }

    /// `a` and `b` as one grapheme cluster, or nil when they stay two.
    static func joined(_ a: Character, _ b: Character) -> Character? {
        if a.isASCII && b.isASCII && !(a == "\r" && b == "\n") { return nil }  // the common case, at once
        let s = String(a) + String(b)
        return s.count == 1 ? s.first : nil
    }

    public mutating func left() { moved(Swift.max(0, cursor - 1)) }
    public mutating func right() { moved(Swift.min(count, cursor + 1)) }
    public mutating func home() { moved(0) }
    public mutating func end() { moved(count) }

    public mutating func backspace() {
        guard cursor > 0 else { return }
        remove(cursor - 1..<cursor)
    }

    public mutating func deleteForward() {
        guard cursor < count else { return }
        remove(cursor..<cursor + 1)
    }

    /// Ctrl-U: delete from the start of the line to the cursor.
    public mutating func killToStart() { remove(0..<cursor) }

    /// Ctrl-W: delete the word before the cursor (and the spaces or new lines after it).
    public mutating func killWord() {
        var start = cursor
        while start > 0, text[start - 1] == " " || text[start - 1] == "\n" { start -= 1 }
        while start > 0, text[start - 1] != " ", text[start - 1] != "\n" { start -= 1 }
        remove(start..<cursor)
    }

    /// ↑: the previous entry of `history` (the line being typed is kept as a draft).
    public mutating func historyUp(_ history: ComposeHistory) {
        let entries = history.entries
        guard !entries.isEmpty else { return }
        let next: Int
        // Another conversation's sends may have shortened the history since (it keeps 100).
        if let i = historyIndex { next = Swift.max(0, Swift.min(i, entries.count) - 1) } else { draft = text; next = entries.count - 1 }
        historyIndex = next
        replace(with: GapBuffer(entries[next]))
    }

    /// ↓: the next entry of `history`, then back to the draft.
    public mutating func historyDown(_ history: ComposeHistory) {
        guard let i = historyIndex else { return }
        if i + 1 < history.entries.count {
            historyIndex = i + 1
            replace(with: GapBuffer(history.entries[i + 1]))
        } else {
            historyIndex = nil
            replace(with: draft)
            draft = GapBuffer()
        }
    }

    /// Enter: returns the line (nil when blank) and clears the editor. New lines at its start
    /// and end go (a paste often ends with one); those within it stay.
    public mutating func submit() -> String? {
        var line = Substring(string)
        self = LineEditor()
        guard !line.allSatisfy({ $0 == " " || $0 == "\n" }) else { return nil }
        while line.first == "\n" { line.removeFirst() }
        while line.last == "\n" { line.removeLast() }
        return String(line)
    }

    private mutating func moved(_ to: Int) {
        cursor = to
        full = false
    }

    private mutating func remove(_ range: Range<Int>) {
        guard !range.isEmpty else { return }
        for i in range { utf8Count -= text[i].utf8.count }  // what is deleted, not the line
        text.remove(range)
        cursor = range.lowerBound
        full = false
    }

    private mutating func replace(with line: GapBuffer) {
        text = line
        cursor = line.count
        utf8Count = line.string.utf8.count
        full = false
    }
}

/// Characters with a gap at the insertion point: those before it at the front of
/// `storage`, those after it at the back. An edit at the gap costs O(1) (amortised when the
/// gap must grow); moving the gap costs the distance moved.
struct GapBuffer: Equatable, Sendable {
    private var storage: [Character] = []
    /// The gap is `storage[gapStart..<gapEnd]`; its contents mean nothing.
    private var gapStart = 0
    private var gapEnd = 0

    init() {}

    init(_ text: String) {
        storage = Array(text)
        gapStart = storage.count
        gapEnd = storage.count
    }

    var count: Int { storage.count - (gapEnd - gapStart) }

    subscript(i: Int) -> Character {
        get { storage[i < gapStart ? i : i + (gapEnd - gapStart)] }
        set { storage[i < gapStart ? i : i + (gapEnd - gapStart)] = newValue }
    }

    var string: String {
        var s = String(storage[..<gapStart])
        s.append(contentsOf: storage[gapEnd...])
        return s
    }

    mutating func insert(_ ch: Character, at i: Int) {
        moveGap(to: i)
        if gapStart == gapEnd {
            // Double: typing at the end of a long line stays O(1) amortised.
            let extra = max(32, storage.count)
            storage.insert(contentsOf: repeatElement(" ", count: extra), at: gapEnd)
            gapEnd += extra
        }
        storage[gapStart] = ch
        gapStart += 1
    }

    mutating func remove(_ range: Range<Int>) {
        moveGap(to: range.lowerBound)
        for k in gapEnd..<gapEnd + range.count { storage[k] = " " }  // let go of what was there
        gapEnd += range.count
    }

    private mutating func moveGap(to i: Int) {
        if i < gapStart {
            // storage[i..<gapStart] goes to the end of the gap, last first (the ranges may overlap).
            let n = gapStart - i
            for k in stride(from: n - 1, through: 0, by: -1) { storage[gapEnd - n + k] = storage[i + k] }
            gapStart = i
            gapEnd -= n
        } else if i > gapStart {
            let n = i - gapStart
            for k in 0..<n { storage[gapStart + k] = storage[gapEnd + k] }
            gapStart = i
            gapEnd += n
        }
    }

    /// Two buffers are equal when they hold the same characters, wherever their gaps are.
    static func == (a: GapBuffer, b: GapBuffer) -> Bool {
        a.count == b.count && (0..<a.count).allSatisfy { a[$0] == b[$0] }
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
