import ArgumentParser
import Foundation
import Simulation
import SyncCore
import SyncEngine
import Config

/// A profile or a terminal that cannot be used: one line on stderr, exit code 1. Paths come
/// from the environment (XDG_DATA_HOME, HOME) and may hold any byte: never written raw.
func refuse(_ message: String) -> Never {
    FileHandle.standardError.write(Data("synchat: \(UntrustedText.visible(message))\n".utf8))
    exit(1)
}

/// Bad flags and bad scenario files: one line on stderr, exit code 2 (README.md#flags; docs/reliability.md#bad-files).
func fail(_ message: String) -> Never {
    // A file's bytes may be quoted in the message: never write them to the terminal raw.
    FileHandle.standardError.write(Data("synchat: \(UntrustedText.visible(message))\n".utf8))
    exit(2)
}

// One leading `--` is dropped: `swift run synchat -- --ephemeral` passes it through to the
// program, and the README's lines are typed that way.
let arguments = CommandLine.arguments.dropFirst().first == "--" ? Array(CommandLine.arguments.dropFirst(2)) : Array(CommandLine.arguments.dropFirst())

do {
    var command = try Synchat.parseAsRoot(arguments)
    try command.run()
} catch let error as ScenarioError {
    fail(error.description)
} catch let error as ThemeError {
    fail("theme " + error.description)
} catch {
    if Synchat.exitCode(for: error) == .success {
        Synchat.exit(withError: error)  // --help, --version
    }
    let first = Synchat.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
    // The help of the command that was given: a subcommand's flags are in its own.
    let names = Synchat.configuration.subcommands.map { $0.configuration.commandName ?? "\($0)".lowercased() }
    let sub = arguments.first.flatMap { names.contains($0) ? $0 : nil }
    fail(first + " (see synchat " + (sub.map { "\($0) " } ?? "") + "--help)")
}
