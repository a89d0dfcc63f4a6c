import Directives
import Dispatch
import Foundation
import NIOHTTP1
import ServerProtocol
import SyncCore
import SyncEngine
import Wire
/// The push relay: one WebSocket the phone's OS holds.
extension NetworkWorld {
    func openPushRelay() {
        pushOpen = false
        pushReopen += 1  // a reconnect scheduled before this one is void
        var opened = false
        pushSocket = io.openSocket(Route.push, token: secret, opened: { [weak self] socket in
            guard let self else { return }
            opened = true
            pushOpen = true
            pushBackoff = .seconds(1)
            app?.pushPathChanged(open: true)
            serverHeard()
            for frame in pushQueue { socket.send(frame) }
            pushQueue.removeAll()
            // Whatever was said while the relay was away (a user who joined before it opened,
            // or while it reconnected) is asked for again now, not waited for.
            refreshContacts()
        }, text: { [weak self] data in
            self?.pushFrame(data)
        }, closed: { [weak self] code, reason in
            guard let self else { return }
            pushOpen = false
            pushSocket = nil
            // The relay is the OS's socket, always held: a server that refuses it for the
            // user's secret no longer knows the user (nothing to try again), and one whose
            // opening fails again is gone (its faults are not known meanwhile).
            if opened { app?.pushPathChanged(open: false) }
            if reason.hasSuffix("HTTP 401") { return link = .forgotten(unknownWords) }
            // Unreachable only when nothing else hears the server either: a node subscribed
            // now is the server answering (the bar never says `live` beside `server unreachable`).
            if !opened, link == .reached, !nodeSubscribed { link = .unreachable }
            notice?("push relay closed: \(Frame.closeWords(code: code, reason: reason)); again in \(pushBackoff)")
            // Reconnect with backoff, in wall time (the world's clock may run fast); sooner, once
            // anything else hears the server again (`serverHeard`).
            let wall = Double(pushBackoff.milliseconds)
            pushBackoff = .milliseconds(min(30_000, pushBackoff.milliseconds * 2))
            let reopen = pushReopen
            scheduler.schedule(after: .milliseconds(Int64(wall * speed)), "push relay reconnect") { [weak self] in
                if let self, reopen == pushReopen { openPushRelay() }
            }
        })
    }

    /// The server answered something (the relay opened, the node subscribed, an HTTP answer
    /// other than 401): it is reached — the one place that says so — and a relay waiting out its
    /// backoff opens now, so the push path's gap is no longer than the server's absence.
    func serverHeard() {
        if case .forgotten = link { return }
        link = .reached
        if pushSocket == nil { openPushRelay() }
    }

    /// Whether the node subscription is up now: the server is answering.
    var nodeSubscribed: Bool { node?.subscribed ?? false }

    func pushFrame(_ data: Data) {
        guard let app, case .notification(let method, let params)? = RPC.read(data) else { return }  // an answer to a request says nothing new
        switch RelayMethod(rawValue: method) {
        case .tokenStatus:
            if let raw = params["status"]?.string, let status = TokenStatus(rawValue: raw) { app.tokenStatusChanged(status) }
        case .push:
            guard let payload = params["payload"]?.string else { return }
            if os.foreground { app.pushDelivered(payload: Data(payload.utf8)) } else { app.notificationExtensionReceived(payload: Data(payload.utf8)) }
        case .contactsChanged:
            // Another user joined: the server says who (one entry, not every user again).
            if let joined = params["joined"], let c = ContactDocument.decode([joined])?.first {
                guard c.address != me else { return }
                people.insert(c.address)
                app.contactsKnown([c])
            } else {
                refreshContacts()
            }
        case .directive:
            if let raw = params["directive"] { onDirective?(Result { () throws(RouteError) in try DirectiveDocument.decode(raw) }) }
        case .faults:
            if let raw = params["faults"], let faults = FaultsDocument.decode(raw) { onFaults?(faults) }
        case .registerToken, .unregisterToken, .setMuted, nil:
            break
        }
    }

    func sendToRelay(_ method: RelayMethod, _ params: [(String, JSONValue)] = []) {
        let frame = RPC.request(id: 0, method.rawValue, params)
        if pushOpen, let pushSocket { pushSocket.send(frame) } else { pushQueue.append(frame) }
    }
}

extension NetworkWorld: PushPort {
    public func registerToken() { sendToRelay(.registerToken) }
    public func unregisterToken() { sendToRelay(.unregisterToken) }
    public func setMuted(_ contact: Address, _ muted: Bool) {
        sendToRelay(.setMuted, [("contact", .string(contact.value)), ("muted", .int(muted ? 1 : 0))])
    }
}
