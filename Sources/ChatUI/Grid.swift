/// The semantic style of a cell: a theme maps each role to colours and attributes.
/// The raw values are the keys of theme files (`Themes/*.toml`).
public enum Role: String, CaseIterable, Sendable {
    case normal = "normal"
    case title = "title"
    case border = "border"
    case listItem = "list.item"
    case listSelected = "list.selected"
    case listUnread = "list.unread"
    case listMuted = "list.muted"
    case messageIncoming = "message.incoming"
    case messageOutgoing = "message.outgoing"
    case messageMeta = "message.meta"
    case messageMark = "message.mark"
    case messageDimmed = "message.dimmed"
    case daySeparator = "message.day"
    case compose = "compose"
    case composeCursor = "compose.cursor"
    case logLine = "log.line"
    case logTitle = "log.title"
    case statusBar = "status.bar"
    case statusLifecycle = "status.lifecycle"
    case statusBackground = "status.background"
    case statusRealtimeLive = "status.realtime.live"
    case statusRealtimeDegraded = "status.realtime.degraded"
    case statusPushReliable = "status.push.reliable"
    case statusPushUnknown = "status.push.unknown"
    case statusPushUnreliable = "status.push.unreliable"
    case statusPushDisabled = "status.push.disabled"
    /// Truth beside belief: the `truth:` segment, what the world broke that the engine does
    /// not believe yet.
    case statusTruth = "status.truth"
    case banner = "banner"
    case help = "help"
    case helpKey = "help.key"
    case warning = "warning"
    /// The title of the pane that has the keys (list, messages, log).
    case focus = "pane.focus"
    /// A word a search matched.
    case searchMatch = "search.match"
}

/// One terminal cell: what `TextWidth.cells` draws there (one spacing scalar and its marks,
/// or a whole emoji sequence). A character of width N takes N cells: the first holds it with
/// width N, the others are continuations (width 0) that the adapter never writes.
public struct Cell: Equatable, Sendable {
    public var character: Character
    public var width: UInt8
    public var role: Role
    /// Part of a grapheme cluster drawn in several cells (`DrawnCell.isolated`): the adapter
    /// writes it on its own and puts the cursor where the grid says it ends.
    public var isolated: Bool
    /// A whole emoji sequence (`DrawnCell.whole`): the adapter writes it on its own, itself,
    /// and puts the cursor where the grid says it ends.
    public var whole: Bool

    public init(_ character: Character, width: UInt8 = 1, role: Role = .normal, isolated: Bool = false, whole: Bool = false) {
        self.character = character
        self.width = width
        self.role = role
        self.isolated = isolated
        self.whole = whole
    }

    public static let blank = Cell(" ")
    static let continuation = Cell(" ", width: 0)
}

/// The screen as values: `render(state, size)` draws into it, tests read it back as lines,
/// and the ncurses adapter diffs two of them (docs/design.md: ratatui's buffer).
public struct Grid: Equatable, Sendable {
    public let width: Int
    public let height: Int
    public private(set) var cells: [Cell]
    /// How emoji sequences are drawn on this screen (`put` draws them so, and the render
    /// measures with it).
    public let emoji: EmojiWidths
    /// The hyperlinks over the cells (`Links`): the terminal adapter writes them after the
    /// frame; a grid's text is the same with or without them.
    public var links: [GridLink] = []
    /// The message pane's scroll as drawn: the view's, or less when it asked for more than
    /// there is (`ViewInput.messagesShown`).
    public var messageScroll: Int?

    public init(width: Int, height: Int, emoji: EmojiWidths = .safe) {
        self.width = max(0, width)
        self.height = max(0, height)
        self.emoji = emoji
        cells = Array(repeating: .blank, count: self.width * self.height)
    }

    public subscript(x: Int, y: Int) -> Cell {
        get { cells[y * width + x] }
        set { cells[y * width + x] = newValue }
    }

    /// Row `y`'s cells.
    public func row(_ y: Int) -> ArraySlice<Cell> { cells[(y * width)..<((y + 1) * width)] }

    /// Fills a rectangle with blanks of a role.
    public mutating func fill(x: Int, y: Int, width w: Int, height h: Int, role: Role) {
        guard w > 0, h > 0 else { return }
        for row in max(0, y)..<min(height, y + h) {
            for col in max(0, x)..<min(width, x + w) { self[col, row] = Cell(" ", role: role) }
        }
    }

    /// Writes text from (x, y), clipped at `maxX` (exclusive). Text must already be safe
    /// (sanitised at the view-state boundary). Each grapheme cluster becomes the cells
    /// `TextWidth.cells` draws for it (with this grid's `emoji`), so a cell never holds what
    /// a terminal could draw at another width. Returns the column after the last cell written.
    @discardableResult
    public mutating func put(_ text: String, x: Int, y: Int, role: Role, maxX: Int? = nil) -> Int {
        guard y >= 0, y < height else { return x }
        let limit = min(width, maxX ?? width)
        var col = x
        for ch in text {
            for drawn in TextWidth.cells(ch, emoji: emoji) {
                let w = drawn.width
                if col + w > limit { return col }
                if col >= 0 {
                    // Overwriting part of a wide character leaves blanks, never part of a glyph:
                    // the cells of one started before `col`…
                    if self[col, y].width == 0 {
                        var head = col - 1
                        while head > 0, self[head, y].width == 0 { head -= 1 }
                        for k in head..<col { self[k, y] = Cell(" ", role: self[k, y].role) }
                    }
                    self[col, y] = Cell(Character(drawn.text), width: UInt8(w), role: role, isolated: drawn.isolated, whole: drawn.whole)
                    for k in 1..<max(1, w) { self[col + k, y] = Cell(" ", width: 0, role: role) }
                    // …and those of one that went on past the cells written.
                    var k = col + w
                    while k < width, self[k, y].width == 0 {
                        self[k, y] = Cell(" ", role: self[k, y].role)
                        k += 1
                    }
                }
                col += w
            }
        }
        return col
    }

    /// Columns `text` takes on this grid (`TextWidth.of` with its `emoji`).
    public func columns(_ text: String) -> Int { TextWidth.of(text, emoji: emoji) }

    /// `text` fitted in `columns` on this grid, ending with `…` when cut.
    public func truncate(_ text: String, to columns: Int) -> String { TextWidth.truncate(text, to: columns, emoji: emoji) }

    /// `text` word-wrapped to `width` columns on this grid.
    public func wrap(_ text: String, width: Int) -> [String] { TextWidth.wrap(text, width: width, emoji: emoji) }

    /// The grid as plain text, one string per row (continuations skipped, trailing blanks kept).
    public var lines: [String] {
        (0..<height).map { y in
            var s = ""
            for x in 0..<width where self[x, y].width != 0 { s.append(self[x, y].character) }
            return s
        }
    }

    /// Like `lines` with trailing blanks trimmed: what tests compare.
    public var text: [String] {
        lines.map { line in
            var l = Substring(line)
            while l.last == " " { l = l.dropLast() }
            return String(l)
        }
    }

    /// The roles of one row, cell by cell (continuations skipped).
    public func roles(row y: Int) -> [Role] {
        (0..<width).compactMap { self[$0, y].width == 0 ? nil : self[$0, y].role }
    }
}
