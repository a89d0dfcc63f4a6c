import Directives
import Foundation
import SyncCore
import SyncEngine

/// What one user may make the server hold: indexer answers pending, bytes of messages kept,
/// and how long its own faults may make the world wait. Each limit is a `WorldServer` setting
/// (`synchat server --pending-answers`, `--user-quota`, `--fault-max`).
extension WorldServer {
    /// Sends an indexer call for `user` unless it has `maxPendingAnswers` pending already
    /// (then nil: the caller answers 429). `reply` runs once the world answers.
    func indexerCall(_ call: IndexerCall, for user: WorldHost.User, reply: @escaping (Result<Data, TransportError>) -> Void) -> Bool {
        let pending = pendingAnswers[user.name, default: 0]
        guard pending < maxPendingAnswers else { return false }
        pendingAnswers[user.name] = pending + 1
        user.world.indexer.send(call) { [weak self] result in
            if let self {
                let left = pendingAnswers[user.name, default: 1] - 1
                pendingAnswers[user.name] = left > 0 ? left : nil
            }
            reply(result)
        }
        return true
    }

    /// Bytes of message text `user` has the server keep: what it published, counted from its
    /// ledger once (at its first need after a start), then kept up to date with what it
    /// publishes and what its own `receive` lines make its contacts write. The simulated
    /// contacts' own traffic is the server's, and not counted.
    func storedBytes(of user: WorldHost.User) -> Int {
        if let known = storedBytes[user.name] { return known }
        let counted = user.world.ledger.reduce(0) { $0 + ($1.direction == .outgoing ? $1.body.utf8.count : 0) }
        storedBytes[user.name] = counted
        return counted
    }

    /// Why `user` may not have `bytes` more kept, or nil.
    func overQuota(_ user: WorldHost.User, _ bytes: Int) -> String? {
        let held = storedBytes(of: user)
        guard held + bytes > userQuotaBytes else { return nil }
        return "\(user.name) keeps \(Self.size(held)) of messages on this server, and may keep \(Self.size(userQuotaBytes)) (its quota): "
            + "this one is not kept; ask the server's operator"
    }

    /// `bytes` more are kept for `user`.
    func kept(_ user: WorldHost.User, _ bytes: Int) {
        storedBytes[user.name] = storedBytes(of: user) + bytes
    }

    /// Why a user's own directive asks the world for longer than a demo needs, or nil.
    func overlong(_ directive: Directive) -> String? {
        let asked: Interval
        switch directive {
        case .fault(.indexerLatency(let d)), .fault(.pushDelay(let d)): asked = d
        default: return nil
        }
        guard asked > maxUserFaultDuration else { return nil }
        return "\(directive.scenarioText): a user's own fault waits at most \(maxUserFaultDuration) (the operator may give longer)"
    }

    /// `bytes` in words: `8 MiB`, `512 KiB`, `300 bytes`.
    static func size(_ bytes: Int) -> String {
        if bytes >= 1 << 20, bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 20 { return String(format: "%.1f MiB", Double(bytes) / Double(1 << 20)) }
        if bytes >= 1 << 10 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }
}

extension WorldServer {
    /// The refusal of a first join that shows `shown` for the server's `invite`, or nil when
    /// it may go on. Wrong ones are counted server-wide; past `failedInvitesPerMinute`, every
    /// first join is refused until the count refills.
    func inviteRefused(_ shown: String, _ invite: String) -> Answer? {
        let now = monotonic()
        guard !failedInvites.limited(0, now: now) else {
            return .error(.tooManyRequests, "join: too many wrong invites on this server lately; try again in a minute")
        }
        guard !WorldHost.constantTimeEqual(shown, invite) else { return nil }
        _ = failedInvites.allow(0, now: now)
        if failedInvites.limited(0, now: now), !saidInvitesGuessed {
            saidInvitesGuessed = true
            log("more than \(failedInvitesPerMinute) wrong invites a minute, all addresses together: first joins are refused "
                + "until they slow down (is someone guessing the invite?); said once")
        }
        return .error(.forbidden, "join: that invite is not this server's; ask its operator for the code")
    }
}
