import Directives
import Foundation
import NIOHTTP1
import SimulatedWorld
import SyncCore
import SyncEngine
import ServerProtocol
import Wire

/// The HTTP routes: each request is answered by a function of the request and the world
/// (no socket here; `RequestHandler` reads and writes the bytes).
extension WorldServer {
    /// The user a request's `Authorization: Bearer SECRET` names, if any.
    func user(_ headers: HTTPHeaders) -> WorldHost.User? {
        bearer(headers).flatMap { host.user(secret: $0) }
    }

    /// The credential of `Authorization: Bearer CREDENTIAL`; the scheme's case does not matter
    /// (RFC 7235 §2.1: `bearer` is `Bearer`).
    func bearer(_ headers: HTTPHeaders) -> String? {
        guard let value = headers.first(name: "Authorization") else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return String(parts[1]).trimmingCharacters(in: .whitespaces)
    }

    struct Answer {
        var status: HTTPResponseStatus
        var body: Data
        static func json(_ status: HTTPResponseStatus, _ value: JSONValue) -> Answer { Answer(status: status, body: value.data) }
        static func error(_ status: HTTPResponseStatus, _ message: String) -> Answer { .json(status, ErrorDocument.encode(message)) }
        static func refused(_ e: RouteError) -> Answer { .error(HTTPResponseStatus(statusCode: e.status), e.message) }
    }

    /// One request, on the loop. `reply` is called once, maybe later (an indexer answer
    /// comes after the world's latency).
    /// `connection`: the connection the request came on, whose refused upgrade `shouldUpgrade`
    /// may have kept.
    func handle(method: HTTPMethod, uri: String, headers: HTTPHeaders, body: Data, peer: String = "?", connection: ObjectIdentifier? = nil,
                reply: @escaping (Answer) -> Void) {
        catchUp()
        defer { pump() }
        // The version first, before the path: a peer that speaks no synchat protocol learns
        // the one thing it must change, whatever it asked (an unknown path too).
        if let refused = versionRefused(headers, uri: uri, method: method, peer: peer) { return reply(refused) }
        guard uri.utf8.count <= Self.maxURIBytes else { return reply(.error(.uriTooLong, "the request line is longer than \(Self.maxURIBytes) bytes")) }
        guard let parts = URLComponents(string: uri) else { return reply(.error(.badRequest, "not a valid request path")) }
        let path = parts.path
        var query: [String: String] = [:]
        for item in parts.queryItems ?? [] {
            guard query[item.name] == nil else { return reply(.error(.badRequest, "parameter \(item.name) given twice")) }
            query[item.name] = item.value ?? ""
        }
        if path.hasPrefix(Route.adminPrefix) { return reply(admin(method: method, path: path, query: query, headers: headers, body: body)) }
        if path == Route.join {
            guard method == .POST else { return reply(.error(.methodNotAllowed, "\(method) \(path): use POST")) }
            guard allowJoin(from: peer) else {
                return reply(.error(.tooManyRequests, "more than \(joinsPerMinute) joins a minute from \(peer): slow down"))
            }
            return reply(join(body, headers: headers))
        }
        guard path.hasPrefix(Route.protocolPrefix) else { return reply(.error(.notFound, "no such endpoint: \(path.prefix(100))")) }
        if Route.sockets.contains(path) {
            return reply(socketRefusal(connection: connection, path: path, method: method, uri: uri, headers: headers))
        }
        guard let user = user(headers) else {
            return reply(.error(.unauthorized, "\(path.prefix(100)) needs Authorization: Bearer SECRET (the secret POST \(Route.join) gave)"))
        }
        guard allow(user.name) else {
            return reply(.error(.tooManyRequests, "more than \(Int(Self.requestsPerSecond)) requests a second (an answer costs one more each \(Self.bytesPerRequest / 1024) KB): slow down"))
        }
        host.seen(user)
        let reply: (Answer) -> Void = { [self, reply] answer in
            charge(user.name, answerBytes: answer.body.count)
            reply(answer)
        }
        switch path {
        case Route.world:
            guard method == .GET else { return reply(.error(.methodNotAllowed, "\(method) \(path): use GET")) }
            return reply(.json(.ok, .object(worldMembers(of: user))))
        case Route.publish:
            guard method == .POST else { return reply(.error(.methodNotAllowed, "\(method) \(path): use POST")) }
            return reply(publish(body, by: user))
        case Route.fault:
            // A user's own fault keys: any fault of the network, on its own world only.
            guard method == .POST else { return reply(.error(.methodNotAllowed, "\(method) \(path): use POST")) }
            return reply(fault(body, user: user, own: true))
        default: break
        }
        guard path.hasPrefix(Route.indexer) else { return reply(.error(.notFound, "no such endpoint: \(path.prefix(100))")) }
        guard method == .GET else { return reply(.error(.methodNotAllowed, "\(method) \(path): the indexer answers GET")) }
        let call: IndexerCall
        do { call = try IndexerRoute.call(path: parts.percentEncodedPath, query: query) } catch { return reply(.refused(error)) }
        let sent = indexerCall(call, for: user) { result in
            switch result {
            case .success(let data): reply(Answer(status: .ok, body: data))
            case .failure(let error): reply(.error(.serviceUnavailable, error.message))
            }
        }
        if !sent {
            reply(.error(.tooManyRequests, "\(user.name) has \(maxPendingAnswers) indexer answers pending already (its indexer is slow): wait for them"))
        }
    }

    /// The refusal of a request whose `ProtocolVersion.header` is missing or says another
    /// version, or nil. A refused join is said on stderr too (a client of another version,
    /// seen from the server's side), within the joins a peer may ask a minute.
    func versionRefused(_ headers: HTTPHeaders, uri: String = "", method: HTTPMethod = .GET, peer: String = "?") -> Answer? {
        guard let line = ProtocolVersion.refusal(header: headers[canonicalForm: ProtocolVersion.header].map(String.init)) else { return nil }
        if method == .POST, URLComponents(string: uri)?.path == Route.join, allowJoin(from: peer) {
            FileHandle.standardError.write(Data("synchat server: \(peer): join: \(line)\n".utf8))
        }
        return .error(.badRequest, line)
    }

    private func admin(method: HTTPMethod, path: String, query: [String: String], headers: HTTPHeaders, body: Data) -> Answer {
        guard let credential = bearer(headers), WorldHost.constantTimeEqual(credential, adminToken) else {
            return .error(.unauthorized, "admin endpoints need the header Authorization: Bearer TOKEN (the token synchat server printed at start)")
        }
        var user: WorldHost.User?
        if let name = query["user"] {
            guard let u = host.user(named: name) else { return .error(.notFound, "no user named \(name.prefix(40))") }
            user = u
        }
        if let extra = query.keys.first(where: { $0 != "user" && $0 != "page" }) {
            return .error(.badRequest, "unknown parameter \(extra.prefix(40)) (expected: user, or page)")
        }
        var page = 0
        if let text = query["page"] {
            guard user == nil else { return .error(.badRequest, "page is for the whole server's truth; one user's is one page") }
            guard let n = Int(text), (0...1_000_000).contains(n) else { return .error(.badRequest, "page \(text.prefix(20)): expected 0 to 1000000") }
            page = n
        }
        switch (method, path) {
        case (.GET, Route.adminTruth): return .json(.ok, user.map { host.truth(of: $0) } ?? host.truth(page: page))
        case (.POST, Route.adminFault): return fault(body, user: user)
        case (_, Route.adminTruth), (_, Route.adminFault): return .error(.methodNotAllowed, "\(method) \(path): use \(path == Route.adminTruth ? "GET" : "POST")")
        default: return .error(.notFound, "no such endpoint: \(path.prefix(100))")
        }
    }

    private func join(_ body: Data, headers: HTTPHeaders) -> Answer {
        let request: JoinRequest
        do { request = try JoinRequest.decode(body) } catch { return .refused(error) }
        let name = request.user
        if let version = request.protocolVersion, version != ProtocolVersion.current {
            let line = ProtocolVersion.refusal(client: version)
            FileHandle.standardError.write(Data("synchat server: \(UntrustedText.visible(String(name.prefix(32)))): \(line)\n".utf8))
            return .error(.badRequest, line)
        }
        let secret = bearer(headers)
        // The invite is asked of a name that could join: a bad name, or a simulated contact's,
        // is told so first (400, 409), whatever the invite.
        if let invite, host.user(named: name) == nil, UserName.isValid(name), !host.isSimulatedHandle(name) {
            guard let shown = request.invite else {
                return .error(.forbidden, "join: \(name.prefix(32)) is new here, and joining needs the server's invite: "
                                + "synchat --server URL --user NAME --invite CODE (its operator has the code)")
            }
            if let refused = inviteRefused(shown, invite) { return refused }
        }
        do {
            let (user, isNew, newSecret) = try host.join(name: name, secret: secret)
            let fields = JoinAnswer.members(user: user.name, address: user.address, secret: isNew ? newSecret : nil, world: worldMembers(of: user))
            return .json(isNew ? .created : .ok, .object(fields))
        } catch {
            switch error {
            case .badName: return .error(.badRequest, "join: a user name is \(UserName.rule)")
            case .nameOfAContact: return .error(.conflict, "join: \(name) is the name of a simulated contact; choose another")
            case .wrongSecret: return .error(.unauthorized, "join: \(name) exists; rejoining needs Authorization: Bearer SECRET (the secret of its first join, kept in its profile)")
            case .full: return .error(.serviceUnavailable, "join: the server holds \(host.maxUsers) users already (--max-users \(host.maxUsers))")
            case .storeFailed: return .error(.serviceUnavailable, "join: the server cannot write its data directory now; try again")
            }
        }
    }

    /// What a client needs to run on the server's world: its clock and speed, the user's
    /// contacts (simulated ones and the other users).
    func worldMembers(of user: WorldHost.User) -> [(String, JSONValue)] {
        WorldDocument.members(clock: host.virtualNow, speed: host.speed, contacts: contacts(of: user))
    }

    /// The user's own contacts, then every other user, each person's document written once:
    /// at 1 000 users the answer is about 90 KB, copied, not encoded again.
    func contacts(of user: WorldHost.User) -> [JSONValue] {
        let world = user.world
        var out = world.contacts.map { ContactDocument.encode($0, person: world.isPerson($0.address)) }
        let own = Set(world.contacts.map(\.address))
        let people = host.people
        while encodedPeople.count < people.count {
            let person = people.all[encodedPeople.count]
            encodedPeople.append(.raw(String(decoding: ContactDocument.encode(person).data, as: UTF8.self)))
        }
        out.reserveCapacity(out.count + people.count)
        for (i, c) in people.all.enumerated() where c.address != user.address && !own.contains(c.address) { out.append(encodedPeople[i]) }
        return out
    }

    private func publish(_ body: Data, by user: WorldHost.User) -> Answer {
        let request: PublishRequest
        do { request = try PublishRequest.decode(body) } catch { return .refused(error) }
        let bytes = request.body.utf8.count
        guard bytes <= MessageLimits.maxBodyBytes else {
            return .error(.payloadTooLarge, "publish: a message is at most \(MessageLimits.maxBodyBytes) bytes")
        }
        guard user.world.contact(address: request.to) != nil else {
            return .error(.badRequest, "publish: \(request.to.value.prefix(80)) is not a contact of \(user.name)")
        }
        // The same message again (a retry of a publish that reached us after its client gave up):
        // the first's answer, one message in the world.
        if let key = request.key, let p = user.publication(key: key, to: request.to, body: request.body) {
            return .json(.ok, PublicationDocument.encode(p, me: user.address))
        }
        if let over = overQuota(user, bytes) { return .error(.insufficientStorage, "publish: \(over)") }
        switch host.publish(for: user, to: request.to, body: request.body, key: request.key) {
        case .success(let p):
            kept(user, bytes)
            if let key = request.key { user.remember(key: key, p) }
            return .json(.ok, PublicationDocument.encode(p, me: user.address))
        case .failure(let e): return .error(.serviceUnavailable, e.message)  // 503: nothing was confirmed; the client tries again
        }
    }

    /// The directive a fault request's body holds: a `DirectiveDocument` (what synchat's own
    /// clients send), or one scenario line as an operator types it (`curl --data 'indexer down'`),
    /// read at this edge. A line never starts with `{`, so the first byte tells which.
    static func directive(_ body: Data) -> Result<Directive, RouteError> {
        guard let text = String(data: body, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else {
            return .failure(RouteError("the body must be a directive document or one scenario directive in UTF-8, e.g. indexer down"))
        }
        if text.hasPrefix("{") {
            guard let root = WireValue.parse(body) else { return .failure(RouteError("directive: the body starts as JSON and is not JSON")) }
            do throws(RouteError) { return .success(try DirectiveDocument.decode(root)) } catch { return .failure(error) }
        }
        guard !text.contains("\n") else { return .failure(RouteError("one directive per request")) }
        do { return .success(try Directive(parsing: text)) } catch {
            return .failure(RouteError("\(error)"))
        }
    }

    /// A directive for `user`'s world, or every user's; `own`: the user's own (`POST /v1/fault`),
    /// held to the user's limits: how long a fault may make the world wait, and its quota for
    /// the text a `receive` line makes a contact write.
    private func fault(_ body: Data, user: WorldHost.User?, own: Bool = false) -> Answer {
        let directive: Directive
        switch Self.directive(body) {
        case .success(let d): directive = d
        case .failure(let refused): return .error(.badRequest, refused.message)
        }
        // A message is at most 16 KiB on every path into the server's world: a contact's line
        // an operator or a user scripts is held to what a publish is.
        if case .receive(_, let text) = directive, text.utf8.count > MessageLimits.maxBodyBytes {
            return .error(.payloadTooLarge, "receive: a message is at most \(MessageLimits.maxBodyBytes) bytes; this one is \(text.utf8.count)")
        }
        var written = 0  // bytes of text a user's own receive line makes its contact write
        if own, let user {
            if let overlong = overlong(directive) { return .error(.badRequest, overlong) }
            if case .receive(_, let text) = directive {
                written = text.utf8.count
                if let over = overQuota(user, written) { return .error(.insufficientStorage, "receive: \(over)") }
            }
        }
        if let refused = host.apply(directive, to: user) { return .error(.badRequest, refused) }
        if written > 0, let user { kept(user, written) }
        var fields: [(String, JSONValue)] = [("applied", .string(directive.scenarioText)), ("user", user.map { .string($0.name) } ?? .null),
                                             ("at", .int(host.virtualNow.milliseconds))]
        // The user's world's faults as this directive left them: a client's next fault key
        // steps from what the server confirmed, not from what it was told before.
        if let user { fields.append(("faults", FaultsDocument.encode(user.world.faults))) }
        return .json(.ok, .object(fields))
    }
}
