import ClientRuntime
import SyncCore
import SyncEngine

/// The inspector (`i`): the engine's state as its `.inspection` event said it, in place of
/// the message pane. Sections are titled literally `push`, `gate`, `cursors`, `timers` and
/// `faults`, so that people and scripts can find them; times left are counted
/// against the world's clock on the status bar.
extension Render {
    struct InspectorLine: Equatable {
        var text: String
        var role: Role
    }

    /// The inspector's sections, each a title and its lines (pure: from the view state).
    static func inspectorSections(_ s: ViewState) -> [(title: String, lines: [InspectorLine])] {
        guard let i = s.inspection else {
            return [("push", [.init(text: "waiting for the engine…", role: .messageMeta)]), ("truth", truthLines(s))]
        }
        let now = s.status.clock
        func left(_ at: Instant) -> String { at > now ? "in " + rounded(at - now) : "due" }
        func ago(_ at: Instant) -> String { rounded(now - at) + " ago" }
        func line(_ text: String, _ role: Role = .normal) -> InspectorLine { InspectorLine(text: text, role: role) }

        var push: [InspectorLine] = []
        let pushRole: Role = i.push.state == .unreliable ? .statusPushUnreliable : i.push.state == .reliable ? .statusPushReliable : .normal
        push.append(line("state \(i.push.state.rawValue), " + (i.push.misses <= i.push.missThreshold ? "misses " : "") + missWords(i.push.misses, threshold: i.push.missThreshold), pushRole))
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
            gate.append(line("running \(r.kind.rawValue) (\(r.trigger.rawValue))\(r.forced ? " forced" : ""), \(rounded(now - r.startedAt))", .statusRealtimeDegraded))
            gate.append(line("  \(Words.count(r.outstanding, "request")) out, \(r.stored) stored"))
            if !r.joined.isEmpty { gate.append(line("  joined: " + r.joined.map(\.rawValue).joined(separator: ", "))) }
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
            let label = TextWidth.truncate(name, to: 11, emoji: s.emojiWidths)
            let pad = String(repeating: " ", count: max(0, 12 - TextWidth.of(label, emoji: s.emojiWidths)))
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

        let faults = s.status.faults.isEmpty ? [line("none", .messageMeta)] : s.status.faults.words.map { line($0, .warning) }
        return [("push", push), ("gate", gate), ("cursors", cursors), ("timers", timers), ("faults", faults), ("truth", truthLines(s))]
    }

    /// Truth beside belief: each channel as the world has it, as the engine believes it, and
    /// since when the two have differed.
    static func truthLines(_ s: ViewState) -> [InspectorLine] {
        guard s.status.knowsTruth else { return [InspectorLine(text: "the server's truth is not known here", role: .messageMeta)] }
        let st = s.status.engine, truth = s.status.truth
        let differ = truth.unnoticed
        return BeliefLag.Kind.allCases.flatMap { kind -> [InspectorLine] in
            let engine: String
            switch kind {
            case .push: engine = st.push.rawValue
            case .realtime, .network: engine = st.realtime.rawValue
            case .token: engine = st.token.rawValue
            }
            let label = kind.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)
            let world = truth.broken[kind] ?? "ok"
            if let since = differ[kind] {
                // Two lines, so that a column of 36 holds them: the world's truth, then the belief.
                return [InspectorLine(text: label + world, role: .statusTruth),
                        InspectorLine(text: String(repeating: " ", count: 9) + "engine: \(engine), \(lasted(s.status.clock - since)) behind", role: .statusTruth)]
            }
            return [InspectorLine(text: label + world + ", engine: " + engine, role: .logLine)]
        }
    }

    /// Which sections each column holds, by the number of columns: fixed, so that a section
    /// never moves to another column as the content changes from one step to the next (it
    /// flowed into the next column when the one before grew).
    static func inspectorColumns(_ columns: Int) -> [[String]] {
        switch columns {
        // The sections that grow with the world (cursors: a line a contact) come last in theirs.
        case 3...: return [["push", "gate"], ["truth", "faults", "timers"], ["cursors"]]
        case 2: return [["push", "gate"], ["truth", "faults", "timers", "cursors"]]
        default: return [["push", "truth", "faults", "gate", "timers", "cursors"]]
        }
    }

    /// Draws the sections in their columns (`inspectorColumns`) over the message pane's area;
    /// a column whose sections do not fit says how many lines it leaves out.
    static func drawInspector(_ g: inout Grid, _ s: ViewState, _ l: Layout) {
        let height = l.paneHeight
        guard height > 0 else { return }
        let columns = max(1, min(3, l.paneWidth / 38))
        let columnWidth = l.paneWidth / columns
        let sections = Dictionary(inspectorSections(s).map { ($0.title, $0.lines) }, uniquingKeysWith: { a, _ in a })
        for (column, titles) in inspectorColumns(columns).enumerated() {
            var lines: [InspectorLine] = []
            for title in titles {
                guard let body = sections[title] else { continue }
                if !lines.isEmpty { lines.append(InspectorLine(text: "", role: .messageMeta)) }  // a blank row between sections
                lines.append(InspectorLine(text: "── " + title + " ──", role: .logTitle))
                lines += body
            }
            if lines.count > height {
                let left = lines.count - height + 1
                lines = Array(lines.prefix(height - 1)) + [InspectorLine(text: "… \(Words.count(left, "more line")): enlarge the terminal", role: .messageMeta)]
            }
            let x = l.paneX + 1 + column * columnWidth
            for (row, line) in lines.enumerated() {
                g.put(g.truncate(line.text, to: columnWidth - 2), x: x, y: l.contentTop + row, role: line.role, maxX: x + columnWidth - 1)
            }
        }
    }
}
