import SyncCore

/// The timeline strip (`T`): the last hour in cells, one column per stretch of time, newest on
/// the right — what `simulate --chart` draws, readable without colour too — and under it a key,
/// glyph by glyph:
///
///     ─ timeline: the last hour, 1m a column · T hides ──── −60m … now ─
///         app ······▓▓▓▓▓▓·········
///        push ━━━━━━━━━━━▬▬▬▬▬━━━━━
///       syncs ●    ×  ░░░░●░░  ▲
///         req █    ▁      ▃    ▁
///         key · fore ▓ back  ━ reliable ┄ unknown ▬ unreliable  ● full ▲ targeted ▪ light × skipped ░ fault  ▁…█ requests
extension Render {
    static let stripRows = 6

    /// The key line under the strip: each glyph and what it means, in the order of the rows.
    static let stripKey = "· fore ▓ back  ━ reliable ┄ unknown ▬ unreliable  ● full ▲ targeted ▪ light × skipped ░ fault  ▁…█ requests"

    static func drawTimeline(_ g: inout Grid, _ s: ViewState, _ l: Layout) {
        let y = l.stripTop
        let labelWidth = 8
        let columns = max(1, l.width - labelWidth - 1)
        let now = s.status.clock
        let cells = s.timeline.columns(columns, now: now)
        let minutes = Double(TimelineStrip.window.milliseconds) / 60_000 / Double(columns)
        let each = minutes >= 1 ? "\(Int(minutes.rounded()))m" : "\(Int((minutes * 60).rounded()))s"
        let title = "─ timeline: the last hour, \(each) a column · T hides "
        g.fill(x: 0, y: y, width: l.width, height: 1, role: .logTitle)
        let after = g.put(TextWidth.truncate(title, to: l.width), x: 0, y: y, role: .logTitle)
        let scale = " −60m … now ─"
        g.put(String(repeating: "─", count: max(0, l.width - after)), x: after, y: y, role: .logTitle)
        if l.width - after > TextWidth.of(scale) + 2 { g.put(scale, x: l.width - TextWidth.of(scale), y: y, role: .logTitle) }
        for (row, label) in ["app", "push", "syncs", "req", "key"].enumerated() {
            let name = String(repeating: " ", count: labelWidth - label.count - 1) + label + " "
            g.put(name, x: 0, y: y + 1 + row, role: .messageMeta)
        }
        g.put(g.truncate(Self.stripKey, to: max(0, l.width - labelWidth)), x: labelWidth, y: y + 5, role: .messageMeta)
        let peak = max(1, cells.map(\.requests).max() ?? 1)
        let bars = Array("▁▂▃▄▅▆▇█")
        for (c, cell) in cells.enumerated() {
            let x = labelWidth + c
            switch cell.lifecycle {
            case .background?: g.put("▓", x: x, y: y + 1, role: .statusBackground)
            case .foreground?: g.put("·", x: x, y: y + 1, role: .messageMeta)
            default: break
            }
            switch cell.push {
            case .reliable?: g.put("━", x: x, y: y + 2, role: .statusPushReliable)
            case .unknown?: g.put("┄", x: x, y: y + 2, role: .statusPushUnknown)
            case .unreliable?: g.put("▬", x: x, y: y + 2, role: .statusPushUnreliable)
            case .disabled?, nil: break
            }
            if let mark = cell.mark {
                let glyph: String
                switch mark {
                case .full: glyph = "●"
                case .targeted: glyph = "▲"
                case .light: glyph = "▪"
                case .skipped: glyph = "×"
                }
                g.put(glyph, x: x, y: y + 3, role: cell.fault ? .warning : .logLine)
            } else if cell.fault {
                g.put("░", x: x, y: y + 3, role: .warning)
            }
            if cell.requests > 0 {
                let level = min(bars.count - 1, max(0, Int((Double(cell.requests) / Double(peak) * Double(bars.count)).rounded(.up)) - 1))
                g.put(String(bars[level]), x: x, y: y + 4, role: .logLine)
            }
        }
    }
}
