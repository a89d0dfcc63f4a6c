/// The node's WebSocket (`Route.node`): JSON-RPC in the style of Kaspa's wRPC.
public enum NodeMethod: String, CaseIterable, Sendable {
    /// Request, params `addresses`: the user's own address only; answered once the node took
    /// the subscription, then `utxosChangedNotification`s.
    case subscribeUtxosChanged
    /// Request, params `addresses` and optionally `since` (ms of the world's clock): the UTXO
    /// set, answered with `entries` (txIds).
    case getUtxosByAddresses
    /// Request: the engine's keepalive, answered only by a live, delivering node.
    case ping
    /// Notification, params `transaction` (a `MessageDocument`) and `at` (the world's instant
    /// it left the server).
    case utxosChangedNotification
}

/// The push relay's WebSocket (`Route.push`), held by the phone's OS.
public enum RelayMethod: String, CaseIterable, Sendable {
    /// Requests of the client.
    case registerToken, unregisterToken
    /// Request, params `contact` (an address) and `muted` (true or false).
    case setMuted
    /// Notification, params `status`: the token's status.
    case tokenStatus
    /// Notification, params `payload`: the APNs-style userInfo, as a JSON string.
    case push
    /// Notification: another user joined, params `joined` (a `ContactDocument`); without it,
    /// ask `Route.world` again.
    case contactsChanged
    /// Notification, params `directive` (a `DirectiveDocument`): a directive of the app for the client to do (`synchat
    /// fault --user NAME background`).
    case directive
    /// Notification, params `faults` (a `FaultsDocument`): the user's world's faults, each time they change.
    case faults
}
