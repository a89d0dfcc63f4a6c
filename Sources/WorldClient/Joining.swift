import Dispatch
import Foundation
import NIOHTTP1
import SyncCore
import SyncEngine
import Wire
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
        var fields: [(String, JSONValue)] = [("user", .string(user))]
        if let invite { fields.append(("invite", .string(invite))) }
        do {
            answer = try io.requestNow(.POST, "/v1/join", body: JSONValue.object(fields).data, token: secret)
        } catch {
            throw Refused(description: "cannot reach synchat server: \(io.words(for: error))")
        }
        guard answer.status == 200 || answer.status == 201 else { throw Refused(description: "server: \(answer.error)") }
        guard let root = WireValue.parse(answer.body),
              let address = root["address"]?.string,
              let clock = root["clock"]?.int64.map({ Instant(milliseconds: $0) }),
              let speed = root["speed"]?.string.flatMap(Double.init), speed > 0,
              let list = root["contacts"]?.array, let contacts = Self.contacts(list) else {
            throw Refused(description: "server: the answer to join is not a synchat server's")
        }
        let given = root["secret"]?.string
        guard let kept = given ?? secret else { throw Refused(description: "server: no secret in the answer to join") }
        return Joined(user: user, secret: kept, isNew: given != nil, address: Address(address), clock: clock, speed: speed, contacts: contacts,
                      people: Self.people(list))
    }

    static func contacts(_ list: [WireValue]) -> [Contact]? {
        var out: [Contact] = []
        for c in list {
            guard let handle = c["handle"]?.string, let address = c["address"]?.string, let name = c["displayName"]?.string else { return nil }
            out.append(Contact(address: Address(address), handle: handle, displayName: name))
        }
        return out
    }

    /// The addresses marked `person` in a list of contacts.
    static func people(_ list: [WireValue]) -> Set<Address> {
        Set(list.compactMap { c in
            guard c["person"]?.int64 == 1, let a = c["address"]?.string else { return nil }
            return Address(a)
        })
    }
}
