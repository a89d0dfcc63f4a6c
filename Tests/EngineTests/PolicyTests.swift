import Foundation
import SimulatedWorld
@testable import RunReports
@testable import Simulation
import SyncCore
import SyncEngine
import Testing
import TestSupport

/// Two summaries equal in every measure (the policy's name aside).
func sameOutcome(_ a: RunSummary, _ b: RunSummary) -> Bool {
    var a = a, b = b
    a.policy = ""
    b.policy = ""
    return a == b
}

let outageInBackground = """
    seed 5
    duration 3h
    contacts 6
    traffic 40/h
    at 20m background
    at 40m push drop 100%
    at 70m foreground
    at 100m push drop 0%
    """

let manyForegrounds = """
    seed 8
    duration 8h
    contacts 6
    traffic 12/h
    """ + (0..<32).map { i in "\nat \(i * 15)m foreground\nat \(i * 15 + 2)m background" }.joined()

/// A muted contact writes while the app is away; push is reliable, so the foreground
/// catch-up right after is debounced and nothing brings her message in.
let debouncedForeground = """
    seed 3
    duration 2h
    contacts 3
    traffic 0/h
    settle 0s
    at 1m receive alice "hit"
    at 2m mute carol
    at 3m background
    at 4m receive carol "while away"
    at 6m foreground
    """

@Suite("Policies compared (docs/spec.md#policies)")
struct PolicyTests {
    @Test("(a) fetch evidence: with the outage starting in the background, unreliable comes sooner; off, the outcome is seed's")
    func fetchEvidence() throws {
        let (_, seed) = try measure(outageInBackground, .seed)
        let (_, withA) = try measure(outageInBackground, SyncPolicy.seed.with("a"))
        let seedTime = try #require(seed.timeToUnreliable)
        let aTime = try #require(withA.timeToUnreliable)
        #expect(aTime < seedTime)
        #expect(aTime <= 30 * 60 + 60)  // learned at the foreground catch-up (70m), not after new realtime traffic
        let (_, adaptive) = try measure(outageInBackground, .adaptive)
        let (_, adaptiveNoA) = try measure(outageInBackground, SyncPolicy.adaptive.without("a"))
        #expect(try #require(adaptive.timeToUnreliable) < (adaptiveNoA.timeToUnreliable ?? .infinity))
        var off = SyncPolicy.seed.with("a")
        off.fetchEvidence = false
        #expect(sameOutcome(try measure(outageInBackground, off).1, seed))
    }

    @Test("(b) proven gap: fewer requests with many foregrounds, nothing lost; off, the outcome is seed's")
    func provenGap() throws {
        let (_, seed) = try measure(manyForegrounds, .seed)
        let (_, withB) = try measure(manyForegrounds, SyncPolicy.seed.with("b"))
        #expect(withB.catchUpTargeted > 0)
        #expect(withB.backendRequests < seed.backendRequests / 2)
        #expect(withB.messagesLost == 0 && withB.duplicates == 0)
        #expect(withB.requestsByKind["utxo_set"] == withB.catchUpTargeted)
        var off = SyncPolicy.seed.with("b")
        off.provenGap = false
        #expect(sameOutcome(try measure(manyForegrounds, off).1, seed))
    }

    @Test("(c) trailing catch-up: a debounced foreground's gap is fetched when the debounce ends; off, the outcome is seed's")
    func trailing() throws {
        let (seedRun, seed) = try measure(debouncedForeground, .seed)
        let (cRun, withC) = try measure(debouncedForeground, SyncPolicy.seed.with("c"))
        let carol = seedRun.world.ledger.first { $0.body == "while away" }!
        #expect(seed.catchUpSkipped >= 1)
        #expect(!seedRun.storage.hasMessage(txId: carol.txId))  // seed: waits for some later trigger
        let stored = try #require(cRun.storage.message(txId: carol.txId))
        #expect(stored.via == .fetch)
        #expect(stored.receivedAt - carol.blockTime <= .minutes(11))  // at the end of the debounce
        expectDecisions(cRun, from: t(6), matching: about(.catchUp), [
            "00:06:00.320 catch-up skipped (subscription-restart): push reliable, last catch-up 5m56s ago, next allowed in 4m03s",
            "00:06:00.320 catch-up skipped (app-active): push reliable, last catch-up 5m56s ago, next allowed in 4m03s",
            "00:10:03.868 catch-up started (trailing): full sync of 9 objects",
            "00:10:04.168 catch-up finished (trailing): full, 1 new, 9 requests, 300ms",
        ])
        #expect(seed.messagesLost == 1 && withC.messagesLost == 0)
        // The measures name what was lost, so that a count can be looked into.
        #expect(seed.lostLines == ["lost (seed): \(carol.txId.prefix(8)) from carol, landed 00:04:00.000"])
        #expect(seed.table.last == seed.lostLines[0] && withC.lostLines.isEmpty)
        #expect(RunSummary.comparison([seed, withC]).last == seed.lostLines[0])
        var off = SyncPolicy.seed.with("c")
        off.trailingCatchUp = false
        #expect(sameOutcome(try measure(debouncedForeground, off).1, seed))
    }

    @Test("naive overlaps under a slow indexer and fixed-timer polling; seed and adaptive never do")
    func naiveOverlaps() throws {
        let text = """
            seed 2
            duration 1h
            contacts 4
            traffic 20/h
            mode off
            at 1m indexer latency 30s
            at 2m realtime down
            at 40m realtime up
            """
        #expect(try measure(text, .naive).1.overlappingSyncs > 0)
        #expect(try measure(text, .seed).1.overlappingSyncs == 0)
        #expect(try measure(text, .adaptive).1.overlappingSyncs == 0)
    }

    @Test("identical worlds: every policy sees the same messages at the same block times")
    func identicalWorlds() throws {
        let text = try String(contentsOfFile: ShippedScenarios.directory.appendingPathComponent("push-outage.scenario").path, encoding: .utf8)
        let worlds = try SyncPolicy.all.map { policy in
            try measure(text, policy, file: "push-outage.scenario").0.world.ledger.map { "\($0.txId) \($0.blockTime) \($0.conversation) \($0.body)" }
        }
        #expect(worlds[0].count > 50)
        #expect(worlds[0] == worlds[1])
        #expect(worlds[1] == worlds[2])
    }

    @Test("the JSON object has the keys and types of the issue")
    func jsonShape() throws {
        let (_, s) = try measure(outageInBackground, .adaptive)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(s.json.utf8)) as? [String: Any])
        let ints = ["messages_sent", "messages_delivered", "messages_lost", "duplicates", "backend_requests", "catchup_full",
                    "catchup_targeted", "catchup_skipped", "overlapping_syncs", "push_state_changes", "oracle_requests"]
        let numbers = ["latency_p50_s", "latency_p95_s", "latency_max_s", "time_to_unreliable_s"]
        for key in ints { #expect(object[key] is Int, "\(key)") }
        for key in numbers { #expect(object[key] is Double || object[key] is Int, "\(key)") }
        #expect(object["policy"] as? String == "adaptive")
        let kinds = try #require(object["requests_by_kind"] as? [String: Int])
        #expect(kinds.values.reduce(0, +) == object["backend_requests"] as? Int)
        #expect(Set(object.keys).isSuperset(of: Set(ints + numbers + ["policy", "requests_by_kind"])))
        let (_, none) = try measure(debouncedForeground, .seed)
        let noOutage = try #require(try JSONSerialization.jsonObject(with: Data(none.json.utf8)) as? [String: Any])
        #expect(noOutage["time_to_unreliable_s"] is NSNull)
        #expect(object["lost_tx_ids"] as? [String] == [])
        #expect(noOutage["lost_tx_ids"] as? [String] == none.lostTxIds && none.lostTxIds.count == 1)
    }

    @Test("(a), rule 2: messages that landed while the token was expired are no evidence when fetched; a drop while it was active is, and the log names the channel")
    func fetchEvidenceOnlyWhenPushCouldCarry() throws {
        let expired = """
            seed 4
            duration 30m
            contacts 3
            traffic 0/h
            at 1m receive alice "makes push reliable"
            at 2m background
            at 3m token expire
            at 4m receive alice "one"
            at 5m receive bob "two"
            at 6m receive carol "three"
            at 10m foreground
            """
        let (run, summary) = try measure(expired, .adaptive)
        #expect(summary.messagesLost == 0)
        #expect(!run.log.contains { if case .observationMiss = $0.event { return true } else { return false } })
        #expect(!run.pushTransitions.contains { $0.to == .unreliable })
        #expect(run.catchUpStarts(trigger: .pushUnreliable).isEmpty)
        // One registration, at the foreground that found the token expired; no re-register.
        let registrations = run.log.filter { if case .tokenRegistration(let s) = $0.event { return s.contains("registering again") || s.contains("re-register") } else { return false } }
        #expect(registrations.map(\.at) == [t(10)])

        // The same story with the token active and push dropping: the fetched messages are misses.
        let dropped = expired.replacingOccurrences(of: "at 3m token expire", with: "at 3m push drop 100%")
        let (dropRun, _) = try measure(dropped, .adaptive)
        // (Push's watch, (g), counts each as lost once it is 5 min past landing without its push.)
        expectDecisions(dropRun, from: t(2), matching: { $0.topic == .observation || pushTopics.contains($0.topic) }, [
            "00:10:03.855 observation miss ee3de0f3 (fetch): no push within grace, misses 1/3",
            "00:10:03.855 push watch: lost ee3de0f3: no push within 5m of it landing at 00:04:00.000",
            "00:10:03.941 observation miss b5e4c8da (fetch): no push within grace, misses 2/3",
            "00:10:04.044 observation miss 3e1611e9 (fetch): no push within grace, misses 3/3",
            "00:10:04.044 push reliable → unreliable: 3 consecutive push-eligible txs without push within 1m (3 fetched)",
            "00:10:04.044 push token registration: re-register: push unreliable",
            "00:10:04.044 push watch: lost 3e1611e9: no push within 5m of it landing at 00:05:00.000",
            "00:11:00.000 push watch: lost b5e4c8da: no push within 5m of it landing at 00:06:00.000",
        ])

        // Muted when it landed, unmuted before it is fetched: no evidence either.
        let muted = expired.replacingOccurrences(of: "at 3m token expire", with: "at 3m mute alice\nat 3m mute bob\nat 3m mute carol")
            .replacingOccurrences(of: "at 10m foreground", with: "at 9m unmute alice\nat 9m unmute bob\nat 9m unmute carol\nat 10m foreground")
        let (mutedRun, _) = try measure(muted, .adaptive)
        #expect(!mutedRun.log.contains { if case .observationMiss = $0.event { return true } else { return false } })
    }
}

@Suite("simulate --compare side by side")
struct SideBySideTests {
    @Test("the policies run side by side on the machine's cores give the very runs one after the other give: summaries and logs")
    func sameAsOneAfterTheOther() throws {
        let scenario = try ScenarioParser.parse(outageInBackground, file: "side.scenario")
        let side = try ScenarioRun.side(by: SyncPolicy.all, of: scenario)
        #expect(side.map(\.policy.name) == SyncPolicy.all.map(\.name))
        for (run, policy) in zip(side, SyncPolicy.all) {
            let alone = ScenarioRun(scenario: scenario, policy: policy)
            alone.run()
            #expect(RunSummary(run) == RunSummary(alone))
            #expect(run.logLines == alone.logLines)
            #expect(run.finished)
        }
    }
}

@Suite("simulate at scale: what a run holds")
struct RunMemoryTests {
    @Test("the measures need no log: every shipped scenario under every policy gives the same summary with the log kept or not (push-outage's time to unreliable among them), and a run that keeps none holds none")
    func measuresWithoutTheLog() throws {
        var timed = 0
        for name in ShippedScenarios.names() {
            let scenario = try ScenarioParser.load(path: ShippedScenarios.directory.appendingPathComponent(name).path)
            for policy in SyncPolicy.all {
                let kept = ScenarioRun(scenario: scenario, policy: policy)
                let bare = ScenarioRun(scenario: scenario, policy: policy, keepsLog: false)
                kept.run()
                bare.run()
                #expect(!kept.log.isEmpty)
                #expect(bare.log.isEmpty, "\(name) \(policy.name)")
                let summary = RunSummary(kept)
                #expect(RunSummary(bare) == summary, "\(name) \(policy.name)")
                if summary.timeToUnreliable != nil { timed += 1 }
            }
        }
        #expect(timed >= 3)
    }

    @Test("a script's lines are scheduled an instant at a time: a 2 000-line script is not 2 000 entries of the scheduler, and every line is played")
    func scriptScheduledAsItGoes() throws {
        var text = "seed 3\nduration 2h\ncontacts 2\ntraffic 0/h\n"
        for i in 0..<2000 { text += "at \(i)s receive \(i % 2 == 0 ? "alice" : "bob") \"line \(i)\"\n" }
        let run = ScenarioRun(scenario: try ScenarioParser.parse(text, file: "long.scenario"), keepsLog: false)
        #expect(run.scheduler.pendingCount < 50)
        run.run()
        let summary = RunSummary(run)
        #expect(summary.messagesSent == 2000)
        #expect(summary.messagesLost == 0)
    }

    @Test("latency percentiles counted by the millisecond are a sorted list's nearest ranks")
    func latencyCountsAreNearestRanks() {
        var rng = RandomStream(seed: 11, concern: "latencies")  // seeded: the same values every run
        for n in [1, 2, 3, 19, 20, 100, 1001] {
            var counts = LatencyCounts()
            var all: [Int64] = []
            for _ in 0..<n {
                let v = Int64(rng.int(0...(n < 20 ? 5 : 90_000)))
                counts.add(v)
                all.append(v)
            }
            all.sort()
            for p in [0.01, 0.5, 0.95, 0.99, 1.0] {
                // Nearest rank: the ⌈n·p⌉-th smallest.
                let k = Int((Double(n) * p).rounded(.up))
                #expect(counts.percentile(p) == Double(all[k - 1]) / 1000, "n \(n) p \(p)")
            }
            #expect(counts.max == Double(all.last!) / 1000)
        }
        #expect(LatencyCounts().percentile(0.5) == nil)
    }
}

@Suite("Scenario lines split fast")
struct TokenizeFastPathTests {
    @Test("the byte path splits every line as the scalar path does (words and errors): random lines of quotes, backslashes, #, tabs and multi-byte text, and every line of the public width corpus, raw and quoted")
    func bytePathIsTheScalarPath() throws {
        func outcome(_ f: () throws -> [ScenarioParser.Word]) -> String {
            do { return "\(try f())" } catch let e as ScenarioParser.TokenError { return "error: \(e.message)" } catch { return "\(error)" }
        }
        var lines: [String] = []
        let alphabet: [String] = [" ", "\t", "#", "\"", "\\", "n", "x", "u", "{", "}", "4", "1", "a", "at", "receive", "é", "👍🏽", "\u{0301}", "\r", "\u{FEFF}"]
        var rng = RandomStream(seed: 7, concern: "tokenize lines")  // the simulated world's seeded stream
        for _ in 0..<20_000 {
            let n = Int(rng.next() % 12)
            lines.append((0..<n).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }.joined())
        }
        let corpus = BuiltProducts.packageRoot.appendingPathComponent("TestData/width-corpus/corpus.txt")
        let text = try String(contentsOf: corpus, encoding: .utf8)
        for line in text.split(separator: "\n") {
            lines.append(String(line))
            lines.append("at 1s receive alice \"\(line)\"")
        }
        #expect(lines.count > 20_000)
        var plain = 0
        for line in lines {
            let fast = outcome { try ScenarioParser.tokenize(line) }
            #expect(fast == outcome { try ScenarioParser.tokenizeScalars(line) }, "\(line.debugDescription)")
            if !line.contains("\\") { plain += 1 }
        }
        #expect(plain > 1000)  // the byte path was taken
    }
}

@Suite("Scenario files read as a run goes (simulate)")
struct StreamedScenarioTests {
    func both(_ text: String) -> (String, String) {
        func outcome(_ streaming: Bool) -> String {
            do {
                let s = try ScenarioParser.parse(text, file: "f.scenario", streaming: streaming)
                return "\(s.seed) \(s.duration) \(s.contacts) \(s.trafficPerHour) \(s.mode) \(s.settle) \(Array(s.stepSequence))"
            } catch { return "\(error)" }
        }
        return (outcome(false), outcome(true))
    }

    @Test("a file read streaming has the header, the steps and the errors of one parsed whole: a problem of syntax after one of sense, a header after the steps (more contacts, a shorter duration)")
    func sameAsParsedWhole() throws {
        let cases = [
            "seed 3\ncontacts 2\nat 1s receive alice \"hi\"\nat 2s receive bob \"yo\"\n",
            "contacts 1\nat 1s receive bob \"hi\"\nat 2s bogus\n",                       // sense, then syntax: syntax wins
            "contacts 1\nat 1s receive bob \"hi\"\n",                                      // sense
            "contacts 1\nat 1s receive bob \"hi\"\ncontacts 2\n",                          // a header after: bob exists
            "duration 1h\nat 50m receive alice \"hi\"\nduration 10m\n",                   // a header after: too late
            "at 1s contact zed\nat 2s receive zed \"hi\"\nat 3s receive yan \"no\"\n",    // contacts made by steps
            "\u{FEFF}seed 9\r\nat 1s receive alice \"crlf\"\r\n",
            "at 2s sync\nat 1s sync\n",
            "",
        ]
        for text in cases {
            let (whole, streamed) = both(text)
            #expect(whole == streamed, "\(text.debugDescription)")
        }
        #expect(both(cases[1]).1.contains("f.scenario:3:"))
        #expect(both(cases[2]).1.contains("f.scenario:2: unknown contact \"bob\""))
        #expect(both(cases[4]).1.contains("after the scenario's duration"))
    }

    @Test("a file read from disk a chunk at a time has the header, steps and errors of the same bytes parsed whole: lines across chunks, longer than a chunk, CRLF, a BOM, no last newline, bad UTF-8 after a bad line")
    func fromDiskSameAsWhole() throws {
        let dir = try TemporaryDirectory("streamed")
        defer { dir.remove() }
        let chunk = 1 << 16
        let long = "at 1s receive alice \"" + String(repeating: "é", count: chunk) + "\"\n"       // two chunks' bytes
        let filler = "# " + String(repeating: "x", count: chunk - 3) + "\n"                        // ends one byte before a chunk's end
        var cases: [[UInt8]] = [
            "seed 3\ncontacts 2\nat 1s receive alice \"hi\"\nat 2s receive bob \"yo\"\n",
            "contacts 1\nat 1s receive bob \"hi\"\nat 2s bogus\n",
            "\u{FEFF}seed 9\r\nat 1s receive alice \"crlf\"\r\n",
            "seed 9\nat 1s receive alice \"no newline at the end\"",
            "\n\n\r\n",
            "",
            "seed 4\n" + long + "at 2s receive bob \"after\"\n",
            filler + "\nat 1s receive alice \"first of the next chunk\"\r\n",
            filler + "at 1s receive alice \"across\"\n" + filler + filler + "at 3s sync\n",
        ].map { Array($0.utf8) }
        cases.append(Array("at 1s bogus\nat 2s receive alice \"".utf8) + [0xC3, 0x28] + Array("\"\n".utf8))   // bad UTF-8 on line 2 wins
        cases.append(Array(filler.utf8) + [0xE2, 0x82])                                                      // a sequence cut by the end
        for (i, bytes) in cases.enumerated() {
            let path = dir.file("\(i).scenario")
            #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
            func outcome(_ streaming: Bool) -> String {
                do {
                    let s = try ScenarioParser.load(path: path, streaming: streaming)
                    return "\(s.seed) \(s.duration) \(s.contacts) \(s.stepCount) \(Array(s.stepSequence))"
                } catch { return "\(error)" }
            }
            #expect(outcome(false) == outcome(true), "case \(i)")
        }
        #expect(try ScenarioParser.load(path: dir.file("6.scenario"), streaming: true).stepCount == 2)
        for missing in [dir.file("none.scenario"), dir.path] {
            #expect(throws: ScenarioError.self) { try ScenarioParser.load(path: missing, streaming: true) }
            let a = (try? ScenarioParser.load(path: missing)).map { "\($0)" } ?? "\(error(missing, false))"
            #expect(a == "\(error(missing, true))")
        }
        func error(_ path: String, _ streaming: Bool) -> String {
            do { _ = try ScenarioParser.load(path: path, streaming: streaming); return "parsed" } catch { return "\(error)" }
        }
    }

    @Test("every shipped scenario read streaming plays the same run as parsed whole (logs and measures), and holds no steps")
    func shippedScenariosPlayTheSame() throws {
        for name in ShippedScenarios.names() {
            let path = ShippedScenarios.directory.appendingPathComponent(name).path
            let whole = try ScenarioParser.load(path: path)
            let streamed = try ScenarioParser.load(path: path, streaming: true)
            #expect(streamed.steps.isEmpty && streamed.script != nil)
            #expect(Array(streamed.stepSequence) == whole.steps)
            let a = ScenarioRun(scenario: whole), b = ScenarioRun(scenario: streamed)
            a.run()
            b.run()
            #expect(a.logLines == b.logLines, "\(name)")
            #expect(RunSummary(a) == RunSummary(b), "\(name)")
        }
    }
}
