import Foundation

/// The soak's report: the figures printed, and written to `--out` as JSON with an SVG timeline
/// (faults as bands, each process's resident memory as a line).
extension SoakChecker {
    /// `requests`: the bots' last runs' backend requests, and the messages delivered to them.
    func report(_ all: [Figures], requests: (count: Int, delivered: Int)) -> Bool {
        let total = all.reduce(into: Figures(name: "total")) { t, f in
            t.sent += f.sent; t.confirmed += f.confirmed; t.lost += f.lost; t.unexpected += f.unexpected
            t.duplicated += f.duplicated; t.unconfirmed += f.unconfirmed; t.unseenSent += f.unseenSent; t.failedOutside += f.failedOutside
            t.failedInside += f.failedInside; t.latencies += f.latencies; t.deliveries += f.deliveries; t.examples += f.examples
        }
        let converged = all.compactMap(\.convergence)
        let delivered = total.latencies.count
        func q(_ p: Double) -> Double { total.latencies.isEmpty ? 0 : percentile(total.latencies, p) }
        row("clients judged", "\(all.count)")
        row("messages sent (the ledger's outgoing)", "\(total.sent)")
        row("confirmed (in the sender's store)", "\(total.confirmed)")
        row("sent, not in the sender's own store", "\(total.unseenSent)", "goal 0")
        row("delivered (in a recipient's store)", "\(delivered)")
        row("lost", "\(total.lost)", "goal 0")
        row("unexpected", "\(total.unexpected)", "goal 0")
        row("duplicated", "\(total.duplicated)", "goal 0")
        row("shown as sent, never confirmed", "\(total.unconfirmed)", "goal 0")
        row("failed requests outside fault windows", "\(total.failedOutside)", "goal 0 (\(total.failedInside) inside)")
        row("clients converged after the quiet period began", "\(converged.count) of \(all.count)",
            converged.isEmpty ? "" : String(format: "slowest %.1f s (goal ≤ 30)", converged.max()!))
        row("latency p50 / p95 / p99 / max (s)", String(format: "%.1f/%.0f/%.0f/%.0f", q(0.5), q(0.95), q(0.99), total.latencies.max() ?? 0))
        row("requests per message delivered (bots' last runs)", requests.delivered == 0 ? "-" : String(format: "%.2f", Double(requests.count) / Double(requests.delivered)))
        let serverRSS = run.server.rss
        if let first5 = serverRSS.first(where: { $0.at >= 300 }) ?? serverRSS.first, let last = serverRSS.last {
            row("server RSS: after 5 min → at the end", String(format: "%.1f → %.1f MB", first5.mb, last.mb), "goal within 20 MB")
        }
        // From its first sample after 5 minutes (or its first) to its last: a process restarted
        // in between starts again small, so its samples after its last start count.
        let growth = (run.bots + run.tuis).map { p -> Double in
            let live = p.rss.filter { $0.mb > 0 }
            guard let a = live.first(where: { $0.at >= 300 }) ?? live.first, let b = live.last else { return 0 }
            return b.mb - a.mb
        }
        row("connections through the proxy / reset / cut", "\(run.wire.accepted) / \(run.wire.resets) / \(run.wire.cuts)")
        row("largest client growth (RSS)", String(format: "%.1f MB", growth.max() ?? 0), "goal ≤ 10 MB")
        for e in total.examples.prefix(5) { say("  \(e)") }
        row("processes left behind", "\(leftBehind())", "goal 0")
        writeJSON(all, total: total, requests: requests, converged: converged)
        writeSVG(total.deliveries)
        say("report: \(run.dir)/report.json, \(run.dir)/timeline.svg")
        return total.lost == 0 && total.unexpected == 0 && total.duplicated == 0 && total.unconfirmed == 0 && total.unseenSent == 0 && total.failedOutside == 0
    }

    /// Processes still running whose command line names the soak's folder (but this one).
    private func leftBehind() -> Int {
        let me = "\(getpid())"
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return pids.filter { $0 != me && $0.allSatisfy(\.isNumber) }.filter { pid in
            guard let raw = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            return String(decoding: raw, as: UTF8.self).contains(run.dir + "/")
        }.count
    }

    private func writeJSON(_ all: [Figures], total: Figures, requests: (count: Int, delivered: Int), converged: [Double]) {
        func figures(_ f: Figures) -> [String: Any] {
            let l = f.latencies
            func q(_ p: Double) -> Double { l.isEmpty ? 0 : percentile(l, p) }
            return ["name": f.name, "sent": f.sent, "confirmed": f.confirmed, "delivered": l.count, "lost": f.lost,
                    "unexpected": f.unexpected, "duplicated": f.duplicated, "shown_sent_never_confirmed": f.unconfirmed, "sent_not_in_own_store": f.unseenSent,
                    "failed_outside_faults": f.failedOutside, "failed_inside_faults": f.failedInside,
                    "converged_after_s": f.convergence as Any, "latency_s": ["p50": q(0.5), "p95": q(0.95), "p99": q(0.99), "max": l.max() ?? 0]]
        }
        let processes = [run.server!] + run.bots + run.tuis
        let json: [String: Any] = [
            "settings": ["minutes": run.settings.minutes, "bots": run.settings.bots, "tuis": run.settings.tuis, "seed": run.settings.seed,
                         "quiet_s": run.settings.quiet],
            "total": figures(total), "clients": all.map(figures),
            "bot_requests": requests.count,
            "proxy": ["connections": run.wire.accepted, "reset": run.wire.resets, "cut": run.wire.cuts], "requests_per_delivered": requests.delivered == 0 ? 0 : Double(requests.count) / Double(requests.delivered),
            "faults": faults.map { ["what": $0.what, "on": $0.on, "start_s": $0.start, "end_s": $0.end, "window_end_s": $0.windowEnd] },
            "rss_mb": Dictionary(uniqueKeysWithValues: processes.map { p in (p.name, p.rss.map { [$0.at, $0.mb] }) }),
            "restarts": Dictionary(uniqueKeysWithValues: processes.map { ($0.name, $0.incarnation - 1) }),
        ]
        if let data = try? JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys]) {
            _ = FileManager.default.createFile(atPath: run.dir + "/report.json", contents: data)
        }
    }

    /// Faults as bands on their rows (the server's on top), each delivery as a dot at the time it
    /// reached a store and the height of its latency (log scale), and resident memory as lines.
    private func writeSVG(_ deliveries: [(at: Double, latency: Double)]) {
        let end = max(run.wall, 1)
        let width = 1000.0, left = 120.0, plot = width - left - 20
        func x(_ t: Double) -> Double { left + plot * t / end }
        let names = ["server"] + run.bots.map(\.name) + run.tuis.map(\.name)
        let rowHeight = max(3.0, min(12.0, 400.0 / Double(names.count)))
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(Double(names.count) * rowHeight + 440))\" font-family=\"sans-serif\" font-size=\"11\">\n"
        svg += "<text x=\"10\" y=\"14\">synchat soak, seed \(run.settings.seed): faults by process (bands), deliveries by latency (dots), resident memory (lines)</text>\n"
        for (i, name) in names.enumerated() where rowHeight >= 8 || i == 0 {
            svg += "<text x=\"10\" y=\"\(30 + Double(i) * rowHeight + rowHeight - 2)\">\(name)</text>\n"
        }
        for f in faults {
            let rows = f.on.isEmpty ? Array(names.indices) : f.on.compactMap { names.firstIndex(of: $0) }
            let color = f.what.hasPrefix("server") ? "#d62728" : f.what.contains("SIGSTOP") ? "#9467bd" : f.what.contains("kill") ? "#ff7f0e" : f.what.hasPrefix("connections") || f.what.contains("cut") ? "#8c564b" : "#1f77b4"
            for r in rows {
                svg += "<rect x=\"\(x(f.start))\" y=\"\(30 + Double(r) * rowHeight)\" width=\"\(max(1, x(f.end) - x(f.start)))\" height=\"\(rowHeight - 1)\" fill=\"\(color)\" fill-opacity=\"0.5\"><title>\(f.what)</title></rect>\n"
            }
        }
        let lTop = 40 + Double(names.count) * rowHeight, lHeight = 160.0
        let slowest = max(10, deliveries.map(\.latency).max() ?? 10)
        func y(_ latency: Double) -> Double { lTop + lHeight - lHeight * log10(1 + max(0, latency)) / log10(1 + slowest) }
        svg += "<text x=\"10\" y=\"\(lTop + 12)\">latency, 0–\(Int(slowest)) s (log)</text>\n"
        for mark in [1.0, 10, 60, 600] where mark <= slowest {
            svg += "<text x=\"\(left - 30)\" y=\"\(y(mark) + 4)\">\(Int(mark)) s</text><line x1=\"\(left)\" x2=\"\(width - 20)\" y1=\"\(y(mark))\" y2=\"\(y(mark))\" stroke=\"#ddd\"/>\n"
        }
        for d in deliveries {
            svg += "<circle cx=\"\(x(d.at))\" cy=\"\(y(d.latency))\" r=\"1.5\" fill=\"#17becf\"/>\n"
        }
        let top = lTop + lHeight + 20, height = 200.0
        let processes = [run.server!] + run.bots + run.tuis
        let most = max(1, processes.flatMap { $0.rss.map(\.mb) }.max() ?? 1)
        svg += "<text x=\"10\" y=\"\(top + 12)\">RSS, 0–\(Int(most)) MB</text>\n"
        for p in processes where p.rss.count > 1 {
            let points = p.rss.map { "\(x($0.at)),\(top + height - height * $0.mb / most)" }.joined(separator: " ")
            svg += "<polyline points=\"\(points)\" fill=\"none\" stroke=\"\(p.kind == .server ? "#d62728" : p.kind == .tui ? "#2ca02c" : "#7f7f7f")\" stroke-width=\"1\"/>\n"
        }
        svg += "</svg>\n"
        try? svg.write(toFile: run.dir + "/timeline.svg", atomically: true, encoding: .utf8)
    }
}
