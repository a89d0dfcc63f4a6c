import SyncCore
import SyncEngine

/// The inspector (`i`): the engine's state as its `.inspection` event said it, in place of
/// the message pane. Sections are titled literally `push`, `gate`, `cursors`, `timers` and
/// `faults` (issue 14), so that people and scripts can find them; times left are counted
/// against the world's clock on the status bar.
extension Render {
    struct InspectorLine: Equatable {
        var text: String
        var role: Role
    }

    /// The inspector's sections, each a title and its lines (pure: from the view state).
    static func inspectorSections(_ s: ViewState) -> [(title: String, lines: [InspectorLine])] {
        guard let i = s.inspection else {
            return [("push", [.init(text: "waiting for the engine…", role: .messageMeta)])]
        }
        let now = s.status.clock
        func left(_ at: Instant) -> String { at > now ? "in " + rounded(at - now) : "due" }
        func ago(_ at: Instant) -> String { rounded(now - at) + " ago" }
        func line(_ text: String, _ role: Role = .normal) -> InspectorLine { InspectorLine(text: text, role: role) }

        var push: [InspectorLine] = []
        let pushRole: Role = i.push.state == .unreliable ? .statusPushUnreliable : i.push.state == .reliable ? .statusPushReliable : .normal
        push.append(line("state \(i.push.state.rawValue), " + (i.push.misses <= i.push.missThreshold ? "misses \(i.push.misses)/\(i.push.missThreshold)" : "\(i.push.misses) consecutive misses"), pushRole))
        if let why = i.push.notOperational { push.append(line("not operational: \(why)", .messageMeta)) }
        let paused = i.push.suspended && !i.push.pending.isEmpty ? " (app suspended: graces wait)" : ""
        push.append(line("waiting for push: \(i.push.pending.count)" + paused))
        let shown = 4
        for p in i.push.pending.prefix(shown) {
            let time = i.push.suspended ? "waits" : p.graceEndsAt > now ? rounded(p.graceEndsAt - now) + " left" : "due"
            push.append(line("  " + String(p.txId.prefix(8)) + " " + p.via.rawValue + " " + time))
        }
        if i.push.pending.count > shown { push.append(line("  … \(i.push.pending.count - shown) more", .messageMeta)) }
        if i.push.unmatchedPushes > 0 { push.append(line("pushes before their tx: \(i.push.unmatchedPushes)")) }
        push.append(line("re-registered " + (i.push.lastReregisterAt.map(ago) ?? "never")))

        var gate: [InspectorLine] = []
        var last = "last catch-up " + (i.gate.lastCatchUpAt.map(ago) ?? "never")
        if let full = i.gate.lastFullSyncAt, full != i.gate.lastCatchUpAt { last += ", full " + ago(full) }
        gate.append(line(last))
        gate.append(line("debounce " + (i.gate.debounceEndsAt.map { $0 > now ? rounded($0 - now) + " left" : "over" } ?? "none")))
        if i.gate.running.isEmpty { gate.append(line("running: none")) }
        for r in i.gate.running {
            gate.append(line("running \(r.kind.rawValue) (\(r.trigger))\(r.forced ? " forced" : ""), \(rounded(now - r.startedAt))", .statusRealtimeDegraded))
            gate.append(line("  \(Words.count(r.outstanding, "request")) out, \(r.stored) stored"))
            if !r.joined.isEmpty { gate.append(line("  joined: " + r.joined.joined(separator: ", "))) }
        }
        gate.append(line("trailing " + (i.gate.trailingAt.map(left) ?? "none")))
        if let owed = i.gate.owed {
            let when = i.gate.retryAt.map(left) ?? "when allowed"
            gate.append(line("retry \(owed.kind.rawValue)\(owed.forced ? " forced" : "") \(when) (\(i.gate.retriesInARow) failed)", .warning))
        } else {
            gate.append(line("retry none"))
        }

        var cursors: [InspectorLine] = []
        func cursorText(_ at: Instant?) -> String { at.map(Clock.time) ?? "—" }
        var byConversation: [Address: (incoming: Instant?, outgoing: Instant?)] = [:]
        var order: [Address] = []
        var handshakes: (incoming: Instant?, outgoing: Instant?) = (nil, nil)
        for c in i.cursors {
            switch c.object {
            case .handshakes(let d):
                if d == .incoming { handshakes.incoming = c.at } else { handshakes.outgoing = c.at }
            case .contextual(let a, let d):
                if byConversation[a] == nil { order.append(a) }
                var pair = byConversation[a] ?? (nil, nil)
                if d == .incoming { pair.incoming = c.at } else { pair.outgoing = c.at }
                byConversation[a] = pair
            case .payments:
                cursors.append(line("payments".padding(toLength: 12, withPad: " ", startingAt: 0) + cursorText(c.at)))
            }
        }
        func pairLine(_ name: String, _ pair: (incoming: Instant?, outgoing: Instant?)) -> InspectorLine {
            let label = TextWidth.truncate(name, to: 11)
            let pad = String(repeating: " ", count: max(0, 12 - TextWidth.of(label)))
            return line(label + pad + "in " + cursorText(pair.incoming) + "  out " + cursorText(pair.outgoing))
        }
        cursors.insert(pairLine("handshakes", handshakes), at: 0)
        let names = Dictionary(s.conversations.map { ($0.address, $0.name) }, uniquingKeysWith: { a, _ in a })
        for a in order {
            let name = names[a] ?? String(a.value.prefix(10))
            cursors.append(pairLine(name, byConversation[a] ?? (nil, nil)))
        }

        var timers: [InspectorLine] = []
        let t = i.timers
        timers.append(line("poll        " + (t.polling ? (t.nextPollAt.map(left) ?? "after the running sync") : "off")))
        let refresh: String
        if let end = t.refreshBudgetEndsAt {
            refresh = "running, budget " + (end > now ? rounded(end - now) + " left" : "over")
        } else if t.refreshRequested {
            refresh = "asked of the OS" + (t.refreshEarliest.map { ", not before " + ($0 > now ? "in " + rounded($0 - now) : "now") } ?? "")
        } else {
            refresh = "not asked"
        }
        timers.append(line("refresh     " + refresh))
        let c = t.connection
        timers.append(line("reconnect   " + (c.reconnectAt.map { left($0) + " (\(c.reconnectFailures) failed)" } ?? (c.reconnectFailures > 0 ? "attempt \(c.reconnectFailures + 1) running" : "—"))))
        let keepalive = c.keepaliveAnswerBy.map { "answer due " + left($0) } ?? c.keepalivePingAt.map { "ping " + left($0) } ?? "off"
        timers.append(line("keepalive   " + keepalive))
        timers.append(line("recovery    " + (c.recoveryFallbackAt.map { "fallback " + left($0) } ?? "—")))
        if let at = t.storeRetryAt { timers.append(line("store retry " + left(at), .warning)) }

        let faults = s.status.faults.isEmpty ? [line("none", .messageMeta)] : s.status.faults.map { line($0, .warning) }
        return [("push", push), ("gate", gate), ("cursors", cursors), ("timers", timers), ("faults", faults)]
    }

    /// Draws the sections in columns over the message pane's area: a section starts a new
    /// column rather than break (unless it is taller than a column); what does not fit at
    /// all says how much is left out.
    static func drawInspector(_ g: inout Grid, _ s: ViewState, _ l: Layout) {
        let height = l.paneHeight
        guard height > 0 else { return }
        let columns = max(1, min(3, l.paneWidth / 38))
        let columnWidth = l.paneWidth / columns
        var placed: [(column: Int, row: Int, line: InspectorLine)] = []
        var column = 0, row = 0, left = 0
        for section in inspectorSections(s) {
            let block = [InspectorLine(text: "── " + section.title + " ──", role: .logTitle)] + section.lines
            if row > 0, row + 1 + block.count > height, column + 1 < columns { column += 1; row = 0 }
            if row > 0 { row += 1 }  // a blank row between sections
            for line in block {
                if row >= height, column + 1 < columns { column += 1; row = 0 }
                if row >= height { left += 1; continue }
                placed.append((column, row, line))
                row += 1
            }
        }
        if left > 0, let last = placed.indices.last {
            placed[last].line = InspectorLine(text: "… \(left + 1) more lines: enlarge the terminal", role: .messageMeta)
        }
        for p in placed {
            let x = l.paneX + 1 + p.column * columnWidth
            g.put(TextWidth.truncate(p.line.text, to: columnWidth - 2), x: x, y: l.contentTop + p.row, role: p.line.role, maxX: x + columnWidth - 1)
        }
    }
}
