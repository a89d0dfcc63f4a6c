import Foundation

/// Users who are away (docs/server.md, "Users who are away"): no request and no socket for
/// `awayAfterMs`, their simulated contacts write nothing until they are back.
extension WorldHost {
    /// The user made a request or holds a socket now: back from away, its contacts write again
    /// (from now: nothing is made up for the time away).
    public func seen(_ user: User) {
        user.lastSeenWallMs = wallClock()
        guard user.world.traffic.paused else { return }
        advance()
        user.world.traffic.unpause()
    }

    /// Pauses the contacts of every user away longer than `awayAfterMs`, except those
    /// `present` (holding a socket). Returns how many are away now.
    @discardableResult
    public func pauseAway(present: (User) -> Bool) -> Int {
        let now = wallClock()
        var away = 0
        for user in users {
            if user.world.traffic.paused { away += 1; continue }
            guard now - user.lastSeenWallMs >= awayAfterMs, !present(user) else { continue }
            user.world.traffic.pause()
            away += 1
        }
        return away
    }
}
