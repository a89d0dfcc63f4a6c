import TerminalApp
import ArgumentParser
import ChatStore
import ChatUI
import Config
import Foundation
import Logging
import SimulatedWorldInProfile
import Simulation
import SyncCore
import SyncEngine
import TerminalUI
import ServerProtocol

/// The chat's flags (the root command's).
struct Chat: ParsableArguments {
    @Option(name: .customLong("seed"), parsing: .unconditional,
            help: ArgumentHelp("Seed of a new world (default 1, or the scenario's); a resumed profile keeps its own.", valueName: "N"))
    var seedText: String?

    @Option(name: .customLong("speed"), parsing: .unconditional,
            help: ArgumentHelp("Simulated seconds per wall second, from 0.001 to 10000 (default 10); + and - change it live.", valueName: "N"))
    var speedText: String?

    @Option(name: .long, help: "Sync policy: naive, seed or adaptive.")
    var policy: String = "adaptive"

    @Option(name: .long, help: "Notification mode: remote-push, background-fetch or off.")
    var mode: String?

    @Option(name: .long, help: "Play this scenario file live (keys still work).")
    var scenario: String?

    @Option(name: .long, help: "Theme: a shipped one (default, light, high-contrast), one of yours in $XDG_CONFIG_HOME/synchat/themes/NAME.toml, or a path.")
    var theme: String?

    @Option(name: .long, help: ArgumentHelp("Append every engine event to this file, in the words of simulate --events.", valueName: "FILE"))
    var log: String?

    @Flag(name: .long, help: "Ring the terminal's bell when a message comes in a conversation you are not reading (not with preview hidden).")
    var bell = false

    @Option(name: .long, help: ArgumentHelp("Desktop notifications while the terminal is unfocused: auto (ask the terminal, else by what it is, else the bell), osc99 (kitty), osc777 (foot, urxvt), osc9 (WezTerm, iTerm2, Ghostty), bell or off. Default: SYNCHAT_NOTIFY, else auto.", valueName: "HOW"))
    var notify: String?

    @Option(name: .long, help: ArgumentHelp("URLs in messages (http, https, mailto) as hyperlinks the terminal can open (OSC 8): on (default) or off.", valueName: "on|off"))
    var links: String?

    @Flag(name: .customLong("no-mouse"), help: "Leave the mouse to the terminal (its own selection); by default a click opens or focuses, the wheel scrolls.")
    var noMouse = false

    @Option(name: .long, help: "Write this session as a scenario file: replayed by simulate --events, it prints the lines --log wrote. Needs a new world.")
    var record: String?

    @Option(name: .long, help: .hidden)
    var history: Int = 0

    @Flag(name: .long, help: "Keep everything in memory; nothing is written to disk.")
    var ephemeral = false

    @OptionGroup var remote: ServerOptions<Chat>
    @OptionGroup var joining: JoinOptions<Chat>

    @Option(name: .customLong("admin-token"), help: ArgumentHelp("The server's admin token, or env to take it from SYNCHAT_ADMIN_TOKEN (not in ps): read the server's truth of your world, so the status bar's truth: segment can say what the engine has not noticed yet; without it the segment says nothing. Sent only over https, or to a loopback server.", valueName: "TOKEN"))
    var adminToken: String?

    /// The operator's token as given: `env` reads SYNCHAT_ADMIN_TOKEN, never taken unasked
    /// (an exported token for one server's `synchat fault` is not sent to another).
    var resolvedAdminToken: String? {
        guard let adminToken else { return nil }
        guard adminToken == "env" else { return adminToken }
        return ProcessInfo.processInfo.environment["SYNCHAT_ADMIN_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
    }

    @Option(name: .long, help: "Profile kept in $XDG_DATA_HOME/synchat/NAME.sqlite: history, learned push state, world (default profile: default).")
    var profile: String?

    @Option(name: .long, help: ArgumentHelp("Record the session as an asciicast v2 file (what the terminal received, with its timing; asciinema's player plays it), with safe emoji widths unless --emoji or SYNCHAT_EMOJI says otherwise.", valueName: "FILE"))
    var cast: String?

    @Option(name: .long, help: ArgumentHelp("Emoji sequences: auto asks the terminal (grapheme clustering, else measured widths, else safe), full draws them whole, safe splits them as every terminal draws alike (default auto, or $SYNCHAT_EMOJI).", valueName: "auto|full|safe"))
    var emoji: String?

    func validate() throws {
        _ = try seedText.map(CommandLineNumber.seed)
        _ = try CommandLineNumber.speed(speedText ?? "10")
        if let server = remote.server {
            let url = try ServerURL.parse(server)
            if adminToken != nil {
                // The operator's token opens every user's world: never in clear across a network.
                if !url.tls, !HostName.isLoopback(url.host) {
                    throw ValidationError("--admin-token over plain http to \(url.host) would carry the operator's token in clear: use https://, or a loopback server")
                }
                if resolvedAdminToken == nil { throw ValidationError("--admin-token env: SYNCHAT_ADMIN_TOKEN is not set") }
            }
            guard let user = joining.user, UserName.isValid(user) else {
                throw ValidationError("--server needs --user NAME: \(UserName.rule)")
            }
            for (given, flag) in [(seedText != nil, "--seed"), (speedText != nil, "--speed"), (scenario != nil, "--scenario"),
                                  (record != nil, "--record"), (history > 0, "--history")] where given {
                throw ValidationError("\(flag) is the embedded world's: with --server the world, its clock and its speed are the server's")
            }
        } else if joining.user != nil {
            throw ValidationError("--user names you on a server: give --server URL too")
        } else if joining.invite != nil || remote.ca != nil || adminToken != nil {
            let flag = joining.invite != nil ? "--invite" : remote.ca != nil ? "--ca" : "--admin-token"
            throw ValidationError("\(flag) is a server's: give --server URL and --user NAME too")
        }
        guard SyncPolicy.named(policy) != nil else {
            throw ValidationError("--policy \(policy): expected naive, seed or adaptive")
        }
        _ = try emojiRequest()
        _ = try notifyRequest()
        _ = try linksWanted()
        if let mode, NotificationMode(rawValue: mode) == nil {
            throw ValidationError("--mode \(mode): expected remote-push, background-fetch or off")
        }
        if record != nil, scenario != nil {
            throw ValidationError("--record writes a live session as a scenario; with --scenario, replay that scenario instead")
        }
        if let profile {
            guard !ephemeral else { throw ValidationError("--profile and --ephemeral exclude each other") }
            guard !profile.isEmpty, profile.count <= 64, profile.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
                throw ValidationError("--profile \(profile): use letters, digits, - and _")
            }
        }
    }

    func run() throws {
        if let cast { try recordCast(cast) }
        let seed = try seedText.map(CommandLineNumber.seed)
        if let server = remote.server, let user = joining.user { return try runOnServer(server, user: user) }
        let speed = try CommandLineNumber.speed(speedText ?? "10")
        var script: Scenario?
        if let path = scenario { script = try ScenarioParser.load(path: path) }
        if let mode { script?.mode = NotificationMode(rawValue: mode)! }
        var profileStore: SQLiteChatStorage?
        if !ephemeral {
            let name = profile ?? "default"
            do { profileStore = try SQLiteChatStorage.openProfile(name, path: try Profiles.path(for: name)) } catch let e as any ProfileError {
                refuse(e.description)
            }
            // The profile keeps its world: a world part a newer synchat wrote is refused here.
            do { try profileStore?.keepWorld() } catch { refuse("\(error)") }
        }
        let (chosenTheme, themeWarnings) = try theme(for: profileStore)
        let eventLog = try eventLogger()
        // The live chat is a session; a scenario plays into one.
        // --ephemeral: the same SQLite store in memory, so that search and every read behave as with a profile.
        let storage: ChatStorage = try profileStore ?? SQLiteChatStorage.inMemory()
        let player = script.map { ScenarioRun(scenario: $0, seed: seed, policy: SyncPolicy.named(policy)!, storage: storage, persistence: profileStore) }
        let session = player?.session ?? AppSession(
            seed: seed ?? 1, contacts: LiveApp.contacts, trafficPerHour: LiveApp.trafficPerHour,
            mode: mode.flatMap(NotificationMode.init) ?? .remotePush, policy: SyncPolicy.named(policy)!, storage: storage,
            persistence: profileStore)
        if player == nil { session.start() }
        if session.resumed, let mode { session.driver.setMode(NotificationMode(rawValue: mode)!) }
        if history > 0 { try HistoryFill.fill(session, messages: history, conversations: 200) }  // synchat-bench
        var recorder: SessionRecorder?
        if let record {
            do { recorder = try SessionRecorder(path: record, session: session, policy: SyncPolicy.named(policy)!) } catch {
                fail("\(error)")
            }
        }
        let memory = profileStore.map { store in
            LiveApp.MemoryStore(load: { store.setting("view") }, save: { try? store.setSetting("view", $0) })
        }
        let (keys, keyWarnings) = KeyFile.load()
        let app = LiveApp(session: session, player: player, speed: speed, eventLog: eventLog, recorder: recorder, memory: memory, keys: keys)
        app.bell = bell
        app.links = try linksWanted()
        let terminal = Terminal(theme: chosenTheme)
        terminal.mouse = !noMouse
        terminal.emojiRequest = try emojiRequest()
        terminal.notifyRequest = try notifyRequest()
        do {
            try terminal.open()
        } catch let e as Terminal.OpenError {
            refuse(e.description)
        }
        app.loop(terminal: terminal, notices: themeWarnings.map { "theme: " + $0 } + keyWarnings.map { "keys: " + $0 })
        terminal.close()
        profileStore?.close()  // a clean end: the next start need not read the file through
        if profileStore != nil, !app.unsentDrafts.isEmpty {
            FileHandle.standardOutput.write(Data("synchat: \(UnsentLines.kept(app.unsentDrafts))\n".utf8))
        }
    }
}

extension Chat {
    /// The theme: --theme sets it (and the profile remembers it), no --theme uses the
    /// profile's. A theme named on the command line must exist (exit 2 if not); one the
    /// profile remembers may have gone since: then a warning and the default theme.
    func theme(for profileStore: SQLiteChatStorage?) throws -> (Theme, [String]) {
        let themeName = theme ?? profileStore?.setting("theme")
        let chosen: (Theme, [String])
        do {
            chosen = try ThemeLoader.load(themeName)
        } catch let error as ThemeError where theme == nil {
            // Said once: the profile forgets the theme, so the next launch is quiet.
            let (fallback, more) = try ThemeLoader.load(nil)
            chosen = (fallback, [error.description + "; using the default theme from now on"] + more)
            try? profileStore?.setSetting("theme", "default")
        }
        if let theme { try? profileStore?.setSetting("theme", theme) }
        return chosen
    }

    /// --log FILE: every engine event appended through swift-log.
    func eventLogger() throws -> ((String) -> Void)? {
        guard let path = log else { return nil }
        let handle = try FileLogHandler.open(path)
        LoggingSystem.bootstrap { _ in FileLogHandler(handle: handle) }
        let logger = Logger(label: "synchat")
        return { logger.info("\($0)") }
    }
}
