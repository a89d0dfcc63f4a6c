import ArgumentParser
import Foundation
import NIOSSL
import Simulation
import SyncCore
import ServerProtocol
import ChatServer

struct Server: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the simulated world over real sockets: many users in one world.",
        discussion: """
            One world, its clock on the wall clock times --speed; each user who joins gets --contacts simulated \
            contacts writing --traffic, and every other user as a contact. Prints where it listens and the admin \
            token, then serves until killed. HTTP: POST \(Route.join), GET \(Route.world), POST \(Route.publish), \
            GET \(Route.indexer)...; WebSockets: \(Route.node) (the node), \(Route.push) (the push relay); \
            GET \(Route.adminTruth) and POST \(Route.adminFault) (a directive) with Authorization: Bearer TOKEN. \
            Every request carries \(ProtocolVersion.header): \(ProtocolVersion.headerValue) (400 otherwise). \
            The protocol: docs/server.md.
            """
    )

    @Option(name: .long, help: "Address to listen on (loopback by default).")
    var host = "127.0.0.1"

    @Option(name: .customLong("port"), parsing: .unconditional, help: ArgumentHelp("Port to listen on; 0 takes any free port.", valueName: "N"))
    var portText = "7420"

    @Option(name: .customLong("seed"), parsing: .unconditional, help: ArgumentHelp("Seed of the world (default 1).", valueName: "N"))
    var seedText: String?

    @Option(name: .customLong("speed"), parsing: .unconditional,
            help: ArgumentHelp("Simulated seconds per wall second, from 0.001 to 10000.", valueName: "N"))
    var speedText = "1"

    @Option(name: .customLong("contacts"), parsing: .unconditional, help: ArgumentHelp("Simulated contacts of each user, 0 to 20.", valueName: "N"))
    var contactsText = "6"

    @Option(name: .customLong("traffic"), parsing: .unconditional, help: ArgumentHelp("Messages an hour from each user's simulated contacts.", valueName: "N/h"))
    var trafficText = "24/h"

    @Option(name: .long, help: ArgumentHelp("Play this scenario's network lines on the server's clock (faults for every user, receive lines); its contacts and traffic lines set --contacts and --traffic.", valueName: "FILE"))
    var scenario: String?

    @Option(name: .long, help: ArgumentHelp("Keep the world here (world.sqlite): users, secrets, messages, the clock; a restart resumes it. Without it, the world lives in memory.", valueName: "DIR"))
    var data: String?

    @Option(name: .customLong("peer-connections"), parsing: .unconditional, help: ArgumentHelp("Connections one peer address may hold open at once that have shown no user's secret (default \(ServerLimits.defaults.peerConnections)); more are refused as they come, saying so.", valueName: "N"))
    var peerConnectionsText = String(ServerLimits.defaults.peerConnections)

    @Option(name: .customLong("user-connections"), parsing: .unconditional, help: ArgumentHelp("Connections one user may hold open at once, from any address (default \(ServerLimits.defaults.userConnections)); its newest closes its oldest.", valueName: "N"))
    var userConnectionsText = String(ServerLimits.defaults.userConnections)

    @Option(name: .customLong("peer-heads"), parsing: .unconditional, help: ArgumentHelp("Connections one peer address may hold that have not sent a whole first request head (default \(ServerLimits.defaults.peerHeads)); its newest closes its oldest.", valueName: "N"))
    var peerHeadsText = String(ServerLimits.defaults.peerHeads)

    @Option(name: .customLong("peer-rate"), parsing: .unconditional, help: ArgumentHelp("New connections one peer address may open a second, TLS handshakes among them, in bursts of \(ConnectionTable.peerRateBurst) times as many (default \(ServerLimits.defaults.peerRate)); more are refused as they come, saying so.", valueName: "N"))
    var peerRateText = String(ServerLimits.defaults.peerRate)

    @Option(name: .customLong("max-users"), parsing: .unconditional, help: ArgumentHelp("Users the server holds at most (default \(ServerLimits.defaults.maxUsers)); a first join past it is refused, saying so.", valueName: "N"))
    var maxUsersText = String(ServerLimits.defaults.maxUsers)

    @Option(name: .customLong("away-after"), parsing: .unconditional, help: ArgumentHelp("A user with no request and no socket for this long is away: its simulated contacts stop writing until it is back (default \(ServerLimits.defaults.awayAfter)).", valueName: "D"))
    var awayAfterText = ServerLimits.defaults.awayAfter.description

    @Option(name: .customLong("head-timeout"), parsing: .unconditional, help: ArgumentHelp("A request's head must arrive whole within this of the connection or of the last answer's request (default \(ServerLimits.defaults.headTimeout)).", valueName: "D"))
    var headTimeoutText = ServerLimits.defaults.headTimeout.description

    @Option(name: .customLong("idle-timeout"), parsing: .unconditional, help: ArgumentHelp("An idle keep-alive connection, or a declared body that does not come, is closed after this (default \(ServerLimits.defaults.idleTimeout)).", valueName: "D"))
    var idleTimeoutText = ServerLimits.defaults.idleTimeout.description

    @Option(name: .long, help: ArgumentHelp("The code a new user's first join must show (synchat --invite CODE), 16 to 128 printable characters; without it, one is made and printed at start.", valueName: "CODE"))
    var invite: String?

    @Flag(name: .long, help: "Let anyone join, with no invite (a demo on loopback, a test).")
    var open = false

    @Option(name: .customLong("tls-cert"), help: ArgumentHelp("Serve https and wss with this certificate chain (PEM), with --tls-key.", valueName: "FILE"))
    var tlsCert: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("The certificate's private key (PEM).", valueName: "FILE"))
    var tlsKey: String?

    @Flag(name: .long, help: "Listen on an address other than loopback without TLS (secrets cross the network in clear).")
    var insecure = false

    @Option(name: .customLong("peer-joins"), parsing: .unconditional, help: ArgumentHelp("Joins one peer address may make a minute (default \(ServerLimits.defaults.peerJoins)); more get 429.", valueName: "N"))
    var peerJoinsText = String(ServerLimits.defaults.peerJoins)

    @Option(name: .customLong("max-connections"), parsing: .unconditional, help: ArgumentHelp("Connections open at once, all peers together (default \(ServerLimits.defaults.maxConnections)); at the cap the peer or user holding the most gives way.", valueName: "N"))
    var maxConnectionsText = String(ServerLimits.defaults.maxConnections)

    @Option(name: .customLong("ping-after"), parsing: .unconditional, help: ArgumentHelp("A node or push socket silent this long is pinged (default \(ServerLimits.defaults.pingAfter)).", valueName: "D"))
    var pingAfterText = ServerLimits.defaults.pingAfter.description

    @Option(name: .customLong("pong-timeout"), parsing: .unconditional, help: ArgumentHelp("A pinged socket that answers nothing within this is closed (default \(ServerLimits.defaults.pongTimeout)).", valueName: "D"))
    var pongTimeoutText = ServerLimits.defaults.pongTimeout.description

    @Option(name: .customLong("pending-answers"), parsing: .unconditional, help: ArgumentHelp("Indexer answers one user may have pending at once (default \(ServerLimits.defaults.pendingAnswers)); more get 429.", valueName: "N"))
    var pendingAnswersText = String(ServerLimits.defaults.pendingAnswers)

    @Option(name: .customLong("fault-max"), parsing: .unconditional, help: ArgumentHelp("The longest delay or latency a user's own fault may set (default \(ServerLimits.defaults.faultMax)).", valueName: "D"))
    var faultMaxText = ServerLimits.defaults.faultMax.description

    @Option(name: .customLong("user-quota"), parsing: .unconditional, help: ArgumentHelp("Bytes of messages one user may have the server keep, e.g. \(ServerLimits.sizeWords(ServerLimits.defaults.userQuotaBytes)) (the default) or 512KiB; more get 507.", valueName: "SIZE"))
    var userQuotaText = ServerLimits.sizeWords(ServerLimits.defaults.userQuotaBytes)

    @Option(name: .customLong("failed-invites"), parsing: .unconditional, help: ArgumentHelp("Wrong invites a minute, all addresses together (default \(ServerLimits.defaults.failedInvites)); past it first joins get 429 for a while.", valueName: "N"))
    var failedInvitesText = String(ServerLimits.defaults.failedInvites)

    /// The limits of what the server promises (docs/server.md), read from their flags.
    func limits() throws -> ServerLimits {
        func count(_ text: String, _ flag: String, _ range: ClosedRange<Int>) throws -> Int {
            guard let n = Int(text), range.contains(n) else { throw ValidationError("\(flag) \(text): expected \(range.lowerBound) to \(range.upperBound)") }
            return n
        }
        func duration(_ text: String, _ flag: String, upTo most: Interval = .hours(1)) throws -> Interval {
            guard let d = try? ScenarioParser.parseDuration(text, { ScenarioError(file: flag, line: 0, message: $0) }),
                  d.milliseconds >= 100, d <= most else {
                throw ValidationError("\(flag) \(text): expected a duration from 100ms to \(most), e.g. 10s")
            }
            return d
        }
        let units = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("", 1)]
        guard let (unit, scale) = units.first(where: { userQuotaText.hasSuffix($0.0) }), let n = Int(userQuotaText.dropLast(unit.count)),
              n >= 0, n <= (1 << 40) / scale else {
            throw ValidationError("--user-quota \(userQuotaText): expected bytes, or a size such as 512KiB, 8MiB, 1GiB")
        }
        var limits = ServerLimits()
        limits.peerConnections = try count(peerConnectionsText, "--peer-connections", 1...8_192)
        limits.userConnections = try count(userConnectionsText, "--user-connections", 1...8_192)
        limits.peerHeads = try count(peerHeadsText, "--peer-heads", 1...8_192)
        limits.peerRate = try count(peerRateText, "--peer-rate", 1...100_000)
        limits.maxUsers = try count(maxUsersText, "--max-users", 1...1_000_000)
        limits.awayAfter = try duration(awayAfterText, "--away-after", upTo: .hours(24 * 7))
        limits.headTimeout = try duration(headTimeoutText, "--head-timeout")
        limits.idleTimeout = try duration(idleTimeoutText, "--idle-timeout")
        limits.peerJoins = try count(peerJoinsText, "--peer-joins", 1...1_000_000)
        limits.maxConnections = try count(maxConnectionsText, "--max-connections", 1...65_536)
        limits.pingAfter = try duration(pingAfterText, "--ping-after")
        limits.pongTimeout = try duration(pongTimeoutText, "--pong-timeout")
        limits.pendingAnswers = try count(pendingAnswersText, "--pending-answers", 1...100_000)
        limits.faultMax = try duration(faultMaxText, "--fault-max", upTo: .hours(24 * 3650))
        limits.userQuotaBytes = n * scale
        limits.failedInvites = try count(failedInvitesText, "--failed-invites", 1...100_000)
        return limits
    }

    @OptionGroup var subcommandArguments: SubcommandArguments

    func numbers() throws -> (port: Int, seed: UInt64, speed: Double, contacts: Int, traffic: Double) {
        guard let port = Int(portText), (0...65_535).contains(port) else { throw ValidationError("--port \(portText): expected 0 to 65535") }
        guard let contacts = Int(contactsText), (0...20).contains(contacts) else { throw ValidationError("--contacts \(contactsText): expected 0 to 20") }
        let rate = trafficText.hasSuffix("/h") ? String(trafficText.dropLast(2)) : trafficText
        guard let traffic = Double(rate), traffic.isFinite, traffic >= 0, traffic <= 1_000_000 else {
            throw ValidationError("--traffic \(trafficText): expected messages an hour, e.g. 24/h")
        }
        return (port, try seedText.map(CommandLineNumber.seed) ?? 1, try CommandLineNumber.speed(speedText), contacts, traffic)
    }

    func validate() throws {
        _ = try numbers()
        _ = try limits()
        if (tlsCert == nil) != (tlsKey == nil) { throw ValidationError("--tls-cert and --tls-key go together: give both, or neither") }
        if !HostName.isLoopback(host), tlsCert == nil, !insecure {
            throw ValidationError("--host \(host) is not loopback: secrets and messages would cross the network in clear; give --tls-cert FILE --tls-key FILE, or --insecure")
        }
        if open, invite != nil { throw ValidationError("--open lets anyone join; --invite gates joining: give one or the other") }
        if let invite, !(WorldServer.minimumInviteLength...128).contains(invite.utf8.count) || !invite.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
            throw ValidationError("--invite: \(WorldServer.minimumInviteLength) to 128 printable ASCII characters, no spaces (a shorter code could be guessed)")
        }
    }

    func run() throws {
        var n = try numbers()
        var script: Scenario?
        if let scenario {
            let loaded = try ScenarioParser.load(path: scenario)
            (n.contacts, n.traffic) = (min(20, loaded.contacts), loaded.trafficPerHour)
            if seedText == nil { n.seed = loaded.seed }
            script = loaded
        }
        var store: ServerStore?
        if let data {
            do { store = try ServerStore(directory: data) } catch let refused as ServerStore.Refused {
                refuse("server: \(refused)")
            } catch {
                refuse("server: cannot open the data directory \(data): \(error)")
            }
        }
        let host: WorldHost
        do { host = try WorldHost(seed: n.seed, contacts: n.contacts, trafficPerHour: n.traffic, speed: n.speed, store: store) } catch let refused as ServerStore.Refused {
            refuse("server: \(refused)")
        } catch {
            refuse("server: cannot read \(store?.path ?? "the data directory"): \(error)")
        }
        let server = WorldServer(host: host)
        server.apply(try limits())
        if open { server.invite = nil } else if let invite { server.invite = invite }
        if let script, let scenario {
            let skipped = host.play(script.steps.map { ($0.at, $0.directive, $0.line) })
            if !skipped.isEmpty {
                let lines = skipped.prefix(8).map(String.init).joined(separator: ", ") + (skipped.count > 8 ? ", …" : "")
                FileHandle.standardError.write(Data("synchat server: \(scenario): \(skipped.count) lines of the app not played (a client's keys): lines \(lines)\n".utf8))
            }
        }
        var tls: NIOSSLContext?
        if let tlsCert, let tlsKey {
            do { tls = try WorldServer.tls(certificate: tlsCert, key: tlsKey) } catch { refuse("server: \(error)") }
        }
        let port: Int
        do { port = try server.start(host: self.host, port: n.port, tls: tls) } catch {
            refuse("server: cannot listen on \(self.host):\(n.port) (\(error))")
        }
        // One line a script can read: where, and the admin token.
        let line = "synchat server: listening on \(tls == nil ? "http" : "https")://\(self.host):\(port) (admin token \(server.adminToken); "
            + "world seed \(n.seed), \(n.contacts) contacts a user, \(Int(n.traffic))/h each, speed x\(n.speed.formatted())"
            + (data.map { "; data \($0), \(host.users.count) users resumed" } ?? "")
            + (server.invite.map { "; invite \($0)" } ?? "; open to anyone") + ")\n"
        FileHandle.standardOutput.write(Data(line.utf8))  // unbuffered: a script reads it at once
        try server.wait()
    }
}
