import Foundation
@testable import Fuzzing
import Simulation
import SimulatedWorld
import SyncCore
import Testing

/// A run that is over lets go of everything it made: a fuzz loop of 10 000 cases once kept
/// every world it ran (10.9 GB), held by two cycles — the world's callbacks holding the app,
/// whose driver holds the world's ports, and the timers left in the queue holding the world.
@Suite("Fuzzing: a finished run keeps nothing alive")
struct RunLifetimeTests {
    @Test("once a run is let go, its world and its store are freed, under every policy", arguments: ["naive", "seed", "adaptive"])
    func nothingStays(policy: String) throws {
        weak var world: SimulatedWorld?
        weak var storage: ObservedStorage?
        weak var run: ScenarioRun?
        do {
            let scenario = try ScenarioParser.parse(FuzzScenario.generate(seed: 7).text, file: "fuzz-7.scenario")
            let (finished, store) = ScenarioFuzzer.runOnce(scenario, policy: try #require(SyncPolicy.named(policy)), settings: .default)
            #expect(finished.world.ledger.count > 0)
            world = finished.world
            storage = store
            run = finished
        }
        #expect(run == nil)
        #expect(world == nil, "the world outlived its run")
        #expect(storage == nil, "the store outlived its run")
    }
}
