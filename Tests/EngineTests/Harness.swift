import SimulatedWorld
import Simulation
import SyncCore
import SyncEngine
import Testing
// Every file of this target sees TestSupport's helpers (`t`, `at`, `expectEvent`, …).
@_exported import TestSupport

/// A scenario for tests: quiet by default (no random traffic, three contacts) so that every
/// message in it is one the test wrote.
func scenario(_ body: String, seed: UInt64 = 1) throws -> Scenario {
    try ScenarioParser.parse("seed \(seed)\ntraffic 0/h\ncontacts 3\nsettle 15m\n" + body, file: "test.scenario")
}

/// Runs a scenario in virtual time, to `until` or to the end of its settle period.
/// The rule tests run the `seed` policy: rules 1–15 exactly.
func simulate(_ body: String, seed: UInt64 = 1, policy: SyncPolicy = .seed, timings: WorldTimings = WorldTimings(), until: Interval? = nil,
              storage: ChatStorage = InMemoryChatStorage(), prepare: (ScenarioRun) -> Void = { _ in }) throws -> ScenarioRun {
    let run = ScenarioRun(scenario: try scenario(body, seed: seed), policy: policy, storage: storage, timings: timings)
    prepare(run)
    if let until { run.advance(to: .zero + until) } else { run.run() }
    return run
}

extension ScenarioRun {
    var events: [TimedEvent] { log }

    func times(_ match: (SyncEvent) -> Bool) -> [Instant] { log.filter { match($0.event) }.map(\.at) }

    /// Push state transitions, in order.
    var pushTransitions: [(at: Instant, to: PushState)] {
        log.compactMap { if case .pushState(_, let to, _) = $0.event { return ($0.at, to) } else { return nil } }
    }

    func catchUpStarts(trigger: CatchUpTrigger? = nil, kind: CatchUpGate.SyncKind = .full) -> [Instant] {
        times {
            if case .catchUpStarted(let tr, let k, _, _) = $0 { return k == kind && (trigger == nil || tr == trigger) }
            return false
        }
    }

    func contact(_ handle: String) -> Contact { world.contact(handle: handle)! }

    /// The incoming messages of the ledger from one contact.
    func incoming(from handle: String) -> [NetworkMessage] {
        world.ledger.filter { $0.direction == .incoming && $0.conversation == contact(handle).address }
    }

    /// What every engine test must hold: no overlapping syncs, no message stored twice.
    func checkInvariants(sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(driver.counters.overlappingSyncs == 0, sourceLocation: sourceLocation)
        let ids = storage.allMessages().map(\.txId)
        #expect(Set(ids).count == ids.count, sourceLocation: sourceLocation)
    }

    /// Every incoming message of the ledger is in the store.
    func checkNothingLost(sourceLocation: SourceLocation = #_sourceLocation) {
        let lost = world.ledger.filter { !storage.hasMessage(txId: $0.txId) }
        #expect(lost.isEmpty, "lost: \(lost.map(\.txId))", sourceLocation: sourceLocation)
    }
}
