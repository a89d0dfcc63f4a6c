import ArgumentParser
import ServerProtocol

// The executable is thin: argument parsing and wiring (docs/design.md).

/// `synchat` runs the chat, so the root command carries the chat's flags: `synchat --help`
/// lists them, next to the subcommands.
struct Synchat: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "synchat",
        abstract: "A terminal chat client whose heart is a sync engine, on an embedded simulated network.",
        usage: """
            synchat [<options>]
            synchat <subcommand>
            """,
        discussion: """
            Without a subcommand: the chat, full screen, on the embedded simulated network. \
            Press ? in the app for the keys. Time runs --speed times faster than the wall clock.
            """,
        version: "synchat 0.1.0",
        subcommands: [Simulate.self, Server.self, Bot.self, Fault.self]
    )

    @OptionGroup var chat: Chat

    func run() throws { try chat.run() }
}

/// A subcommand's arguments are its own. ArgumentParser lets a parent command take its
/// options from anywhere on the line, so the root, which has the chat's `--seed`,
/// `--policy` and `--scenario`, would take them from after `simulate` too. It stops at a
/// subcommand that captures its remaining input: what the subcommand does not know lands
/// here, and is refused.
struct SubcommandArguments: ParsableArguments {
    @Argument(parsing: .captureForPassthrough, help: .hidden)
    var unknown: [String] = []

    func validate() throws {
        guard let first = unknown.first else { return }
        // Worded as ArgumentParser words its own.
        throw ValidationError(first.hasPrefix("-") ? "Unknown option '\(first)'" : "Unexpected argument '\(first)'")
    }
}

/// Numbers on the command line are read as text and unconditionally (`parsing:
/// .unconditional`): ArgumentParser takes `-5` for a flag and says "Missing value", where
/// the error should say what is wrong with the number.
enum CommandLineNumber {
    static func seed(_ text: String) throws -> UInt64 {
        guard let n = UInt64(text) else { throw ValidationError("--seed \(text): expected a whole number from 0 to \(UInt64.max)") }
        return n
    }

    static func speed(_ text: String) throws -> Double {
        // The speeds a client runs a world at (`WorldDocument.speeds`): a server's are held to them.
        guard let v = Double(text), v.isFinite, WorldDocument.speeds.contains(v) else {
            throw ValidationError("--speed \(text): must be from 0.001 to 10000")
        }
        return v
    }
}
