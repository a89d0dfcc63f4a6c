import SyncCore
import SyncEngine

/// The OS (docs/spec.md#terms): moves the app between foreground and background (killing the realtime
/// socket silently on background), holds the notification permission, and grants background
/// refreshes — near the requested time with jitter, never earlier than requested, never more
/// often than every 15 minutes, and expiring each one after 30 s.
public final class SimOperatingSystem: DeviceOS {
    public private(set) var foreground = false
    public var notificationPermissionGranted = true
    /// Ground truth: refreshes granted, and when.
    public private(set) var grants: [Instant] = []

    weak var world: SimulatedWorld?
    /// The app, when this OS runs beside a world elsewhere (a client of `synchat server`):
    /// then it calls this app, and `suspended` instead of the in-process node.
    public weak var app: ClientEndpoint?
    /// Told when the app is suspended or killed: its sockets stop being listened to.
    public var suspended: (() -> Void)?
    private var client: ClientEndpoint? { app ?? world?.client }
    private let scheduler: Scheduler
    private let timings: WorldTimings
    private var jitter: RandomStream
    private var pendingGrant: Scheduler.Token?
    private var nextTask = 0

    public init(seed: UInt64, scheduler: Scheduler, timings: WorldTimings) {
        self.scheduler = scheduler
        self.timings = timings
        self.jitter = RandomStream(seed: seed, concern: "os-refresh")
    }

    public func moveToForeground() {
        guard !foreground else { return }
        foreground = true
        client?.appDidBecomeActive()
    }

    public func moveToBackground() {
        guard foreground else { return }
        foreground = false
        world?.node.appSuspended()
        suspended?()
        client?.appDidEnterBackground()
    }

    /// The app process dies (killed, crashed, or swiped away): its socket goes with it and
    /// nothing is said to the app. A later `moveToForeground` is a cold launch.
    public func processKilled() {
        foreground = false
        world?.node.appSuspended()
        suspended?()
        cancelBackgroundRefresh()
    }

    public func requestBackgroundRefresh(earliest: Instant) {
        cancelBackgroundRefresh()
        var at = max(earliest, scheduler.now + timings.refreshMinimum)
        if let last = grants.last { at = max(at, last + timings.refreshMinimum) }
        at = at + jitter.interval(timings.refreshJitter.low, timings.refreshJitter.high)
        pendingGrant = scheduler.schedule(at: at, "background refresh grant") { [self] in
            pendingGrant = nil
            guard !foreground, let client else { return }
            grants.append(scheduler.now)
            world?.wakeUps.refreshRun()
            nextTask += 1
            let task = nextTask
            client.backgroundRefreshGranted(task: task)
            scheduler.schedule(after: timings.refreshExpiry, "background refresh expiry") { [weak self] in
                self?.client?.backgroundRefreshExpired(task: task)
            }
        }
    }

    public func cancelBackgroundRefresh() {
        if let t = pendingGrant { scheduler.cancel(t) }
        pendingGrant = nil
    }
}
