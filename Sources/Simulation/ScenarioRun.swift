import Directives
import ClientRuntime
import Foundation
import SimulatedWorld
import SyncCore
import SyncEngine

/// A scenario played into an `AppSession`: the script's lines applied at their times, then
/// the final foreground and the settle period (docs/scenarios.md), after which `simulate` stops and
/// the live TUI hands the world over. `run()` goes as fast as the machine allows in virtual
/// time; the TUI calls `advance(to:)` with scaled wall time.
public final class ScenarioRun: ScriptPlayer {
    public let scenario: Scenario
    public let session: AppSession
    /// When the script (and the traffic) ends: the scenario's duration, or a `quit`.
    public private(set) var scriptEnd: Instant
    public private(set) var finished = false
    /// What follows the script and its settle. `simulate` stops there, so that "lost" has a
    /// meaning; the live TUI hands the world over, and it goes on: traffic, replies, keys.
    public var continuesLive = false
    /// Told when `phase` changes (its lines over, then live), while the world runs: a screen
    /// hears it instead of asking each frame.
    public var onPhase: ((ScriptPhase) -> Void)?
    /// The world was handed over after the script (see `continuesLive`).
    public private(set) var live = false
    /// Traffic after a hand-over when the scenario has none: the live chat's default.
    public static let liveTrafficPerHour = 24.0

    /// A run of `scenario` on a new session (or a resumed profile's world, see `AppSession`).
    /// Its decision log is kept unless `keepsLog` is false: the measures do not need it.
    public init(scenario: Scenario, seed: UInt64? = nil, policy: SyncPolicy = .adaptive, settings: SyncSettings = .default,
                storage: ChatStorage = InMemoryChatStorage(), timings: WorldTimings = WorldTimings(),
                persistence: WorldPersistence? = nil, keepsLog: Bool = true, history: WorldHistory = InMemoryWorldHistory()) {
        self.scenario = scenario
        // What the run will hold, made room for at once (see `reserveCapacity`); bounded, as
        // a scenario's own estimate is no promise.
        let expected = min(scenario.expectedMessages, 1 << 22)
        (history as? InMemoryWorldHistory)?.reserveCapacity(expected)
        (storage as? InMemoryChatStorage)?.reserveCapacity(expected)
        let session = AppSession(seed: seed ?? scenario.seed, contacts: scenario.contacts, trafficPerHour: scenario.trafficPerHour,
                                 mode: scenario.mode, policy: policy, settings: settings, storage: storage, timings: timings,
                                 persistence: persistence, history: history)
        self.session = session
        session.keepsLog = keepsLog
        session.world.push.model = scenario.pushModel
        let start = session.startedAt
        self.scriptEnd = start + scenario.duration
        session.world.traffic.stopsAt = scriptEnd
        // The lines of one instant are applied together, after everything else due then: as a
        // key is, after the TUI ran the world up to the key's own instant. So a recorded
        // session (`--record`) replays to the same log. One instant is scheduled at a time, the
        // next as it runs: a script of a million lines is not a million entries of the
        // scheduler (their order is the same: a `late` entry runs after the others of its
        // instant whenever it was scheduled).
        scheduleLines(from: StepFeed(scenario.stepSequence), into: session)
        session.start()
    }

    /// Schedules the lines of the script's next instant.
    private func scheduleLines(from feed: StepFeed, into session: AppSession) {
        guard let first = feed.next() else { return }
        var group = [first]
        while let step = feed.next(sameInstantAs: first) { group.append(step) }
        session.scheduler.schedule(at: session.startedAt + (first.at - .zero), late: true, "scenario line \(first.line)") { [weak self, weak session] in
            guard let self, let session else { return }
            scheduleLines(from: feed, into: session)
            for step in group {
                guard !session.stopRequested else { return }
                if firstPushOutage == nil, Self.isPushOutage(step.directive) { firstPushOutage = session.scheduler.now }
                session.apply(step.directive)
            }
        }
    }

    // The session's parts, for the measures and the tests.
    public var seed: UInt64 { session.seed }
    public var scheduler: Scheduler { session.scheduler }
    public var world: SimulatedWorld { session.world }
    public var storage: ChatStorage { session.storage }
    public var driver: SyncDriver { session.driver }
    public var log: [TimedEvent] { session.log }
    public var logLines: [String] { session.logLines }
    public var settings: SyncSettings { session.settings }
    public var policy: SyncPolicy { session.policy }
    public var startedAt: Instant { session.startedAt }
    public var persistence: WorldPersistence? { session.persistence }
    public var resumed: Bool { session.resumed }
    public var quitRequested: Bool { session.quitRequested }
    public func checkpoint() { session.checkpoint() }
    public func restartApp() { session.restartApp() }
    public func apply(_ d: Directive) { session.apply(d) }

    /// Runs the whole scenario in virtual time, as fast as possible.
    public func run() {
        advance(to: scriptEnd + scenario.settle)
    }

    /// When the script's first push outage was played (`RunSummary.timeToUnreliable`).
    public private(set) var firstPushOutage: Instant?

    /// A push outage, as `timeToUnreliable` counts from: `push drop 100%` or `push down`.
    public static func isPushOutage(_ d: Directive) -> Bool {
        switch d {
        case .fault(.pushDrop(let p)): return p >= 100
        case .fault(.pushDown): return true
        default: return false
        }
    }

    /// When the settle period ends; nil while the script is still running.
    public private(set) var settleEnd: Instant?

    /// Runs everything due up to `target`: the script, its end, the settle period.
    public func advance(to target: Instant) {
        guard !session.stopRequested else { return }  // the app quit there: nothing runs after
        if settleEnd == nil {
            while !quitRequested, let next = scheduler.nextEventTime, next <= min(target, scriptEnd) {
                scheduler.runNext()
            }
            if session.stopRequested {
                // A recorded session ends where the app quit: nothing after it.
                scriptEnd = scheduler.now
                settleEnd = scheduler.now
                finished = true
                return
            }
            if quitRequested {
                scriptEnd = scheduler.now
            } else if target < scriptEnd {
                scheduler.run(until: target)
                return
            } else {
                scheduler.run(until: scriptEnd)
            }
            endScript()
        }
        let end = settleEnd!
        if live { return scheduler.run(until: target) }
        scheduler.run(until: min(target, end))
        finished = scheduler.now >= end
        if finished, continuesLive {
            goLive()
            scheduler.run(until: target)
        }
    }

    /// The script and its settle are over: the world goes on as the live chat's does.
    private func goLive() {
        live = true
        onPhase?(.live)
        let rate = scenario.trafficPerHour > 0 ? scenario.trafficPerHour : Self.liveTrafficPerHour
        world.traffic.resume(perHour: rate)
        session.app.note("script \(scenario.source) over; the live world goes on (traffic \(Int(rate))/h, replies, keys)")
    }

    /// Where a played scenario is (a status bar shows it with its clock).
    public var phase: ScriptPhase {
        live ? .live : settleEnd != nil ? .settling : .playing(from: startedAt, duration: scenario.duration)
    }

    /// Where a played scenario is, in a status bar's words: `script 3m/15m`, `script settling`,
    /// `script over: live`.
    public var scriptStatus: String { phase.status(at: scheduler.now) }

    /// Final foreground and settle (docs/scenarios.md): from here on, "lost" is well defined.
    private func endScript() {
        world.traffic.stopsAt = scriptEnd
        if !world.os.foreground {
            session.app.note("final foreground")
            world.os.moveToForeground()
        }
        session.app.note("script ended; settling for \(scenario.settle)")
        settleEnd = scriptEnd + scenario.settle
        onPhase?(.settling)
    }
}

extension ScenarioRun {
    /// One run of `scenario` per policy, side by side (the runs share nothing: each has its
    /// own world, scheduler and store), in the order given. Each run has a thread of its own,
    /// so that three runs on two cores take about half their CPU time, not two runs' worth
    /// (a pool as wide as the cores ran two, then the third alone). `play` runs each one to
    /// its end (`run()` unless given): `simulate --compare` shows progress there. `home` gives
    /// each run its store and its world's history (memory unless given: see `HistoryHome`).
    public static func side(by policies: [SyncPolicy], of scenario: Scenario, seed: UInt64? = nil, keepsLog: Bool = true,
                            home: (@Sendable () throws -> HistoryHome)? = nil,
                            play: (@Sendable (ScenarioRun, Int) -> Void)? = nil) throws -> [ScenarioRun] {
        let slots = Slots<ScenarioRun>(policies.count)
        let done = DispatchGroup()
        for (i, policy) in policies.enumerated() {
            done.enter()
            let thread = Thread {
                defer { done.leave() }
                let place: HistoryHome
                do { place = try home?() ?? HistoryHome() } catch { slots.fail(error); return }
                let run = ScenarioRun(scenario: scenario, seed: seed, policy: policy, storage: place.storage, keepsLog: keepsLog,
                                      history: place.history)
                if let play { play(run, i) } else { run.run() }
                slots.put(run, at: i)
            }
            thread.stackSize = 8 << 20  // the main thread's; a secondary thread's default can be smaller
            thread.start()
        }
        done.wait()
        return try slots.all()
    }
}

/// Where `simulate` keeps a run's history: `memory` (fast), `disk` (temporary SQLite files:
/// memory flat in the run's length), or `auto`: disk when the scenario carries more than
/// `diskThreshold` messages, so that a run's memory is bounded either way (about 1 KB a
/// message up to the threshold, then flat).
public enum HistoryChoice: String, CaseIterable, Sendable {
    case auto, memory, disk

    public static let diskThreshold = 250_000

    public func onDisk(for scenario: Scenario) -> Bool {
        switch self {
        case .memory: return false
        case .disk: return true
        case .auto: return scenario.expectedMessages > Self.diskThreshold
        }
    }
}

/// Where a run keeps the history of its messages: the client's store and the world's
/// history. Both in memory unless given (`synchat simulate --store disk` puts both in
/// temporary SQLite files, for runs bigger than memory should hold).
public struct HistoryHome {
    public var storage: ChatStorage
    public var history: WorldHistory

    public init(storage: ChatStorage = InMemoryChatStorage(), history: WorldHistory = InMemoryWorldHistory()) {
        self.storage = storage
        self.history = history
    }
}

/// A script's steps, one at a time, with a look at the next.
private final class StepFeed {
    private var steps: AnyIterator<Scenario.Step>
    private var ahead: Scenario.Step?

    init(_ steps: AnySequence<Scenario.Step>) { self.steps = steps.makeIterator() }

    func next() -> Scenario.Step? {
        if let ahead { self.ahead = nil; return ahead }
        return steps.next()
    }

    /// The next step if it is at `step`'s instant.
    func next(sameInstantAs step: Scenario.Step) -> Scenario.Step? {
        guard let n = next() else { return nil }
        if n.at == step.at { return n }
        ahead = n
        return nil
    }
}

/// Results of concurrent work, each in its own slot.
package final class Slots<T>: @unchecked Sendable {
    private var values: [T?]
    private var error: Error?
    private let lock = NSLock()
    package init(_ n: Int) { values = Array(repeating: nil, count: n) }
    package func put(_ value: T, at i: Int) {
        lock.lock()
        values[i] = value
        lock.unlock()
    }
    package func fail(_ e: Error) {
        lock.lock()
        if error == nil { error = e }
        lock.unlock()
    }
    /// The values, or the first error.
    package func all() throws -> [T] {
        lock.lock(); defer { lock.unlock() }
        if let error { throw error }
        return values.map { $0! }
    }
}
