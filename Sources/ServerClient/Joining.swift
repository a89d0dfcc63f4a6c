import Foundation
import ServerProtocol
import SyncCore
import SyncEngine

/// Where a client keeps the secret a server gave its user at the first join (a profile, a file
/// of the bot's, a test's memory): joining reads it, and keeps a new one.
public protocol SecretKeeping {
    func load() -> String?
    func save(_ secret: String) throws
}

/// A secret kept in memory only (an `--ephemeral` chat, a test).
public final class SecretInMemory: SecretKeeping {
    public private(set) var secret: String?
    public init(_ secret: String? = nil) { self.secret = secret }
    public func load() -> String? { secret }
    public func save(_ secret: String) throws { self.secret = secret }
}

extension NetworkWorld {
    /// What joining answered.
    public struct Joined {
        public var user: String
        public var secret: String
        public var isNew: Bool
        public var address: Address
        public var clock: Instant
        public var speed: Double
        public var contacts: [Contact]
        public var people: Set<Address> = []
    }

    public struct Refused: Error, CustomStringConvertible {
        public var description: String
    }

    /// Joins (or rejoins with `secret`) as `user`; waits for the answer.
    /// `invite`: the server's code, which a first join must show (`synchat server` prints it).
    public static func join(_ io: ServerTransport, user: String, secret: String?, invite: String? = nil) throws -> Joined {
        let answer: NetIO.Answer
        do {
            answer = try io.requestNow(.POST, Route.join, body: JoinRequest(user: user, invite: invite).document.data, token: secret)
        } catch {
            throw Refused(description: "cannot reach synchat server: \(io.words(for: error))")
        }
        guard answer.status == 200 || answer.status == 201 else { throw Refused(description: "server: \(answer.error)") }
        let joined: JoinAnswer
        do { joined = try JoinAnswer.decode(answer.body) } catch { throw Refused(description: "server: \(error.message)") }
        guard let kept = joined.secret ?? secret else { throw Refused(description: "server: no secret in the answer to join") }
        return Joined(user: user, secret: kept, isNew: joined.secret != nil, address: joined.address, clock: joined.world.clock,
                      speed: joined.world.speed, contacts: joined.world.contacts, people: joined.world.people)
    }
}

extension NetworkSession {
    /// Joins `user` on the server behind `io` with the secret `secrets` keeps (a new one is
    /// kept there), and makes its session: the world's ports on the client's sockets, the
    /// phone's OS from `os`, the engine on `storage`. The one way in, for the chat, the bot,
    /// the in-process pair and the bench. Nothing runs until `start()`.
    public static func join(_ io: ServerTransport, user: String, invite: String?, secrets: SecretKeeping, storage: ChatStorage,
                            policy: SyncPolicy, mode: NotificationMode = .remotePush, adminToken: String? = nil,
                            os: @escaping (Scheduler) -> DeviceOS,
                            clock: @escaping () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }) throws -> (session: NetworkSession, isNew: Bool) {
        let joined = try NetworkWorld.join(io, user: user, secret: secrets.load(), invite: invite)
        if joined.isNew {
            do { try secrets.save(joined.secret) } catch {
                throw NetworkWorld.Refused(description: "cannot keep the secret of \(user): \(error)")
            }
        }
        let world = NetworkWorld(io: io, joined: joined, os: os, clock: clock)
        return (NetworkSession(world: world, storage: storage, policy: policy, mode: mode, adminToken: adminToken), joined.isNew)
    }
}
