import SyncCore

/// The pure machines the engine decides with (SyncCore), one per family of rules: the engine
/// hands each its inputs and performs what it answers (`Engine+Machines.swift`).
struct SyncMachines {
    /// Rules 2–8, 12: push's reliability, scored per message.
    var reliability: PushReliability
    /// Rules 4–6, 14, (c): when a catch-up may run.
    var gate: CatchUpGate
    /// Rule 13: polling while realtime is down.
    var poller: FallbackPoller
    /// Rule 14: the background refresh.
    var refresh: BackgroundRefresh
    /// Rules 10–11: realtime's connection, its liveness and keepalive.
    var connection: ConnectionLifecycle
    /// (e): checks the indexer's tip while realtime cannot verify push.
    var verifier: PushVerifier
    /// (f), (g): push's pace and record, which say when looking is worth a request.
    var watch: PushWatch
    /// (h): the look owed to a realtime outage push was trusted to cover.
    var closing = ClosingLook()
    /// Rule 1: what is shown of a message that arrives.
    var notifier: NotificationPresenter

    /// The machines of a launch, restoring what an earlier run learned (`saved`).
    init(settings: SyncSettings, policy: SyncPolicy, saved: PersistedEngineState?, muted: Set<Address>) {
        reliability = PushReliability(settings: settings, policy: policy, restoring: saved?.reliability ?? .init(), muted: muted)
        gate = CatchUpGate(settings: settings, policy: policy, restoring: saved?.gate ?? .init())
        poller = FallbackPoller(settings: settings, policy: policy)
        refresh = BackgroundRefresh(settings: settings, policy: policy)
        connection = ConnectionLifecycle(settings: settings, policy: policy)
        verifier = PushVerifier(policy: policy)
        watch = PushWatch(policy: policy)
        closing.delay = verifier.overdueAfter
        notifier = NotificationPresenter(settings: settings, preview: saved?.preview ?? .message)
    }
}
