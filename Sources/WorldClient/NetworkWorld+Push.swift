import Dispatch
import Foundation
import NIOHTTP1
import SyncCore
import SyncEngine
import Wire
/// The push relay: one WebSocket the phone's OS holds.
extension NetworkWorld {
    func openPushRelay() {
        pushOpen = false
        pushSocket = io.openSocket("/v1/push", token: secret, opened: { [weak self] socket in
            guard let self else { return }
            pushOpen = true
            pushBackoff = .seconds(1)
            for frame in pushQueue { socket.send(frame) }
            pushQueue.removeAll()
        }, text: { [weak self] data in
            self?.pushFrame(data)
        }, closed: { [weak self] code, reason in
            guard let self else { return }
            pushOpen = false
            pushSocket = nil
            notice?("push relay closed (\(code) \(reason)); again in \(pushBackoff)")
            // Reconnect with backoff, in wall time (the world's clock may run fast).
            let wall = Double(pushBackoff.milliseconds)
            pushBackoff = .milliseconds(min(30_000, pushBackoff.milliseconds * 2))
            scheduler.schedule(after: .milliseconds(Int64(wall * speed)), "push relay reconnect") { [weak self] in self?.openPushRelay() }
        })
    }

    func pushFrame(_ data: Data) {
        guard let app, let frame = WireValue.parse(data), frame.object != nil else { return }
        let params = frame["params"] ?? .object([:])
        switch frame["method"]?.string {
        case "tokenStatus":
            if let raw = params["status"]?.string, let status = TokenStatus(rawValue: raw) { app.tokenStatusChanged(status) }
        case "push":
            guard let payload = params["payload"]?.string else { return }
            if os.foreground { app.pushDelivered(payload: Data(payload.utf8)) } else { app.notificationExtensionReceived(payload: Data(payload.utf8)) }
        case "contactsChanged":
            // Another user joined: the server says who (one entry, not every user again).
            if let joined = params["joined"], let list = Self.contacts([joined]), let c = list.first {
                guard c.address != me, !contacts.contains(where: { $0.address == c.address }) else { return }
                contacts.append(c)
                people.insert(c.address)
                contactsChanged?(contacts)
            } else {
                refreshContacts()
            }
        case "directive":
            if let line = params["line"]?.string { onDirective?(line) }
        case "faults":
            if let words = params["active"]?.array?.compactMap(\.string) { onFaults?(words) }
        default:
            break  // answers to our requests
        }
    }

    func sendToRelay(_ method: String, _ params: [(String, JSONValue)] = []) {
        let frame = JSONValue.object([("id", .int(0)), ("method", .string(method)), ("params", .object(params))])
        if pushOpen, let pushSocket { pushSocket.send(frame) } else { pushQueue.append(frame) }
    }
}

extension NetworkWorld: PushPort {
    public func registerToken() { sendToRelay("registerToken") }
    public func unregisterToken() { sendToRelay("unregisterToken") }
    public func setMuted(_ contact: Address, _ muted: Bool) {
        sendToRelay("setMuted", [("contact", .string(contact.value)), ("muted", .int(muted ? 1 : 0))])
    }
}
