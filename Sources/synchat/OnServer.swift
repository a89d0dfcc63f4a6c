import ChatStore
import Config
import Foundation
import SimulatedWorldInProfile
import Simulation
import SyncCore
import SyncEngine
import TerminalApp
import TerminalUI
import ServerClient
import ServerProtocol
import SimulatedWorld

extension Chat {
    /// `synchat --server URL --user NAME`: the same TUI and engine on the server's sockets.
    /// The profile (default: NAME-at-HOST-PORT) keeps the history and the secret of the
    /// first join; it is refused if it holds the embedded world or another server's chat.
    func runOnServer(_ server: String, user: String) throws {
        let (host, port, _) = try ServerURL.parse(server)
        let url = try ServerURL.canonical(server)
        var profileStore: SQLiteChatStorage?
        /// A profile this launch made: a refused join takes it away again.
        var newProfilePath: String?
        if !ephemeral {
            let name = profile ?? "\(user)-at-\(host)-\(port)".map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? String($0) : "-" }.joined()
            let path = try Profiles.path(for: name)
            if !FileManager.default.fileExists(atPath: path) { newProfilePath = path }
            do { profileStore = try SQLiteChatStorage.openProfile(name, path: path) } catch let e as any ProfileError {
                refuse(e.description)
            }
            if let store = profileStore {
                if store.holdsWorld() {
                    refuse("profile \(name) holds the embedded world's chat; give --profile another name for \(url)")
                }
                if let kept = store.setting("server.url"), kept != url || store.setting("server.user") != user {
                    refuse("profile \(name) is \(store.setting("server.user") ?? "?") on \(kept); give --profile another name for \(user) on \(url)")
                }
            }
        }
        let io = try remote.connect()
        let eventLog = try eventLogger()
        io.log = eventLog
        let (chosenTheme, themeWarnings) = try theme(for: profileStore)
        let storage: ChatStorage = try profileStore ?? SQLiteChatStorage.inMemory()
        let secrets: SecretKeeping = profileStore.map { ProfileSecrets(store: $0, url: url, user: user, file: ServerSecrets(host: host, port: port)) }
            ?? SecretInMemory()
        let session: NetworkSession, isNew: Bool
        do {
            // The operator's token, only when asked for (`--admin-token TOKEN|env`): the truth beside belief.
            (session, isNew) = try NetworkSession.join(io, user: user, invite: joining.invite, secrets: secrets, storage: storage,
                                                       policy: SyncPolicy.named(policy)!, mode: mode.flatMap(NotificationMode.init) ?? .remotePush,
                                                       adminToken: resolvedAdminToken, os: { SimOperatingSystem(seed: StableHash.fnv1a(user), scheduler: $0, timings: WorldTimings()) })
        } catch {
            // Nothing of a refused join stays behind: the profile this launch made goes, with its WAL.
            if let path = newProfilePath {
                profileStore?.close()
                for file in [path, path + "-wal", path + "-shm", path + ".lock"] { try? FileManager.default.removeItem(atPath: file) }
            }
            refuse("\(error)")
        }
        // `synchat fault --user NAME` finds a TUI user's secret where a bot's is kept. An
        // --ephemeral chat keeps nothing.
        (secrets as? ProfileSecrets)?.mirror()
        let world = session.world
        session.start()
        let memory = profileStore.map { store in
            LiveApp.MemoryStore(load: { store.setting("view") }, save: { try? store.setSetting("view", $0) })
        }
        let (keys, keyWarnings) = KeyFile.load()
        let app = LiveApp(session: session, speed: world.speed, eventLog: eventLog, memory: memory, keys: keys)
        app.bell = bell
        app.links = try linksWanted()
        let terminal = Terminal(theme: chosenTheme)
        terminal.mouse = !noMouse
        terminal.emojiRequest = try emojiRequest()
        terminal.notifyRequest = try notifyRequest()
        do { try terminal.open() } catch let e as Terminal.OpenError { refuse(e.description) }
        let hello = "on \(url) as \(user)\(isNew ? " (joined)" : ""): the server's clock, x\(world.speed.formatted())"
        app.loop(terminal: terminal, notices: [hello] + themeWarnings.map { "theme: " + $0 } + keyWarnings.map { "keys: " + $0 })
        terminal.close()
        profileStore?.close()
    }
}

/// The secret of a chat on a server, kept in its profile with the server and the user it is
/// for; mirrored where `synchat fault --user NAME` looks for it (`ServerSecrets`).
struct ProfileSecrets: SecretKeeping {
    let store: SQLiteChatStorage
    let url: String
    let user: String
    let file: ServerSecrets

    func load() -> String? { store.setting("server.secret") }

    func save(_ secret: String) throws {
        try store.setSetting("server.url", url)
        try store.setSetting("server.user", user)
        try store.setSetting("server.secret", secret)
    }

    /// Writes the profile's secret where `synchat fault --user NAME` reads a user's secret.
    func mirror() {
        guard let secret = load(), file.load(user) != secret else { return }
        try? file.save(secret, for: user)
    }
}
