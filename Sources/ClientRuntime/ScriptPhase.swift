import SyncCore

/// Where a played scenario is: the facts a screen needs, told when they change.
/// The status bar's words (`script 3m/15m`) follow from them and the clock the screen already
/// has, so nothing polls the player each frame.
public enum ScriptPhase: Equatable, Sendable {
    /// Its lines play: it started at `from` and lasts `duration`.
    case playing(from: Instant, duration: Interval)
    /// Its lines are over; the world settles (docs/scenarios.md).
    case settling
    /// Over: the world goes on live.
    case live

    /// `script 3m/15m` (whole seconds played), `script settling`, `script over: live`.
    public func status(at now: Instant) -> String {
        switch self {
        case .playing(let from, let duration):
            let done = Interval(milliseconds: max(0, (now - from).milliseconds) / 1000 * 1000)
            return "script \(done.milliseconds == 0 ? "0s" : done.description)/\(duration)"
        case .settling: return "script settling"
        case .live: return "script over: live"
        }
    }
}

/// A script the screen's loop plays into its session (a scenario played live: Simulation's
/// `ScenarioRun`): the loop advances it instead of the session, hears its phase, and lets it
/// hand over to the live world at its end. The loop imports no simulation.
public protocol ScriptPlayer: AnyObject {
    /// Runs the script and its world up to `target`.
    func advance(to target: Instant)
    var phase: ScriptPhase { get }
    /// Told when `phase` changes, while the world runs.
    var onPhase: ((ScriptPhase) -> Void)? { get set }
    /// At its end, the world goes on live (traffic, replies, keys) instead of stopping.
    var continuesLive: Bool { get set }
}

/// What writes a live session down as it goes (`--record`): told once, when the session ends.
public protocol SessionRecording: AnyObject {
    func finish(at end: Instant)
}
