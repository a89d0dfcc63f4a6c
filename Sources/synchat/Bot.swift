import ArgumentParser
import ChatUI
import Foundation
import SyncCore
import SyncEngine
import ServerClient
import ServerProtocol
import SimulatedWorld

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

    @OptionGroup var remote: ServerOptions<Bot>
    @OptionGroup var joining: JoinOptions<Bot>

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

    /// The name to join as: the bot cannot run without one.
    var user: String { joining.user ?? "" }

    func numbers() throws -> (host: String, port: Int, rate: Double, duration: Double?, policy: SyncPolicy) {
        let (host, port, _) = try ServerURL.parse(try remote.required())
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
        guard let user = joining.user else { throw ValidationError("Missing expected argument '--user <NAME>'") }
        guard UserName.isValid(user) else { throw ValidationError("--user \(user): \(UserName.rule)") }
    }

    func run() throws {
        let n = try numbers()
        let io = try remote.connect()
        // With --events, what the network said as it failed, whole (the decision lines give its
        // words), as a comment line, as the TUI's --log keeps it.
        if events { io.log = { Bot.say("# " + UntrustedText.visible($0)) } }
        let storage = InMemoryChatStorage()
        // The TUI's session with no screen: directives the server passes on (synchat fault
        // --user NAME background) act as the keys would.
        let session: NetworkSession, isNew: Bool
        do {
            (session, isNew) = try NetworkSession.join(io, user: user, invite: joining.invite, secrets: ServerSecrets(host: n.host, port: n.port).keeper(for: user),
                                                       storage: storage, policy: n.policy,
                                                       os: { SimOperatingSystem(seed: StableHash.fnv1a(user), scheduler: $0, timings: WorldTimings()) })
        } catch { refuse("bot: \(error)") }
        let world = session.world
        session.keepsLog = false  // nothing reads it (--events prints as it goes): a bot of hours held every decision
        let driver = session.driver
        // The world's clock as the TUI's status bar shows it (`d1 10:08:55.650`), not the time
        // since the run began that simulate prints: a bot and a screen on one server say one time.
        // The session's own lines too (`world: …`: a directive done or refused, the server's news).
        if events { session.app.subscribe { if $0.event.isDecision { Bot.say(Clock.stamp($0.at) + " " + Clock.worldTimes(in: $0.event.line)) } } }
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
        Bot.say("synchat bot: \(user) on \(n.host):\(n.port) as \(UntrustedText.visible(world.me.value))\(isNew ? " (joined)" : ""), clock \(Clock.stamp(world.scheduler.now)), speed x\(world.speed.formatted())")
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
            // Encoded by an encoder, never by interpolation: an address or a txId with a quote
            // or an escape in it stays a string.
            let stored = storage.allMessages()
            let document: [String: Any] = [
                "user": user, "address": world.me.value, "clock": world.scheduler.now.milliseconds,
                "stored": stored.map(\.txId), "incoming": stored.filter { $0.message.direction == .incoming }.map(\.txId), "sent": sent,
                "messages": stored.map { m -> [String: Any] in
                    ["txId": m.txId, "direction": m.message.direction.rawValue, "blockTime": m.message.blockTime.milliseconds,
                     "receivedAt": m.receivedAt.milliseconds, "via": m.via.rawValue]
                },
                "duplicates": storage.duplicateCount(),
                "reliability": driver.reliability.state.rawValue, "fullSyncs": driver.counters.fullSyncs, "requests": driver.counters.requests,
                "unsent": driver.unsavedChanges,
            ]
            let json = (try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
            do { try Data((json + "\n").utf8).write(to: URL(fileURLWithPath: report)) } catch { refuse("bot: cannot write --report \(report): \(error)") }
        }
    }

    /// One line on standard output, at once (a script reads it while the bot runs).
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static let phrases = ["hello", "how are you?", "ok 👍", "see you at 7", "こんにちは", "on my way", "thanks!", "coffee?"]
}
