import Foundation
import Testing
import TestSupport

/// What server and client share is written once, in ServerProtocol (and the one hash in
/// SyncCore): no other file spells a route, the rule of a user's name or the hash again, and a
/// client needs nothing of the server's own module.
@Suite("One copy of each shared fact: the protocol's, the hash, starting a child")
struct ProtocolBoundaryTests {
    static let root = BuiltProducts.packageRoot

    /// `path:line: text` for each line of code (not a comment) in `folder` (Sources unless
    /// said) that holds `needle`, outside the files `allowed` says may.
    static func offenders(_ needle: String, in folder: String = "Sources", allowed: (String) -> Bool) throws -> [String] {
        let base = root.appendingPathComponent(folder)
        let walker = try #require(FileManager.default.enumerator(atPath: base.path))
        var found: [String] = []
        for case let file as String in walker where file.hasSuffix(".swift") && !allowed(file) {
            let text = try String(contentsOf: base.appendingPathComponent(file), encoding: .utf8)
            for (i, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                guard !code.hasPrefix("//"), code.contains(needle) else { continue }
                found.append("\(folder)/\(file):\(i + 1): \(code.prefix(100))")
            }
        }
        return found
    }

    @Test("no route is spelled outside ServerProtocol's Route: the server, synchat's commands and the bench's raw requests all read it")
    func routes() throws {
        for prefix in ["/v1/", "/admin/"] {
            let found = try Self.offenders(prefix) { $0.hasPrefix("ServerProtocol/") }
            #expect(found.isEmpty, "spell a route of their own:\n\(found.prefix(20).joined(separator: "\n"))")
        }
    }

    @Test("the protocol's version header is named once, in ServerProtocol's ProtocolVersion: every client, the server and the bench read it")
    func oneVersionHeader() throws {
        let found = try Self.offenders("Synchat-Protocol") { $0 == "ServerProtocol/Documents.swift" }
        #expect(found.isEmpty, "name the version header again:\n\(found.joined(separator: "\n"))")
    }

    @Test("FNV-1a is written once (StableHash), and the rule of a user's name once (UserName)")
    func oneHashOneNameRule() throws {
        let hash = try Self.offenders("0xcbf2") { $0 == "SyncCore/StableHash.swift" }
        #expect(hash.isEmpty, "FNV-1a again:\n\(hash.joined(separator: "\n"))")
        let rule = try Self.offenders("1 to 32 of") { $0 == "ServerProtocol/UserName.swift" }
        #expect(rule.isEmpty, "the name rule again:\n\(rule.joined(separator: "\n"))")
    }

    @Test("only what runs a server imports ChatServer: a client checks a name and seeds its OS without it")
    func clientsNeedNoServer() throws {
        let found = try Self.offenders("import ChatServer") { $0.hasPrefix("ChatServer/") || $0 == "synchat/Server.swift" || $0.contains("ServerPair/") }
        #expect(found.isEmpty, "import the server's module:\n\(found.joined(separator: "\n"))")
    }

    @Test("one place starts a child process, for the product and the tests alike: posix_spawn only in Spawn's ChildProcess")
    func oneSpawner() throws {
        for needle in ["posix_spawn", "Process()", "fork()"] {
            let found = try Self.offenders(needle) { $0.hasPrefix("Spawn/") }
                // The profile lock's test forks on purpose: its subject is a lock a forked child shares.
                + Self.offenders(needle, in: "Tests") {
                    $0 == "LayoutTests/ProtocolBoundaryTests.swift" || $0 == "ChatServerTests/ServerStoreTests.swift" && needle == "fork()"
                }
            #expect(found.isEmpty, "starts a child of its own:\n\(found.joined(separator: "\n"))")
        }
    }
}
