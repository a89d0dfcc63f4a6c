import Foundation
import SyncCore
import SyncEngine
import Wire

/// What a push service keeps for a device it cannot reach (`push model`, docs/simulate.md#push-models; sources in
/// docs/reliability.md): `ideal` keeps everything and delivers it when the device is back;
/// `apns` keeps only the latest notification for the app, older ones dropped, until an
/// expiry; `fcm` keeps up to 100 and, past that, drops them all and tells the app "messages
/// deleted" when the device is back.
public enum PushModel: String, Sendable, CaseIterable {
    case ideal, apns, fcm
}

/// The push service (docs/spec.md#terms). Keeps the device token (`new → registered → active`, or
/// `expired` / `invalid`) and, for every incoming message from a contact that is not muted,
/// delivers an APNs-like payload after a latency draw unless dropped. In the foreground the
/// app handles it at once; in the background the notification extension gets it.
/// Faults: `drop P%` (silent loss), `delay D` (added latency), `down` (nothing is sent).
public final class SimPushService: PushPort {
    public var dropPercent: Double = 0
    public var extraDelay: Interval = .zero
    public var down = false
    /// What the service keeps while the device is unreachable.
    public var model: PushModel = .ideal
    /// `apns`: how long the one notification kept is kept (APNs stores up to 30 days).
    public var apnsExpiry: Interval = .hours(24 * 30)
    /// `fcm`: how many notifications are kept before all are dropped.
    public static let fcmPendingLimit = 100
    /// The device has no network (`network off`): deliveries wait, as the model says.
    public private(set) var deviceUnreachable = false
    /// What waits for the device, with when each was held, in order.
    private var held: [(message: NetworkMessage, payload: Data, readable: Bool, at: Instant)] = []
    /// `fcm`: the pending limit was passed: "messages deleted" is owed to the device.
    private var deletedOwed = false
    /// Ground truth: notifications dropped for the device being unreachable (by the model).
    public private(set) var droppedWhileUnreachable = 0
    public private(set) var tokenStatus: TokenStatus = .none
    /// Ground truth: registrations asked for, pushes sent and dropped.
    public private(set) var registrations = 0
    public private(set) var sent = 0
    public private(set) var dropped = 0
    /// Ground truth: bytes of the pushes that reached the app or its extension (payloads).
    public private(set) var deliveredBytes = 0
    /// Ground truth: when a readable push of `txId` reached the app or its extension.
    public func deliveredAt(_ txId: String) -> Instant? { history.pushDeliveredAt(txId) }
    /// Ground truth: whether a push of `txId` reached the app or its notification extension.
    public func delivered(_ txId: String) -> Bool { history.pushDeliveredAt(txId) != nil }
    /// Ground truth: incoming messages the service owed a push (token active, sender not
    /// muted when they landed), whether or not a fault then dropped or delayed it.
    public var owedPushes: [String] { history.owedPushes }
    private let history: WorldHistory
    /// Test knob: the next N payloads are malformed.
    public var malformedPayloads = 0
    /// Test knob (the wire fuzzer): may replace a push payload on its way out; returns nil to
    /// leave it as it is. A replaced push is not counted as delivered: the app could not read it.
    public var rewritePayload: ((Data) -> Data?)?
    /// Ground truth: pushes the rewrite replaced.
    public private(set) var rewrittenPayloads = 0

    weak var world: SimulatedWorld?
    private var mutedAddresses: Set<Address> = []
    private let scheduler: Scheduler
    private let timings: WorldTimings
    private var registrationGeneration = 0

    init(seed: UInt64, scheduler: Scheduler, timings: WorldTimings, history: WorldHistory) {
        self.history = history
        self.scheduler = scheduler
        self.timings = timings
    }

    public func registerToken() {
        registrations += 1
        // Re-registering an active token refreshes it on the server; it stays active, and the
        // app is told so (as iOS hands the token to every launch).
        guard tokenStatus != .active else {
            set(.active)
            return
        }
        registrationGeneration += 1
        let generation = registrationGeneration
        set(.new)
        scheduler.schedule(after: timings.tokenStep, "token registered") { [self] in
            guard generation == registrationGeneration, tokenStatus == .new else { return }
            set(.registered)
            scheduler.schedule(after: timings.tokenStep, "token active") { [self] in
                guard generation == registrationGeneration, tokenStatus == .registered else { return }
                set(.active)
            }
        }
    }

    /// A resumed profile's token, as it was (no callback: the app kept its own copy).
    func restoreToken(_ status: TokenStatus) {
        tokenStatus = status
    }

    public func setMuted(_ contact: Address, _ muted: Bool) {
        if muted { mutedAddresses.insert(contact) } else { mutedAddresses.remove(contact) }
        world?.keepMute(contact, muted)
    }

    public func unregisterToken() {
        registrationGeneration += 1
        set(.none)
    }

    /// Fault `token expire` / `token invalidate`.
    public func expireToken() { registrationGeneration += 1; set(.expired) }
    public func invalidateToken() { registrationGeneration += 1; set(.invalid) }

    private func set(_ status: TokenStatus) {
        tokenStatus = status
        world?.faultsMayHaveChanged()
        scheduler.schedule(after: .zero, "token status") { [weak self] in
            self?.world?.client?.tokenStatusChanged(status)
        }
    }

    /// The service sees an incoming message land and decides, with the fault settings of
    /// that moment, whether and when to push it.
    func messageLanded(_ message: NetworkMessage, sender: Contact?, latency: Interval, dropDraw: Double) {
        guard tokenStatus == .active, !mutedAddresses.contains(message.conversation) else { return }
        history.markPushOwed(message.txId)
        guard !down else { return }
        if dropDraw * 100 < dropPercent {
            dropped += 1
            return
        }
        sent += 1
        let isMalformed = malformedPayloads > 0
        var payload = isMalformed ? malformed() : Self.payload(for: message, sender: sender)
        var readable = !isMalformed
        if let rewritePayload, let other = rewritePayload(payload) {
            payload = other
            readable = false
            rewrittenPayloads += 1
        }
        scheduler.schedule(after: latency + extraDelay, "push delivery") { [self] in
            if deviceUnreachable { return hold(message, payload: payload, readable: readable) }
            deliver(message, payload: payload, readable: readable)
        }
    }

    private func deliver(_ message: NetworkMessage, payload: Data, readable: Bool) {
        guard let world, let client = world.client else { return }
        if readable {
            history.markPushDelivered(message.txId, at: scheduler.now)
        }
        deliveredBytes += payload.count
        if world.os.foreground {
            world.wakeUps.traffic(at: scheduler.now)
            client.pushDelivered(payload: payload)
        } else {
            world.wakeUps.pushProcessedWhileSuspended(at: scheduler.now)
            client.notificationExtensionReceived(payload: payload)
        }
    }

    /// The device cannot be reached: keep the notification as the model says.
    private func hold(_ message: NetworkMessage, payload: Data, readable: Bool) {
        switch model {
        case .ideal:
            held.append((message, payload, readable, scheduler.now))
        case .apns:
            droppedWhileUnreachable += held.count
            held = [(message, payload, readable, scheduler.now)]
        case .fcm:
            held.append((message, payload, readable, scheduler.now))
            if held.count > Self.fcmPendingLimit {
                droppedWhileUnreachable += held.count
                held.removeAll()
                deletedOwed = true
            }
        }
    }

    /// `network off` / `network on`: the device's network. When it is back, what was kept is
    /// delivered (what expired is dropped), and `fcm` says "messages deleted" if it dropped.
    public func deviceNetwork(reachable: Bool) {
        deviceUnreachable = !reachable
        guard reachable else { return }
        let kept = held
        held.removeAll()
        let now = scheduler.now
        for h in kept {
            if model == .apns, now - h.at > apnsExpiry { droppedWhileUnreachable += 1; continue }
            scheduler.schedule(after: .milliseconds(500), "push delivery (device back)") { [self] in
                if deviceUnreachable { return hold(h.message, payload: h.payload, readable: h.readable) }
                deliver(h.message, payload: h.payload, readable: h.readable)
            }
        }
        if deletedOwed {
            deletedOwed = false
            scheduler.schedule(after: .milliseconds(500), "push messages deleted") { [weak self] in
                self?.world?.client?.pushMessagesDeleted()
            }
        }
    }

    private func malformed() -> Data {
        malformedPayloads -= 1
        return Data("{\"aps\": {\"alert\": \"x\"}, \"synchat\": {\"txId\": 7, \"kind\": \"smoke\"}}".utf8)
    }

    /// The wire format: an APNs `userInfo` with the message in a `synchat` object.
    static func payload(for m: NetworkMessage, sender: Contact?) -> Data {
        JSONValue.object([
            ("aps", .object([
                ("alert", .object([("title", .string(sender?.displayName ?? m.conversation.value)), ("body", .string(m.body))])),
                ("mutable-content", .int(1)),
                ("thread-id", .string(m.conversation.value)),
            ])),
            ("synchat", .object([
                ("txId", .string(m.txId)),
                ("sender", .string(m.conversation.value)),
                ("kind", .string(m.kind.rawValue)),
                ("blockTime", .int(m.blockTime.milliseconds)),
                ("payload", .string(m.body)),
            ])),
        ]).data
    }
}
