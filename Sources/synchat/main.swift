import ArgumentParser
import Foundation
import Simulation

// The executable is thin: argument parsing and wiring (STYLE.md).

struct Synchat: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "synchat",
        abstract: "A terminal chat client whose heart is a sync engine, on an embedded simulated network.",
        version: "synchat 0.1.0",
        subcommands: [Simulate.self]
    )
}

struct Simulate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a scenario in virtual time, as fast as the machine allows.",
        discussion: "Prints the run's figures, or with --events the event log, one line per engine decision."
    )

    @Option(name: .long, help: "The scenario file (see Scenarios/).")
    var scenario: String

    @Option(name: .long, help: "Override the scenario's seed.")
    var seed: UInt64?

    @Flag(name: .long, help: "Print the event log instead of the figures.")
    var events = false

    func run() throws {
        let parsed = try ScenarioParser.load(path: scenario)
        let run = ScenarioRun(scenario: parsed, seed: seed)
        run.run()
        let lines = events ? run.logLines : RunSummary(run).table
        var out = lines.joined(separator: "\n")
        out += "\n"
        FileHandle.standardOutput.write(Data(out.utf8))
    }
}

/// Bad flags and bad scenario files: one line on stderr, exit code 2 (SPEC §8).
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("synchat: \(message)\n".utf8))
    exit(2)
}

do {
    var command = try Synchat.parseAsRoot()
    try command.run()
} catch let error as ScenarioError {
    fail(error.description)
} catch {
    if Synchat.exitCode(for: error) == .success {
        Synchat.exit(withError: error)  // --help, --version
    }
    let first = Synchat.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
    fail(first + " (see synchat --help)")
}
