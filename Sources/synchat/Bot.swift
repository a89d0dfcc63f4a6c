import ArgumentParser
import ChatUI
import Foundation
import SyncCore
import SyncEngine
import WorldClient
import WorldServer
import SimWorld

/// Set by SIGTERM and SIGINT: the bot writes its report and ends.
nonisolated(unsafe) var botStopRequested: sig_atomic_t = 0

struct Bot: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A headless client of synchat server that chats by itself (load, tests, demos).",
        discussion: """
            The same engine as the TUI on the server's sockets, with no screen: it joins as --user (keeping its \
            secret under $XDG_DATA_HOME/synchat/servers/), writes about --rate messages an hour to its contacts \
            (other users first), and runs until --for has passed or it is killed (SIGTERM, SIGINT). \
            --report FILE writes what it stored and sent as JSON at the end; --events prints every decision, stamped with the world's clock as the TUI shows it (d1 10:08:55.650).
            """
    )

    @Option(name: .long, help: ArgumentHelp("The server, e.g. http://127.0.0.1:7420.", valueName: "URL"))
    var server: String

    @Option(name: .long, help: ArgumentHelp("The user to join as (a-z, 0-9, _ and -).", valueName: "NAME"))
    var user: String

    @Option(name: .long, help: ArgumentHelp("The server's invite, for the bot's first join (synchat server prints it).", valueName: "CODE"))
    var invite: String?

    @Option(name: .long, help: ArgumentHelp("For an https:// server whose certificate a private CA signed: that CA's certificate (PEM).", valueName: "FILE"))
    var ca: String?

    @Option(name: .customLong("rate"), parsing: .unconditional, help: ArgumentHelp("Messages an hour it writes (world time).", valueName: "N/h"))
    var rateText = "60/h"

    @Option(name: .customLong("for"), parsing: .unconditional, help: ArgumentHelp("Wall seconds to run (default: until killed).", valueName: "S"))
    var forText: String?

    @Option(name: .long, help: ArgumentHelp("Write what it stored and sent as JSON here at the end.", valueName: "FILE"))
    var report: String?

    @Option(name: .long, help: "naive, seed or adaptive.")
    var policy = "adaptive"

    @Flag(name: .long, help: "Print every decision of the engine as simulate --events words it, stamped with the world's clock as the TUI's status bar shows it (d1 10:08:55.650).")
    var events = false

    @OptionGroup var subcommandArguments: SubcommandArguments

    func numbers() throws -> (host: String, port: Int, rate: Double, duration: Double?, policy: SyncPolicy) {
        let (host, port, _) = try ServerURL.parse(server)
        let rate = rateText.hasSuffix("/h") ? String(rateText.dropLast(2)) : rateText
        guard let perHour = Double(rate), perHour.isFinite, perHour >= 0, perHour <= 100_000 else {
            throw ValidationError("--rate \(rateText): expected messages an hour, e.g. 60/h")
        }
        var duration: Double?
        if let forText {
            guard let d = Double(forText), d.isFinite, d > 0 else { throw ValidationError("--for \(forText): expected seconds, more than 0") }
            duration = d
        }
        guard let p = SyncPolicy.named(policy) else { throw ValidationError("--policy \(policy): expected naive, seed or adaptive") }
        return (host, port, perHour, duration, p)
    }

    func validate() throws {
        _ = try numbers()
        if ca != nil, try !ServerURL.parse(server).tls { throw ValidationError("--ca is for https:// servers; \(server) is plain http") }
    }

    func run() throws {
        let n = try numbers()
        let io = try ServerURL.connect(server, ca: ca)
        let secrets = ServerSecrets(host: n.host, port: n.port)
        let joined: NetworkWorld.Joined
        do { joined = try NetworkWorld.join(io, user: user, secret: secrets.load(user), invite: invite) } catch { refuse("bot: \(error)") }
        if joined.isNew {
            do { try secrets.save(joined.secret, for: user) } catch { refuse("bot: cannot keep the secret of \(user): \(error)") }
        }
        let world = NetworkWorld(io: io, joined: joined, os: { SimOperatingSystem(seed: WorldHost.hash(user), scheduler: $0, timings: WorldTimings()) })
        let storage = InMemoryChatStorage()
        // The TUI's session with no screen: directives the server passes on (synchat fault
        // --user NAME background) act as the keys would.
        let session = NetworkSession(world: world, storage: storage, policy: n.policy, mode: .remotePush)
        session.keepsLog = false  // nothing reads it (--events prints as it goes): a bot of hours held every decision
        let driver = session.driver
        // The world's clock as the TUI's status bar shows it (`d1 10:08:55.650`), not the time
        // since the run began that simulate prints: a bot and a screen on one server say one time.
        if events { driver.subscribe { if $0.event.isDecision { Bot.say(Clock.stamp($0.at) + " " + $0.event.line) } } }
        session.start()

        // Poisson sends, in world time, to another user when there is one.
        var sent: [String] = []
        var random = SystemRandomNumberGenerator()
        var counter = 0
        var sending = true
        func scheduleSend() {
            guard n.rate > 0, sending else { return }
            let wait = -log(Double.random(in: Double.ulpOfOne..<1, using: &random)) * 3_600_000 / n.rate
            world.scheduler.schedule(after: .milliseconds(Int64(wait)), "bot send") {
                let others = driver.contacts.filter { world.people.contains($0.address) }
                let candidates = others.isEmpty ? driver.contacts : others
                if sending, let to = candidates.randomElement(using: &random) {
                    counter += 1
                    driver.send(to: to.address, text: "\(user) #\(counter): \(Bot.phrases[counter % Bot.phrases.count])")
                }
                scheduleSend()
            }
        }
        scheduleSend()
        signal(SIGTERM) { _ in botStopRequested = 1 }
        signal(SIGINT) { _ in botStopRequested = 1 }
        let deadline = n.duration.map { DispatchTime.now().uptimeNanoseconds + UInt64($0 * 1e9) }
        Bot.say("synchat bot: \(user) on \(n.host):\(n.port) as \(world.me.value)\(joined.isNew ? " (joined)" : ""), clock \(Clock.stamp(world.scheduler.now)), speed x\(world.speed.formatted())")
        while botStopRequested == 0, !session.quitRequested {
            if let deadline, DispatchTime.now().uptimeNanoseconds >= deadline { break }
            world.step()
            io.wait(milliseconds: world.wallMillisecondsToNextEvent())
        }
        // Answers in flight (a send the server took a moment ago) get half a second to come
        // back, so that the report holds what the server holds; nothing new is sent meanwhile.
        sending = false
        let grace = DispatchTime.now().uptimeNanoseconds + 500_000_000
        while DispatchTime.now().uptimeNanoseconds < grace {
            world.step()
            io.wait(milliseconds: 20)
        }
        world.step()
        for m in storage.allMessages() where m.message.direction == .outgoing { sent.append(m.txId) }
        if let report {
            let stored = storage.allMessages()
            let json = """
                {"user": "\(user)", "address": "\(world.me.value)", "clock": \(world.scheduler.now.milliseconds), \
                "stored": [\(stored.map { "\"\($0.txId)\"" }.joined(separator: ", "))], \
                "incoming": [\(stored.filter { $0.message.direction == .incoming }.map { "\"\($0.txId)\"" }.joined(separator: ", "))], \
                "sent": [\(sent.map { "\"\($0)\"" }.joined(separator: ", "))], \
                "reliability": "\(driver.reliability.state.rawValue)", "fullSyncs": \(driver.counters.fullSyncs), \
                "unsent": \(driver.unsavedChanges)}
                """
            do { try Data((json + "\n").utf8).write(to: URL(fileURLWithPath: report)) } catch { refuse("bot: cannot write --report \(report): \(error)") }
        }
    }

    /// One line on standard output, at once (a script reads it while the bot runs).
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static let phrases = ["hello", "how are you?", "ok 👍", "see you at 7", "こんにちは", "on my way", "thanks!", "coffee?"]
}

/// `http://HOST:PORT` (the port defaults to 7420).
enum ServerURL {
    /// `http://HOST:PORT` or `https://HOST:PORT` (TLS: https and wss).
    static func parse(_ text: String) throws -> (host: String, port: Int, tls: Bool) {
        guard let url = URLComponents(string: text), url.scheme == "http" || url.scheme == "https", let host = url.host, !host.isEmpty,
              url.path.isEmpty || url.path == "/", url.query == nil else {
            throw ValidationError("--server \(text): expected http://HOST:PORT or https://HOST:PORT, e.g. http://127.0.0.1:7420")
        }
        return (host, url.port ?? 7420, url.scheme == "https")
    }

    /// The client's sockets to the server at `text`; `ca`: a PEM file of the CA to trust for
    /// https (otherwise the system's). A CA file for a plain http server is refused.
    static func connect(_ text: String, ca: String?) throws -> NetIO {
        let (host, port, tls) = try parse(text)
        guard tls else {
            if ca != nil { throw ValidationError("--ca is for https:// servers; \(text) is plain http") }
            return NetIO(host: host, port: port)
        }
        do { return NetIO(host: host, port: port, tls: try NetIO.tls(caFile: ca)) } catch let e as TransportError {
            throw ValidationError(e.message)
        }
    }

    /// How a profile or a secret names the server: its scheme, host and port.
    static func canonical(_ text: String) throws -> String {
        let (host, port, tls) = try parse(text)
        return "\(tls ? "https" : "http")://\(host):\(port)"
    }
}

/// Where a client keeps the secret each server gave at the first join:
/// `$XDG_DATA_HOME/synchat/servers/HOST_PORT/NAME.secret`, readable by the user only.
struct ServerSecrets {
    let directory: URL

    init(host: String, port: Int) {
        let env = ProcessInfo.processInfo.environment
        let base = env["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? ((env["HOME"] ?? NSTemporaryDirectory()) + "/.local/share")
        let safe = host.map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" ? String($0) : "_" }.joined()
        directory = URL(fileURLWithPath: base).appendingPathComponent("synchat/servers/\(safe)_\(port)")
    }

    func load(_ user: String) -> String? {
        guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent("\(user).secret").path),
              let text = String(data: data, encoding: .utf8) else { return nil }
        let secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return secret.isEmpty ? nil : secret
    }

    func save(_ secret: String, for user: String) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let path = directory.appendingPathComponent("\(user).secret").path
        guard FileManager.default.createFile(atPath: path, contents: Data((secret + "\n").utf8), attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown)
        }
    }
}
