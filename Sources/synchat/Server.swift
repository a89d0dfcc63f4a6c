import ArgumentParser
import Foundation
import NIOSSL
import Simulation
import SyncCore
import WorldServer

struct Server: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the simulated world over real sockets: many users in one world.",
        discussion: """
            One world, its clock on the wall clock times --speed; each user who joins gets --contacts simulated \
            contacts writing --traffic, and every other user as a contact. Prints where it listens and the admin \
            token, then serves until killed. HTTP: POST /v1/join, GET /v1/world, POST /v1/publish, \
            GET /v1/indexer/...; WebSockets: /v1/node (the node), /v1/push (the push relay); \
            GET /admin/truth and POST /admin/fault (a scenario directive) with Authorization: Bearer TOKEN. \
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
            help: ArgumentHelp("Simulated seconds per wall second, more than 0 and at most 10000.", valueName: "N"))
    var speedText = "1"

    @Option(name: .customLong("contacts"), parsing: .unconditional, help: ArgumentHelp("Simulated contacts of each user, 0 to 20.", valueName: "N"))
    var contactsText = "6"

    @Option(name: .customLong("traffic"), parsing: .unconditional, help: ArgumentHelp("Messages an hour from each user's simulated contacts.", valueName: "N/h"))
    var trafficText = "24/h"

    @Option(name: .long, help: ArgumentHelp("Play this scenario's network lines on the server's clock (faults for every user, receive lines); its contacts and traffic lines set --contacts and --traffic.", valueName: "FILE"))
    var scenario: String?

    @Option(name: .long, help: ArgumentHelp("Keep the world here (world.sqlite): users, secrets, messages, the clock; a restart resumes it. Without it, the world lives in memory.", valueName: "DIR"))
    var data: String?

    @Option(name: .customLong("peer-connections"), parsing: .unconditional, help: ArgumentHelp("Connections one peer address may hold open at once (default 64); more are closed as they come.", valueName: "N"))
    var peerConnectionsText = "64"

    @Option(name: .customLong("head-timeout"), parsing: .unconditional, help: ArgumentHelp("A request's head must arrive whole within this of the connection or of the last answer's request (default 10s).", valueName: "D"))
    var headTimeoutText = "10s"

    @Option(name: .customLong("idle-timeout"), parsing: .unconditional, help: ArgumentHelp("An idle keep-alive connection, or a declared body that does not come, is closed after this (default 30s).", valueName: "D"))
    var idleTimeoutText = "30s"

    @Option(name: .long, help: ArgumentHelp("The code a new user's first join must show (synchat --invite CODE); without it, one is made and printed at start.", valueName: "CODE"))
    var invite: String?

    @Flag(name: .long, help: "Let anyone join, with no invite (a demo on loopback, a test).")
    var open = false

    @Option(name: .customLong("tls-cert"), help: ArgumentHelp("Serve https and wss with this certificate chain (PEM), with --tls-key.", valueName: "FILE"))
    var tlsCert: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("The certificate's private key (PEM).", valueName: "FILE"))
    var tlsKey: String?

    @Flag(name: .long, help: "Listen on an address other than loopback without TLS (secrets cross the network in clear).")
    var insecure = false

    @Option(name: .customLong("peer-joins"), parsing: .unconditional, help: ArgumentHelp("Joins one peer address may make a minute (default 60); more get 429.", valueName: "N"))
    var peerJoinsText = "60"

    /// The connection limits (issue 28 #2, #3), read from their flags.
    func limits() throws -> (peer: Int, head: Interval, idle: Interval, joins: Int) {
        guard let peer = Int(peerConnectionsText), (1...8_192).contains(peer) else {
            throw ValidationError("--peer-connections \(peerConnectionsText): expected 1 to 8192")
        }
        guard let joins = Int(peerJoinsText), (1...1_000_000).contains(joins) else {
            throw ValidationError("--peer-joins \(peerJoinsText): expected 1 to 1000000")
        }
        func duration(_ text: String, _ flag: String) throws -> Interval {
            guard let d = try? ScenarioParser.parseDuration(text, { ScenarioError(file: flag, line: 0, message: $0) }),
                  d.milliseconds >= 100, d <= .hours(1) else {
                throw ValidationError("\(flag) \(text): expected a duration from 100ms to 1h, e.g. 10s")
            }
            return d
        }
        return (peer, try duration(headTimeoutText, "--head-timeout"), try duration(idleTimeoutText, "--idle-timeout"), joins)
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
        if !WorldServer.isLoopback(host), tlsCert == nil, !insecure {
            throw ValidationError("--host \(host) is not loopback: secrets and messages would cross the network in clear; give --tls-cert FILE --tls-key FILE, or --insecure")
        }
        if open, invite != nil { throw ValidationError("--open lets anyone join; --invite gates joining: give one or the other") }
        if let invite, !(8...128).contains(invite.utf8.count) || !invite.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
            throw ValidationError("--invite: 8 to 128 printable ASCII characters, no spaces")
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
        let limits = try limits()
        server.maxConnectionsPerPeer = limits.peer
        server.headTimeout = .milliseconds(limits.head.milliseconds)
        server.idleTimeout = .milliseconds(limits.idle.milliseconds)
        server.joinsPerMinute = limits.joins
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
