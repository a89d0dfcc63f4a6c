import ArgumentParser
import Foundation
import ServerProtocol
import SyncEngine
import ServerClient

/// The flags that name a synchat server and how to trust it, shared by the chat
/// (`synchat --server`), `synchat bot` and `synchat fault`. `Owner` is the command that holds
/// them: ArgumentParser hands a subcommand the option group of its parent command when both
/// have the same type, so the root's (the chat's, empty) would stand in for `bot`'s.
struct ServerOptions<Owner>: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The synchat server: http://HOST:PORT or https://HOST:PORT (for the chat, with --user, instead of the embedded world).", valueName: "URL"))
    var server: String?

    @Option(name: .long, help: ArgumentHelp("For an https:// server whose certificate a private CA signed: that CA's certificate (PEM).", valueName: "FILE"))
    var ca: String?

    func validate() throws {
        guard let server else {
            if ca != nil { throw ValidationError("--ca is a server's: give --server URL and --user NAME too") }
            return
        }
        if ca != nil, try !ServerURL.parse(server).tls { throw ValidationError("--ca is for https:// servers; \(server) is plain http") }
    }

    /// The server, for a command that cannot run without one.
    func required() throws -> String {
        guard let server else { throw ValidationError("Missing expected argument '--server <URL>'") }
        return server
    }

    /// The client's sockets to the server.
    func connect() throws -> NetIO { try ServerURL.connect(try required(), ca: ca) }
}

/// The flags of a user who joins a server: the chat's and the bot's (`Owner`: as for `ServerOptions`).
struct JoinOptions<Owner>: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Your name on the server (\(UserName.rule)); the secret of your first join is kept.", valueName: "NAME"))
    var user: String?

    @Option(name: .long, help: ArgumentHelp("The server's invite, for your first join there (its operator has it; synchat server prints it).", valueName: "CODE"))
    var invite: String?
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

extension ServerSecrets {
    /// The secret of `user`, as joining keeps it.
    func keeper(for user: String) -> SecretKeeping { Keeper(secrets: self, user: user) }

    private struct Keeper: SecretKeeping {
        let secrets: ServerSecrets
        let user: String
        func load() -> String? { secrets.load(user) }
        func save(_ secret: String) throws { try secrets.save(secret, for: user) }
    }
}
