import SyncCore

/// (b), (e)–(g): what the app knows it has covered, beyond the cursors: the newest message
/// seen per object from any channel, how far a proof and each fetch reached, the looks that
/// counted the indexer's messages, and the reply items the indexer keeps serving broken.
struct Coverage {
    /// (e): the newest block time the app has of each sync object, from any channel (a
    /// cursor moves only with fetches; push and realtime bring messages past it).
    var newestSeen: [SyncObject: Instant] = [:]
    /// (b): outputs the user's sends spent whose messages the store lacks. The UTXO set no
    /// longer shows them, so a proven gap is the UTXO set's unknown txIds plus these.
    var spentUnstored: Set<String> = []
    /// (b): the app has every incoming output that landed before this instant (a complete
    /// full sync, or a complete proof, established it), so a proof asks the node only for
    /// the outputs since then, less the reorg buffer: the reply grows with what is new, not
    /// with the address's history. Nil until the first complete full sync of this launch.
    var provenThrough: Instant?
    /// (b): when the UTXO set of each targeted run was asked for.
    var utxoAskedAt: [Int: Instant] = [:]
    /// (f): when the refresh's look asked the tips, and the refresh sync that fetches every
    /// object they showed moved: completed, everything indexed before the look is stored.
    var lookAskedAt: Instant?
    /// (g): the window the look out ((e)'s push check or (f)'s refresh look) counts messages in
    /// (`IndexerCall.tipCounting`); nil when it asked the plain tips.
    var lookCounts: (after: Instant, through: Instant)?
    /// (g): per object, how many messages short the app stays of the counts after a fetch covered
    /// the window that begins at `after` (`countedShort`).
    var unfillable: (after: Instant?, short: [SyncObject: Int]) = (nil, [:])
    /// (g): per object, up to when its last complete fetch asked (what was indexed by then): a
    /// cursor moves only with a message, this also with an empty reply.
    var fetchedThrough: [SyncObject: Instant] = [:]
    /// (f): the refresh sync whose completion proves everything indexed through the look stored.
    var refreshCovers: (runId: Int, through: Instant)?
    /// (g): a reconnect joined a sync whose requests went out before its gap began: once that
    /// sync ends, the reconnect's trigger is asked again, for the gap it did not cover.
    var reconnectAfterRun: CatchUpTrigger?
    /// Reply items the indexer keeps serving broken (see `RejectedItems`).
    var rejectedItems: RejectedItems

    init(rejectedItemAttempts: Int) { rejectedItems = RejectedItems(attempts: rejectedItemAttempts) }
}

/// Rules 1, 2, 12: the push channel as the app has it — how notifications reach it, the
/// token, the OS's permission — and the pushes waiting in the extension's store.
struct PushChannel {
    var mode: NotificationMode
    var tokenStatus: TokenStatus
    /// Whether the OS lets the app show notifications (rule 1).
    var permissionGranted: Bool
    /// The token expired or went invalid: registered again once the app is active.
    var reregisterWhenActive = false
    /// The pushes waiting in the extension's store (rule 12), with their arrival times, and
    /// those of them not stored as messages yet: kept here so that the badge and banners
    /// stay O(1).
    var pendingArrivals: [String: Instant] = [:]
    var pendingUnstored: Set<String> = []
}

/// The app as the user has it: this launch, the conversation on screen, the realtime
/// connection opened for it, a return to the foreground under way.
struct Presence {
    /// The store held what an earlier run of the app learned: this launch is a relaunch.
    let relaunched: Bool
    /// The conversation on screen (`EngineInput.viewing`).
    var viewing: Address?
    /// The realtime connection last opened; its events count, a superseded attempt's not.
    var currentConnection: Int?
    /// The app is coming to the foreground, its recovery (rules 10–11) not begun yet: what the
    /// pending pushes show is judged now, and (g) owes rule 4's catch-up to that recovery.
    var resuming = false
}

/// Rule 14: the background refresh asked of the OS and granted by it.
struct RefreshAsked {
    /// The sync a background refresh is running (light, or naive's full one).
    var runId: Int?
    /// The task the OS granted, until it expires.
    var task: Int?
    /// The earliest instant of the refresh asked of the OS, while one is asked.
    var earliest: Instant?
}

/// What the engine last said of itself: the status, and the inspection while someone looks.
struct Reports {
    /// The last status sent.
    var lastStatus: EngineStatus?
    /// Someone looks at the inspector: `.inspection` events are sent (see `EngineInspection`).
    var inspecting = false
    var lastInspection: EngineInspection?
}
