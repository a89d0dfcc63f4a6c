import Simulation
import SimulatedWorld
import SyncCore
import SyncEngine
import Testing
import TestSupport

/// The simulated contacts read as people: none says the same words twice within ten minutes
/// of world time (two identical lines at 08:05 look like the duplicate the app must never show).
@Suite("Simulated contacts do not repeat themselves")
struct TrafficPhrasesTests {
    static func repeats(_ ledger: [NetworkMessage]) -> [String] {
        var last: [String: Instant] = [:]
        var found: [String] = []
        for m in ledger.sorted(by: { $0.blockTime < $1.blockTime }) where m.direction == .incoming && m.kind == .contextual {
            let key = m.conversation.value + " " + m.body
            if let before = last[key], m.blockTime - before < Traffic.repeatWindow {
                found.append("\(m.conversation.value.suffix(6)) said \"\(m.body)\" at \(before) and \(m.blockTime)")
            }
            last[key] = m.blockTime
        }
        return found
    }

    @Test("the shipped demo and a busy day: no contact says the same words twice within ten minutes, arrivals and replies alike")
    func noRepeats() throws {
        let demo = ScenarioRun(scenario: try ScenarioParser.load(path: BuiltProducts.packageRoot.appendingPathComponent("Scenarios/demo.scenario").path))
        demo.run()
        #expect(Self.repeats(demo.world.ledger).isEmpty, "\(Self.repeats(demo.world.ledger))")
        // Busy enough that the 20 phrases would repeat by chance many times over.
        var text = "seed 3\nduration 6h\ncontacts 2\ntraffic 120/h\n"
        for m in stride(from: 10, to: 360, by: 7) { text += "at \(m)m send alice \"hi \(m)\"\n" }
        let busy = ScenarioRun(scenario: try ScenarioParser.parse(text, file: "busy.scenario"))
        busy.run()
        #expect(busy.world.ledger.filter { $0.direction == .incoming }.count > 500)
        #expect(Self.repeats(busy.world.ledger).isEmpty, "\(Self.repeats(busy.world.ledger).prefix(5))")
    }
}
