import Foundation
import NIOCore
import NIOWebSocket
import Directives
import SimulatedWorld
import SyncCore
import SyncEngine
import ServerProtocol
import Wire

/// `GET /v1/push` upgraded: the push relay the phone's OS holds. It delivers while the app
/// is in the background (the OS, not the app, holds the socket). Methods: `registerToken`,
/// `unregisterToken`, `setMuted` (params `contact`, `muted`); notifications: `tokenStatus`
/// (params `status`), `push` (params `payload`: the APNs-style userInfo as a JSON string),
/// `contactsChanged` (another user joined: params `joined`, the new contact; without it, ask
/// `GET /v1/world`), `directive` (params `directive`: a `DirectiveDocument`, what the app is to
/// do, sent by `synchat fault --user NAME`). One push socket a user: a newer one
/// replaces the older, which is closed with 1008.
final class PushSocket: JSONSocket, PushSubscriber {
    override func handlerAdded(context: ChannelHandlerContext) {
        super.handlerAdded(context: context)
        if let older = user.link.pushSocket as? PushSocket, older !== self {
            older.close(code: .policyViolation, reason: "replaced by a newer push socket")
        }
        user.link.pushSocket = self
        user.link.contactsChanged = { [weak self] joined in
            self?.send(RPC.notification(RelayMethod.contactsChanged.rawValue, joined.map { [("joined", ContactDocument.encode($0))] } ?? []))
        }
        // A user who joins between this client's join and this socket would be told to nobody,
        // and the two would never see each other. Each new relay socket starts
        // with a contactsChanged, so the client asks for its contacts once more.
        user.link.contactsChanged?(nil)
    }

    override func request(id: String?, method: String, params: [String: WireValue]) {
        let push = user.world.push
        switch RelayMethod(rawValue: method) {
        case .registerToken: push.registerToken(); reply(id, method)
        case .unregisterToken: push.unregisterToken(); reply(id, method)
        case .setMuted:
            // `muted`: true or false (1 or 0, as the client has sent it, too).
            guard let contact = params["contact"]?.string, let muted = params["muted"]?.bool ?? params["muted"]?.int64.flatMap({ [0, 1].contains($0) ? $0 == 1 : nil }) else {
                return error(id, "setMuted: params must have contact (an address) and muted (true or false)")
            }
            // Only a contact of the user's (any string would be kept otherwise, 60 KB names included), and
            // saved with the contact, so a mute outlives a restart.
            guard let c = user.world.contact(address: Address(contact)) else {
                return error(id, "setMuted: \(contact.prefix(80)) is not a contact of \(user.name)")
            }
            push.setMuted(c.address, muted)  // kept with the contact by the world
            reply(id, method)
        case .tokenStatus, .push, .contactsChanged, .directive, .faults, nil:
            error(id, "unknown method \"\(method.prefix(40))\" (expected registerToken, unregisterToken, setMuted)")
        }
    }

    func push(_ payload: Data) {
        send(RPC.notification(RelayMethod.push.rawValue, [("payload", .string(String(decoding: payload, as: UTF8.self)))]))
    }

    func tokenStatus(_ status: TokenStatus) {
        send(RPC.notification(RelayMethod.tokenStatus.rawValue, [("status", .string(status.rawValue))]))
    }

    func directive(_ d: Directive) {
        send(RPC.notification(RelayMethod.directive.rawValue, [("directive", DirectiveDocument.encode(d))]))
    }

    func faults(_ faults: WorldFaults) {
        send(RPC.notification(RelayMethod.faults.rawValue, [("faults", FaultsDocument.encode(faults))]))
    }

    override func closed() {
        if user.link.pushSocket === self {
            user.link.pushSocket = nil
            user.link.contactsChanged = nil
        }
    }
}
