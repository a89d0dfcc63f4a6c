import TerminalApp
import ArgumentParser
import ChatStore
import ChatUI
import Config
import Foundation
import Simulation
import SimulatedWorld
import SyncCore
import TerminalUI

/// `synchat simulate --scenario F --cast FILE [--size WxH] [--speed N] [--emoji safe|full]`:
/// the scenario played as the TUI would show it, with no terminal, into an asciicast v2 file.
struct CastOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("With --scenario: write the screen, as the TUI shows the scenario, to this asciicast v2 file (asciinema's player plays it), with no terminal.", valueName: "FILE"))
    var cast: String?

    @Option(name: .customLong("size"), help: ArgumentHelp("With --cast: the screen's columns and rows (default 100x30).", valueName: "WxH"))
    var sizeText: String?

    @Option(name: .customLong("speed"), parsing: .unconditional,
            help: ArgumentHelp("With --cast: simulated seconds per second of the cast, from 0.001 to 10000 (default 30).", valueName: "N"))
    var speedText: String?

    @Option(name: .customLong("emoji"), help: ArgumentHelp("With --cast: safe (default: split as every terminal draws alike, for players you cannot ask) or full (whole, one cell pair each); the header says which.", valueName: "safe|full"))
    var emoji: String?

    func validate() throws {
        guard cast != nil else {
            for (given, flag) in [(sizeText != nil, "--size"), (speedText != nil, "--speed"), (emoji != nil, "--emoji")] where given {
                throw ValidationError("\(flag) goes with --cast FILE")
            }
            return
        }
        _ = try size()
        _ = try CommandLineNumber.speed(speedText ?? "30")
        _ = try widths()
    }

    func size() throws -> (width: Int, height: Int) {
        let text = sizeText ?? "100x30"
        let parts = text.split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), (Render.minWidth...1000).contains(w), (Render.minHeight...1000).contains(h) else {
            throw ValidationError("--size \(text): expected COLUMNSxROWS, from \(Render.minWidth)x\(Render.minHeight) to 1000x1000, e.g. 100x30")
        }
        return (w, h)
    }

    /// A cast is played by terminals nobody can ask: safe unless told otherwise.
    func widths() throws -> (EmojiWidths, word: String) {
        switch emoji ?? "safe" {
        case "safe": return (.safe, "safe")
        case "full": return (.clusters, "full")
        default: throw ValidationError("--emoji \(emoji!): a cast is safe or full")
        }
    }
}

extension Simulate {
    /// How much of the settle a cast shows: the story is the script; the settle after it is
    /// the engine's quiet tail, which a cast shows for a moment (the bar says `script
    /// settling`), not for its whole length (the demo's 15 minutes were half its cast).
    static func castTail(settle: Interval) -> Interval { min(settle, .seconds(30)) }

    /// `--cast FILE`: the scenario in virtual time, a frame of the screen every tenth of a
    /// second of the cast (`--speed` simulated seconds a second), each written as the bytes a
    /// terminal receives (`ANSIScreen`) into the cast (`Asciicast`), until the script ends and
    /// 30 s of its settle (`castTail`), or a `quit` line.
    func runCast(_ options: CastOptions) throws {
        let path = options.cast!
        let (width, height) = try options.size()
        let speed = try CommandLineNumber.speed(options.speedText ?? "30")
        let (widths, word) = try options.widths()
        let seed = try seedText.map(CommandLineNumber.seed)
        var scenario = try ScenarioParser.load(path: self.scenario!)
        if let pushModel { scenario.pushModel = PushModel(rawValue: pushModel)! }
        guard FileManager.default.createFile(atPath: path, contents: nil), let file = FileHandle(forWritingAtPath: path) else {
            fail("--cast: cannot write \(path)")
        }
        // The same session as `synchat --ephemeral --scenario F`: its store in memory.
        let run = ScenarioRun(scenario: scenario, seed: seed, policy: SyncPolicy.named(policy ?? "adaptive")!, storage: try SQLiteChatStorage.inMemory())
        let app = LiveApp(session: run.session, player: run, speed: speed)
        let name = (self.scenario! as NSString).lastPathComponent
        var cast = Asciicast(.init(width: width, height: height, title: "synchat: \(name) at x\(speed == speed.rounded() ? String(Int(speed)) : String(speed)) (emoji \(word))",
                                   env: [("TERM", "xterm-256color"), ("SYNCHAT_EMOJI", word)])) { file.write(Data($0.utf8)) }
        var screen = ANSIScreen(sgr: Theme.default.sgr(colours: 256))
        let start = run.startedAt
        let every = Interval(milliseconds: max(1, Int64((100 * speed).rounded())))
        app.frames(width: width, height: height, emoji: widths, every: every, until: run.scriptEnd + Self.castTail(settle: scenario.settle)) { t, grid in
            let bytes = screen.frame(grid)
            if !bytes.isEmpty { cast.output(Array(bytes.utf8), at: Double((t - start).milliseconds) / 1000 / speed) }
        }
        try file.close()
    }
}
