import SyncCore
// Every file of this target sees the test clock's words (`at`, `t`): CoreTestSupport, which builds nothing above SyncCore.
@_exported import CoreTestSupport

let operational = PushConditions(mode: .remotePush, permissionGranted: true, tokenStatus: .active)

/// A reliability machine with push operational, in the given state.
func machine(_ state: PushState = .unknown, misses: Int = 0, lastReregisterAt: Instant? = nil, policy: SyncPolicy = .seed) -> PushReliability {
    var m = PushReliability(policy: policy, restoring: .init(state: state, consecutiveMisses: misses, lastReregisterAt: lastReregisterAt))
    _ = m.conditionsChanged(operational, now: .zero)
    m.appResumed()  // the app is active
    return m
}

extension Array where Element == PushReliability.Action {
    var stateChanges: [PushState] {
        compactMap { if case .stateChanged(_, let to, _) = $0 { return to } else { return nil } }
    }
}
let alice = Address("kaspa:alice")
