import SyncCore
import SyncEngine

/// One line of the sync log as the view keeps it: structured, so that the filter and the
/// folding read fields, never the text. The text is the engine's own line,
/// made visible-safe by the event, the same words `--log` writes.
public struct LogEntry: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        /// An engine decision (or a fault of the world, a banner, an error).
        case decision
        /// A message arrived, with its channel (`message 7c12d26f from alice (contextual) via push`).
        case arrival
        /// An observation hit (rule 2): folded when several follow each other.
        case hit(txId: String, pushOffset: Interval, via: EvidenceChannel)
        /// The app's own words (a theme warning, say).
        case notice
    }

    /// `HH:MM:SS` on the world's clock, for a notice too (one clock on every row).
    public var time: String
    public var text: String
    public var kind: Kind

    public init(time: String, text: String, kind: Kind) {
        self.time = time
        self.text = text
        self.kind = kind
    }

    var isHit: Bool { if case .hit = kind { true } else { false } }
}

/// What the log pane shows: the decisions, or everything (message arrivals too).
public enum LogFilter: String, Sendable {
    case decisions, all

    public func shows(_ e: LogEntry) -> Bool { self == .all || e.kind != .arrival }
}

/// The log pane's rows, from the entries: filtered, consecutive observation hits folded into
/// one line, wrapped by display width (continuation rows indented under the text). Pure and
/// lazy: it walks from the newest entry back only until it has `needed` rows, so a frame
/// costs what it shows, however long the log.
enum LogPane {
    struct Row: Equatable {
        var text: String
        var indent: Int
    }

    /// Rows, newest first: the `needed` rows after the newest `skip` (scrolled away), which
    /// are only counted, never built.
    static func rows(_ entries: ArraySlice<LogEntry>, filter: LogFilter, width: Int, needed: Int, skip: Int = 0, emoji: EmojiWidths = .safe) -> [Row] {
        var out: [Row] = []
        var skipped = 0
        var i = entries.endIndex - 1
        while i >= entries.startIndex, out.count < needed {
            let e = entries[i]
            guard filter.shows(e) else { i -= 1; continue }
            let line: (time: String, text: String)
            if e.isHit {
                // The run of hits this one ends, in the filter's view (arrivals between hits
                // are not in the decisions view, so they do not break the run there).
                var group = [e]
                var j = i - 1
                while j >= entries.startIndex {
                    let f = entries[j]
                    if !filter.shows(f) { j -= 1; continue }
                    guard f.isHit else { break }
                    group.append(f)
                    j -= 1
                }
                line = group.count == 1 ? (e.time, e.text) : (e.time, folded(group))
                i = j
            } else {
                line = (e.time, e.text)
                i -= 1
            }
            let indent = line.time.isEmpty ? 0 : TextWidth.of(line.time) + 1
            if skipped < skip {
                let count = TextWidth.wrappedRowCount(line.text, width: max(10, width - indent), emoji: emoji)
                if skipped + count <= skip { skipped += count; continue }
            }
            let parts = TextWidth.wrap(line.text, width: max(10, width - indent), emoji: emoji)
            for (k, part) in parts.enumerated().reversed() {
                if skipped < skip { skipped += 1; continue }
                out.append(Row(text: k == 0 && indent > 0 ? line.time + " " + part : part, indent: k == 0 ? 0 : indent))
            }
        }
        return out
    }

    /// `observation hit ×7 since 08:01:57 (realtime): push 0.8s–2.6s after realtime, last 7c12d26f`.
    /// `group`: newest first.
    static func folded(_ group: [LogEntry]) -> String {
        var offsets: [Interval] = []
        var vias: [EvidenceChannel] = []
        for e in group {
            guard case .hit(_, let offset, let via) = e.kind else { continue }
            offsets.append(offset)
            if !vias.contains(via) { vias.append(via) }
        }
        guard let low = offsets.min(), let high = offsets.max(), case .hit(let last, _, _) = group[0].kind else { return group[0].text }
        func word(_ i: Interval) -> String {
            i.milliseconds < 0 ? "\(Interval(milliseconds: -i.milliseconds)) before" : "\(i) after"
        }
        let span = low == high ? word(low) : low.milliseconds >= 0 ? "\(low)–\(high) after" : "from \(word(low)) to \(word(high))"
        let since = group.last.map { $0.time.isEmpty ? "" : " since \($0.time)" } ?? ""
        let channel = vias.map(\.rawValue).sorted().joined(separator: ", ")
        return "observation hit ×\(group.count)\(since) (\(channel)): push \(span) the tx, last \(last.prefix(8))"
    }
}
