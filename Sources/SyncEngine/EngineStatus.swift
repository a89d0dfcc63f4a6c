import SyncCore

/// Everything a status bar says about the engine (docs/screen.md), as one value. The engine sends
/// it as a `.status` event whenever it changes; times are instants, so that a view can show
/// ages against its own clock without asking again.
public struct EngineStatus: Equatable, Sendable {
    /// The realtime channel as the status bar names it: the subscription's state, or
    /// `polling` while rule 13's fallback poller stands in for it.
    public enum Realtime: String, Sendable, CaseIterable {
        case live, connecting, polling, stale, offline
    }

    public var lifecycle: Lifecycle = .launched
    public var realtime: Realtime = .offline
    public var push: PushState = .unknown
    public var misses = 0
    public var missThreshold = 3
    public var token: TokenStatus = .none
    public var mode: NotificationMode = .remotePush
    public var preview: PreviewMode = .message
    /// When the last complete catch-up finished (rule 6's reference).
    public var lastCatchUpAt: Instant?
    /// When rule 6's debounce ends; nil when a trigger may run now.
    public var debounceEndsAt: Instant?
    /// Backend requests so far.
    public var requests = 0
    /// The unread count the app's icon shows (rule 15).
    public var badge = 0
    /// Why the store cannot write (`disk full`); nil while writes land.
    public var storeTrouble: String?
    /// Changes kept in memory until the store can write them.
    public var unsaved = 0
    /// Messages written that the network has not taken yet (sending or failed).
    public var unsent = 0

    public init() {}
}

extension EngineStatus.Realtime {
    /// The word for a connection state, `polling` when the poller is active (rule 13).
    public init(_ state: RealtimeState, polling: Bool) {
        if polling { self = .polling; return }
        switch state {
        case .live: self = .live
        case .connecting: self = .connecting
        case .stale: self = .stale
        case .offline: self = .offline
        }
    }
}
