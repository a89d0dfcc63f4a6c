import SyncCore
import SyncEngine

/// The message pane and the banners over it.
extension Render {
    /// The message pane, wrapped by display width and laid out from the newest message up.
    static func drawMessages(_ g: inout Grid, _ s: ViewState, _ l: Layout) {
        let background = s.status.lifecycle == .background
        let height = l.paneHeight
        guard height > 0, let open = s.open else {
            if s.conversations.isEmpty {
                g.put(" waiting for contacts…", x: l.paneX, y: l.contentTop, role: .messageMeta)
            }
            drawBanners(&g, s, l)
            return
        }
        let list = s.messages[open] ?? []
        let textX = 9  // " HH:MM c "
        let textWidth = max(10, l.paneWidth - 1 - textX)
        var lines: [(text: String, x: Int, role: Role, meta: String?, mark: String?)] = []  // newest first
        var rowLinks: [Int: [(start: Int, count: Int, url: String, id: String)]] = [:]  // line index → its links
        var needed = height + s.scroll
        // A search in this conversation: its words are highlighted, and the current hit is
        // brought into view (found in the full history the store searched).
        let search = s.search.flatMap { $0.scope == .conversation(open) ? $0 : nil }
        let target = search?.currentHit?.txId
        var targetLines: Range<Int>?
        var bodyStarts: [Int: Int] = [:]  // line index → the column where the body starts on it
        // Messages the network has not taken yet, newest at the bottom: `…` sending, `!` failed.
        for m in (s.outbox[open] ?? []).reversed() {
            let status: String, role: Role, mark: String
            switch m.state {
            case .sending: (status, role, mark) = ("sending…", .messageMeta, "…")
            case .failed(let reason, let at):
                // Under a second left reads as the retry under way, never "retry in 0ms".
                let wait = (at - s.status.clock).milliseconds >= 1000 ? "retry in " + rounded(at - s.status.clock) : "retrying"
                (status, role, mark) = ("not sent: \(UntrustedText.visible(reason)), \(wait) (R: now)", .warning, "!")
            case .refused(let reason):
                (status, role, mark) = ("not sent: \(UntrustedText.visible(reason)) (R: try again)", .warning, "!")
            case .sent: continue
            }
            let rows = messageRows(g, who: "you", body: UntrustedText.visible(m.body, newlines: .kept) + " · " + status, width: textWidth).rows
            for (k, row) in rows.enumerated().reversed() {
                lines.append((row.text, textX + row.indent, background ? .messageDimmed : role, k == 0 ? Clock.hhmm(m.createdAt) : nil, k == 0 ? mark : nil))
            }
        }
        var index = list.count - 1
        // With a hit to show, on until it is built and half a pane beyond it, to centre it.
        while index >= 0, lines.count < needed || (target != nil && (targetLines == nil || lines.count < targetLines!.upperBound + height / 2)) {
            let m = list[index]
            let who = m.outgoing ? "you" : m.sender
            let body: String
            switch m.kind {
            case .contextual: body = m.text
            case .handshake: body = "(handshake) " + m.text
            case .payment: body = "(payment) " + m.text
            }
            // Folded unless asked whole (`z`), and unless it is the search's current hit.
            let (rows, more) = messageRows(g, who: who, body: body, width: textWidth, fold: !s.wholeMessages && m.txId != target)
            let role: Role = background ? .messageDimmed : m.outgoing ? .messageOutgoing : .messageIncoming
            let first = lines.count
            if let more {
                let indent = rows.last?.indent ?? 0
                lines.append((g.truncate(more, to: max(1, textWidth - indent)), textX + indent, background ? .messageDimmed : .messageMeta, nil, nil))
            }
            let links = s.linksEnabled ? linkSegments(rows, body: body, id: m.txId) : [:]
            for (k, row) in rows.enumerated().reversed() {
                if let found = links[k] { rowLinks[lines.count] = found }
                if search != nil { bodyStarts[lines.count] = row.bodyStart }
                lines.append((row.text, textX + row.indent, role, k == 0 ? Clock.hhmm(m.blockTime) : nil, k == 0 ? mark(m.channel) : nil))
            }
            if m.txId == target { targetLines = first..<lines.count }
            if s.newMarker?.conversation == open, s.newMarker?.txId == m.txId {
                let label = "── new ──"
                lines.append((label, max(0, (l.paneWidth - TextWidth.of(label)) / 2), background ? .messageDimmed : .listUnread, nil, nil))
            }
            let day = Clock.day(m.blockTime)
            if index == 0 || Clock.day(list[index - 1].blockTime) != day {
                lines.append(("── day \(day) ──", max(0, (l.paneWidth - 12) / 2), background ? .messageDimmed : .daySeparator, nil, nil))
            }
            index -= 1
        }
        // The current hit in view: the pane scrolls to it when it is not.
        var wanted = s.scroll
        // Scrolled back, the bottom row is the hint's: a line is in view in the rows above it.
        func rows(at scroll: Int) -> Int { scroll > 0 ? height - 1 : height }
        if let hit = targetLines, !(wanted <= hit.lowerBound && hit.upperBound <= wanted + rows(at: wanted)) {
            wanted = max(0, hit.upperBound - height / 2 - 1)
            needed = wanted + height
        }
        // As far back as the oldest line, shown in the rows above the hint.
        let scroll = lines.count <= height ? 0 : min(wanted, lines.count - (height - 1))
        // Scrolled back: the bottom row is the indicator's own, so that it covers no text.
        let hintRows = scroll > 0 ? 1 : 0
        let visible = Array(lines.dropFirst(scroll).prefix(height - hintRows))
        g.messageScroll = scroll
        // Newest at the bottom of the pane.
        for (i, line) in visible.enumerated() {
            let y = l.contentBottom - 1 - hintRows - i
            if let meta = line.meta {
                g.put(" " + meta, x: l.paneX, y: y, role: background ? .messageDimmed : .messageMeta)
            }
            if let mark = line.mark {
                g.put(mark, x: l.paneX + 7, y: y, role: background ? .messageDimmed : .messageMark)
            }
            let row = scroll + i
            let current = targetLines?.contains(row) == true
            g.put(line.text, x: l.paneX + line.x, y: y, role: current && !background ? .focus : line.role, maxX: l.width)
            if let query = search?.query, let bodyStart = bodyStarts[row] {
                highlight(&g, line.text, query: query, from: bodyStart, x: l.paneX + line.x, y: y, maxX: l.width)
            }
            for link in rowLinks[row] ?? [] {
                let x = l.paneX + line.x + g.columns(String(line.text.prefix(link.start)))
                let width = min(link.count, l.width - x)
                if width > 0 { g.links.append(GridLink(x: x, y: y, width: width, url: link.url, id: link.id)) }
            }
        }

        if list.isEmpty {
            g.put(" no messages yet", x: l.paneX, y: l.contentTop, role: .messageMeta)
        }
        if scroll > 0 {
            let hint = " ↓ \(Words.count(scroll, "line")) below · End "
            g.put(hint, x: max(l.paneX, l.width - TextWidth.of(hint)), y: l.contentBottom - 1, role: .messageMeta, maxX: l.width)
        }
        drawBanners(&g, s, l)
    }

    /// A message's rows, first to last: `who: ` and its body, the body's lines (its new lines
    /// kept, `Newlines.kept`) each wrapped to `width` and the rows after the first indented
    /// under the body, past the sender, so that a message reads as one block (WeeChat aligns
    /// its messages so). A sender too long to indent under (a third of the width) has the
    /// body's rows indented by two. `bodyStart`: the character where the body starts in `text`.
    ///
    /// `fold`: a body of more than `foldsPast` rows shows its first `foldedRows`, and `more`
    /// says what is hidden (`z` shows messages whole). Only what is shown is laid out, so a
    /// message of 16 KiB of emoji or 16 000 lines costs a few rows' work a frame.
    static func messageRows(_ g: Grid, who: String, body: String, width: Int, fold: Bool = false)
        -> (rows: [(text: String, indent: Int, bodyStart: Int)], more: String?) {
        let prefix = who + ": "
        let prefixWidth = g.columns(prefix)
        let underBody = prefixWidth <= width / 3
        let indent = underBody ? prefixWidth : 2
        let bodyWidth = max(1, width - indent)
        var rows: [String] = []
        var rowLine: [Int] = []  // the body's line each row is of
        let most = fold ? foldsPast + 1 : Int.max  // enough to know whether it folds
        var cut = false
        for (n, line) in body.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let room = most - rows.count
            if room <= 0 { cut = true; break }
            // A row holds a character at least: `room` rows of characters cover what `room` rows show.
            let head = fold ? line.prefix(room * bodyWidth) : line
            var wrapped = g.wrap(String(head), width: bodyWidth)
            if wrapped.isEmpty { wrapped = [""] }
            let kept = wrapped.prefix(room)
            rows.append(contentsOf: kept)
            rowLine.append(contentsOf: Array(repeating: n, count: kept.count))
            if wrapped.count > room || head.endIndex != line.endIndex { cut = true; break }
        }
        var more: String?
        if cut {
            rows = Array(rows.prefix(foldedRows))
            let lastLine = rowLine[rows.count - 1]
            let lines = body.utf8.reduce(1) { $1 == 10 ? $0 + 1 : $0 }
            if lines - lastLine - 1 > 0 {
                more = "⋯ \(Words.count(lines - lastLine - 1, "more line")) · z: whole messages"
            } else {
                let shown = rows.reduce(0) { $0 + $1.count }
                more = "⋯ about \(Words.count(max(1, body.count - shown - lastLine), "more character")) · z: whole messages"
            }
        }
        if underBody {
            return ([(prefix + rows[0], 0, prefix.count)] + rows.dropFirst().map { ($0, indent, 0) }, more)
        }
        return (g.wrap(who + ":", width: width).map { ($0, 0, $0.count) } + rows.map { ($0, indent, 0) }, more)
    }

    /// A body of more than this many rows is folded (`messageRows`); a row or two more than
    /// the rows a folded one shows is not worth folding.
    static let foldsPast = 12
    /// The rows a folded message shows.
    static let foldedRows = 10

    /// The links of a message's rows (`messageRows`), by row: each URL of the body (`Links`),
    /// one segment a row it spans, one id across them (the message's id and the URL's place).
    static func linkSegments(_ rows: [(text: String, indent: Int, bodyStart: Int)], body: String, id: String)
        -> [Int: [(start: Int, count: Int, url: String, id: String)]] {
        guard body.contains("http") || body.contains("mailto:") else { return [:] }
        let urls = Links.find(Array(body))
        guard !urls.isEmpty else { return [:] }
        let safe = String(id.unicodeScalars.filter { $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" }.prefix(24))
        var out: [Int: [(start: Int, count: Int, url: String, id: String)]] = [:]
        for seg in Links.segments(rows.map { (Array($0.text), $0.bodyStart) }, urls: urls) {
            out[seg.row, default: []].append((seg.start, seg.count, seg.url, "\(safe)-\(seg.index)"))
        }
        return out
    }

    /// The channel that first brought a message (docs/screen.md).
    static func mark(_ c: Channel) -> String {
        switch c {
        case .realtime: return "r"
        case .push: return "p"
        case .fetch: return "f"
        case .background: return "b"
        case .sent: return "›"
        }
    }

    static func drawBanners(_ g: inout Grid, _ s: ViewState, _ l: Layout) {
        guard s.status.lifecycle == .background else { return }
        let top = l.contentTop
        let head = " background · badge \(s.status.badge) · f: foreground · o: open the latest notification "
        g.fill(x: l.paneX, y: top, width: l.paneWidth, height: 1, role: .statusBackground)
        g.put(TextWidth.truncate(head, to: l.paneWidth), x: l.paneX, y: top, role: .statusBackground)
        for (i, b) in s.banners.suffix(max(0, min(4, l.paneHeight - 2))).reversed().enumerated() {
            let y = top + 1 + i
            let text = " 🔔 " + b.title + ": " + b.body + " "
            let shown = g.truncate(text, to: l.paneWidth - 2)
            g.fill(x: l.paneX + 1, y: y, width: g.columns(shown), height: 1, role: .banner)
            g.put(shown, x: l.paneX + 1, y: y, role: .banner)
        }
    }
}
