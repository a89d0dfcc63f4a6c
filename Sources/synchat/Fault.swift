import Directives
import ArgumentParser
import Foundation
import ServerProtocol
import ServerClient

struct Fault: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send a scenario directive to synchat server: a fault of the network (one user or all), or a directive of the app for a user's client.",
        discussion: """
            With the admin token (--token, or SYNCHAT_ADMIN_TOKEN) it goes to POST \(Route.adminFault), for --user or, \
            without it, for every user. Without the token, --user applies it to that user's own world with the \
            secret kept at its first join (POST \(Route.fault)). Examples: synchat fault --server http://127.0.0.1:7420 \
            --user ada push drop 100% ; synchat fault --server URL indexer down. Prints the server's answer; exit \
            code 1 when it refused, with its one-line reason.
            """
    )

    @OptionGroup var remote: ServerOptions<Fault>

    @Option(name: .long, help: ArgumentHelp("The user whose world it changes (default: every user, with the admin token).", valueName: "NAME"))
    var user: String?

    @Option(name: .long, help: ArgumentHelp("The admin token synchat server printed (or SYNCHAT_ADMIN_TOKEN).", valueName: "TOKEN"))
    var token: String?

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("The directive, as a scenario line says it: push drop 100%, realtime stale, indexer down…", valueName: "LINE"))
    var words: [String] = []

    func validate() throws {
        let url = try ServerURL.parse(try remote.required())
        guard !words.isEmpty else { throw ValidationError("no directive: say one, e.g. push drop 100%") }
        // The operator's token opens every user's world: never in clear across a network.
        if token != nil || ProcessInfo.processInfo.environment["SYNCHAT_ADMIN_TOKEN"] != nil, !url.tls, !HostName.isLoopback(url.host) {
            throw ValidationError("the admin token over plain http to \(url.host) would carry the operator's token in clear: use https://, or a loopback server")
        }
        if token == nil, ProcessInfo.processInfo.environment["SYNCHAT_ADMIN_TOKEN"] == nil, user == nil {
            throw ValidationError("without the admin token (--token or SYNCHAT_ADMIN_TOKEN), name the user whose secret to use (--user)")
        }
    }

    func run() throws {
        let (host, port, _) = try ServerURL.parse(try remote.required())
        let io = try remote.connect()
        let line = words.joined(separator: " ")
        // The line is read here, at the command line, and crosses the wire as a typed document.
        let directive: Directive
        do { directive = try Directive(parsing: line) } catch { refuse("fault: \(error)") }
        let admin = token ?? ProcessInfo.processInfo.environment["SYNCHAT_ADMIN_TOKEN"]
        let path: String, credential: String
        if let admin {
            (path, credential) = (Route.adminFault(user: user), admin)
        } else {
            let name = user ?? ""
            guard let secret = ServerSecrets(host: host, port: port).load(name) else {
                refuse("fault: no secret kept for \(name) on \(host):\(port): pass the admin token (--token)")
            }
            (path, credential) = (Route.fault, secret)
        }
        let answer: NetIO.Answer
        do { answer = try io.requestNow(.POST, path, body: DirectiveDocument.encode(directive).data, token: credential) } catch {
            refuse("fault: cannot reach synchat server: \(io.words(for: error))")
        }
        guard answer.status == 200 else { refuse("fault: \(answer.error)") }
        FileHandle.standardOutput.write(answer.body + Data("\n".utf8))
    }
}
