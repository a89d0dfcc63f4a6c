import ChatStore
import Foundation
import Spawn
import SyncCore

/// The soak's judge, from outside: each client's store against the server's ledger
/// (`/admin/truth`), message by message, as Jepsen's set-full checker reads each element's
/// timeline. Per client and in total: sent, confirmed, sent and missing from its sender's
/// store, lost, unexpected, duplicated, shown as sent but never confirmed, failed requests outside every fault window, when the client had
/// everything due (convergence), latency quantiles, and requests per delivered message.
struct SoakChecker {
    let run: SoakRun
    let faults: [SoakNemesis.Fault]
    /// The world's instant the quiet period began: a message that landed before it must be in
    /// every store it was sent to by the end.
    let quietStartWorld: Int64

    /// What one client holds, as read from its report (a bot) or its store (a TUI).
    struct Held {
        var stored: [(txId: String, incoming: Bool, blockTime: Int64, receivedAt: Int64)] = []
        var duplicates = 0
        /// Backend requests its last run made (a bot's report; a TUI's are not counted).
        var requests = 0
    }

    struct Figures {
        var name = ""
        var sent = 0, confirmed = 0, lost = 0, unexpected = 0, duplicated = 0, unconfirmed = 0
        /// Sent before the quiet period and not in the sender's own store: a message the world
        /// holds in its name that its client never shows (a line published twice, of which the
        /// client was told one; or an own message its catch-up never brought back).
        var unseenSent = 0
        var failedOutside = 0, failedInside = 0
        var convergence: Double?  // seconds after the quiet period began; nil: never
        var latencies: [Double] = []
        /// Each delivery counted in `latencies`: when it reached the store (wall seconds) and its latency.
        var deliveries: [(at: Double, latency: Double)] = []
        var examples: [String] = []
    }

    init(run: SoakRun, faults: [SoakNemesis.Fault], quietStartWorld: Int64) {
        self.run = run
        self.faults = faults
        self.quietStartWorld = quietStartWorld
    }

    /// Stops every client as a person would (SIGTERM: a bot writes its report; `q` in a TUI),
    /// reads what each holds, judges, prints and writes the report. True when nothing was
    /// lost, unexpected, duplicated or shown sent and never confirmed, and no request failed
    /// outside a fault window.
    mutating func finish() -> Bool {
        for tui in run.tuis {
            tui.rss.append((run.wall, tui.rssMB))
            try? String(run.screen(tui)).write(toFile: run.dir + "/\(tui.name)-last-screen.txt", atomically: true, encoding: .utf8)
            _ = sh("\(run.tmux) send-keys -t \(tui.name) Escape q q")
        }
        for bot in run.bots { bot.signal(SIGTERM) }
        for bot in run.bots where bot.pid > 0 { _ = ChildProcess.wait(bot.pid) }
        usleep(1_000_000)
        // The ledger is read once every client has stopped sending: read before, a message a
        // bot sent in its last moments is in its store and not in the ledger read.
        var ledgers: [String: [[String: Any]]] = [:]
        for p in run.bots + run.tuis { ledgers[p.name] = run.truth(p.name)?["ledger"] as? [[String: Any]] ?? [] }
        run.wire = run.proxy.figures
        run.stopAll()
        var all: [Figures] = []
        var requests = 0, deliveredToBots = 0
        for p in run.bots + run.tuis {
            let held = p.kind == .bot ? bot(p) : tui(p)
            let f = judge(p, held, ledgers[p.name] ?? [])
            if p.kind == .bot {
                requests += held.requests
                deliveredToBots += f.latencies.count
            }
            all.append(f)
        }
        return report(all, requests: (requests, deliveredToBots))
    }

    /// A bot's last report (its store is in memory: a bot killed with -9 starts again empty and
    /// catches up, and its last incarnation's report holds everything).
    func bot(_ p: SoakProcess) -> Held {
        let file = run.dir + "/bots/\(p.name)/report-\(p.incarnation).json"
        guard let data = FileManager.default.contents(atPath: file),
              let report = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return Held() }
        var held = Held(duplicates: report["duplicates"] as? Int ?? 0, requests: report["requests"] as? Int ?? 0)
        for m in report["messages"] as? [[String: Any]] ?? [] {
            guard let id = m["txId"] as? String else { continue }
            held.stored.append((id, m["direction"] as? String == "incoming", Int64(m["blockTime"] as? Int ?? 0), Int64(m["receivedAt"] as? Int ?? 0)))
        }
        return held
    }

    /// A TUI's profile store, read as the app left it.
    func tui(_ p: SoakProcess) -> Held {
        let path = run.dir + "/tuis/\(p.name)/synchat/\(p.name).sqlite"
        guard FileManager.default.fileExists(atPath: path), let store = try? SQLiteChatStorage.open(path: path) else { return Held() }
        var held = Held(duplicates: store.duplicateCount())
        for m in store.allMessages() {
            held.stored.append((m.txId, m.message.direction == .incoming, m.message.blockTime.milliseconds, m.receivedAt.milliseconds))
        }
        return held
    }

    func judge(_ p: SoakProcess, _ held: Held, _ ledger: [[String: Any]]) -> Figures {
        var f = Figures(name: p.name)
        var inLedger: [String: (incoming: Bool, blockTime: Int64)] = [:]
        for m in ledger {
            guard let id = m["txId"] as? String else { continue }
            inLedger[id] = (m["direction"] as? String == "incoming", Int64(m["blockTime"] as? Int ?? 0))
        }
        let stored = Dictionary(held.stored.map { ($0.txId, $0) }, uniquingKeysWith: { a, _ in a })
        f.duplicated = held.duplicates + (held.stored.count - stored.count)
        f.sent = inLedger.values.filter { !$0.incoming }.count
        f.confirmed = held.stored.filter { !$0.incoming && inLedger[$0.txId] != nil }.count
        f.unconfirmed = held.stored.filter { !$0.incoming && inLedger[$0.txId] == nil }.count
        f.unexpected = held.stored.filter { $0.incoming && inLedger[$0.txId] == nil }.count
        let unseen = inLedger.filter { !$0.value.incoming && $0.value.blockTime < quietStartWorld && stored[$0.key] == nil }
        f.unseenSent = unseen.count
        f.examples += unseen.keys.sorted().prefix(3).map { "sent \($0) is not in \(p.name)'s own store (landed \(unseen[$0]!.blockTime))" }
        let due = inLedger.filter { $0.value.incoming && $0.value.blockTime < quietStartWorld }
        let missing = due.keys.filter { stored[$0] == nil }
        f.lost = missing.count
        f.examples += missing.prefix(3).map { "lost \($0) (landed \(due[$0]!.blockTime))" }
        if missing.isEmpty {
            let last = due.keys.compactMap { stored[$0]?.receivedAt }.max() ?? quietStartWorld
            f.convergence = max(0, Double(last - quietStartWorld) / 1000 / run.settings.speed)
        }
        // A bot keeps its store in memory: killed and started again, it fetches its history anew,
        // so only what landed after its last start tells its latency (a TUI's profile keeps the
        // first arrival across restarts).
        let since = p.kind == .bot && p.incarnation > 1 ? run.worldOf(wall: p.launchedAt) : Int64.min
        let counted = held.stored.filter { $0.incoming && inLedger[$0.txId] != nil && $0.blockTime >= since }
        f.latencies = counted.map { Double($0.receivedAt - $0.blockTime) / 1000 }
        f.deliveries = counted.map { (run.wallOf(world: $0.receivedAt), Double($0.receivedAt - $0.blockTime) / 1000) }
        (f.failedInside, f.failedOutside) = failures(p)
        return f
    }

    /// Failed requests in a client's event logs (a bot's `--events`), inside and outside the
    /// fault windows that touch it: its own, its user's world's, and the server's.
    func failures(_ p: SoakProcess) -> (inside: Int, outside: Int) {
        guard p.kind == .bot else { return (0, 0) }
        let windows = faults.filter { $0.on.isEmpty || $0.on.contains(p.name) }
        var inside = 0, outside = 0
        for k in 1...max(1, p.incarnation) {
            let text = (try? String(contentsOfFile: run.dir + "/bots/\(p.name)/events-\(k).log", encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n") {
                // An error the engine logs: each failed request logs one (a catch-up's `N failed`
                // counts the same requests again, and is not added). A fetch by id the indexer
                // answered with "not indexed yet" did not fail: the message is younger than the
                // indexer's lag, and the retry asks again.
                guard line.contains(" error ("), !line.contains("not indexed yet") else { continue }
                let count = 1
                guard let stamp = line.firstMatch(of: /^d(\d+) (\d\d):(\d\d):(\d\d)\.(\d\d\d)/) else { continue }
                let ms = (Int64(stamp.1)! - 1) * 86_400_000 + Int64(stamp.2)! * 3_600_000 + Int64(stamp.3)! * 60_000
                    + Int64(stamp.4)! * 1000 + Int64(stamp.5)! - 8 * 3_600_000
                let at = run.wallOf(world: ms)
                if windows.contains(where: { at >= $0.start - 1 && at <= $0.windowEnd }) { inside += count } else { outside += count }
            }
        }
        return (inside, outside)
    }
}
