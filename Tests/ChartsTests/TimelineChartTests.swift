import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Charts
import RunReports
import Simulation
import SyncCore
import SyncEngine
import Testing
import TestSupport

/// The picture of a run. The timeline is read from the run's own events; its
/// totals are checked against the run's measures (counted elsewhere, by the engine), its
/// bands and marks against the demo's known story, and the SVG is parsed as XML.
@Suite("Timeline of a run, and its SVG chart")
struct TimelineChartTests {
    static func run(_ name: String, _ policy: SyncPolicy) throws -> ScenarioRun {
        let path = BuiltProducts.packageRoot.appendingPathComponent("Scenarios/\(name).scenario").path
        let run = ScenarioRun(scenario: try ScenarioParser.load(path: path), policy: policy)
        run.run()
        return run
    }

    @Test("every shipped scenario, every policy: the timeline's requests add up to the run's measured backend requests",
          arguments: ["demo", "push-outage", "flaky-network", "offline-mode", "healthy-day"])
    func requestsAddUp(name: String) throws {
        for policy in SyncPolicy.all {
            let run = try Self.run(name, policy)
            let timeline = RunTimeline(run)
            #expect(timeline.totalRequests == RunSummary(run).backendRequests, "\(name) \(policy.name)")
            #expect(timeline.requestBuckets(120).reduce(0, +) == timeline.totalRequests)
        }
    }

    @Test("belief lag on the chart: in the demo under seed, push's span runs from the outage to the engine believing unreliable, as the run's measure says; the SVG draws it with its legend")
    func beliefLagSpans() throws {
        let run = try Self.run("demo", .seed)
        let t = RunTimeline(run)
        let push = try #require(t.beliefLag.first { $0.value == "push" })
        let drop = try #require(t.faults.first { $0.value == "push drop 100%" })
        let believed = try #require(t.push.first { $0.value == .unreliable })
        #expect(push.from == drop.from && push.to == believed.from)
        // One measure: the span's length is the lag simulate reports for push.
        #expect(RunSummary(run).beliefLag.records[.push]?.lags.contains(push.to - push.from) == true)
        let svg = TimelineChart.svg([("seed", t)], title: "demo")
        #expect(svg.contains("belief lag (broken, not yet believed)"))
        #expect(svg.contains("<title>belief lag: push "))
    }

    @Test("the demo under seed: push unreliable from the third miss to the first hit, the faults where the script puts them, a skipped catch-up at 3:00")
    func demoStory() throws {
        let t = RunTimeline(try Self.run("demo", .seed))
        func at(_ m: Int64, _ s: Int64 = 0) -> Instant { .zero + .minutes(m) + .seconds(s) }
        let unreliable = try #require(t.push.first { $0.value == .unreliable })
        #expect(unreliable.from == at(6, 23) + .milliseconds(390))
        #expect(unreliable.to == at(9, 14) + .milliseconds(870))
        #expect(t.faults.contains { $0.value == "push drop 100%" && $0.from == at(5) && $0.to == at(9) })
        #expect(t.faults.contains { $0.value == "realtime down" && $0.from == at(11) && $0.to == at(12) })
        #expect(t.lifecycle.contains { $0.value == .background && $0.from == at(2) && $0.to == at(3) })
        #expect(t.marks.contains { $0.mark == .skipped && $0.at > at(3) && $0.at < at(3, 1) })
        #expect(t.marks.filter { $0.mark == .full }.count == 2)  // launch, and push-unreliable
        #expect(t.marks.first?.mark == .full && t.marks.first!.at < at(0, 1))
    }

    @Test("the SVG is well-formed XML with one panel per policy, the legend, and the title's text escaped")
    func svgParses() throws {
        let runs = try SyncPolicy.all.map { ($0.name, RunTimeline(try Self.run("demo", $0))) }
        let hostile = "a<b>&\"c' \u{1B}[2J"
        let svg = TimelineChart.svg(runs, title: hostile)
        let parser = XMLParser(data: Data(svg.utf8))
        final class Texts: NSObject, XMLParserDelegate {
            var texts: [String] = []
            var current = ""
            var elements = 0
            func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String]) {
                elements += 1
                current = ""
            }
            func parser(_ parser: XMLParser, foundCharacters string: String) { current += string }
            func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
                if name == "text" { texts.append(current) }
            }
        }
        let delegate = Texts()
        parser.delegate = delegate
        #expect(parser.parse(), "\(parser.parserError.map { "\($0)" } ?? "")")
        #expect(delegate.texts.contains("a<b>&\"c' ?[2J"))  // read back as text; the ESC, not allowed in XML, is ?
        for policy in ["naive", "seed", "adaptive"] { #expect(delegate.texts.contains(policy)) }
        for entry in ["full catch-up", "targeted (proven gap)", "light (background refresh)", "skipped (debounce)", "backend requests",
                      "fault", "foreground", "background", "push reliable", "push unknown", "push unreliable", "push disabled"] {
            #expect(delegate.texts.contains(entry), "legend: \(entry)")
        }
        #expect(delegate.texts.contains("push drop 100%"))
        #expect(!svg.contains("\u{1B}"))
    }

    @Test("the chart's lane can show bytes: its buckets add up to the run's backend bytes, and the panel says so")
    func chartLane() throws {
        let run = try Self.run("push-outage", .adaptive)
        let timeline = RunTimeline(run), s = RunSummary(run)
        #expect(timeline.totalBytes == s.backendBytes)
        #expect(timeline.byteBuckets(120).reduce(0, +) == s.backendBytes)
        let svg = TimelineChart.svg([("adaptive", timeline)], title: "t", lane: .bytes)
        #expect(svg.contains("\(s.backendBytes) backend bytes") && svg.contains("backend bytes</text>"))
        #expect(TimelineChart.svg([("adaptive", timeline)], title: "t").contains("\(s.backendRequests) backend requests"))
    }
}
