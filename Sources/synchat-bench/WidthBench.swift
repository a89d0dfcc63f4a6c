import CWidth
import ChatUI
import Foundation
import WidthCorpus

// `synchat-bench widths`: the width corpus (TestData/width-corpus/corpus.txt) against the real
// terminal. Part 1 measures, string by string, how far tmux moves its cursor (asked with CSI 6n
// from inside a pane) against the C library's per-scalar wcwidth sum (what ncursesw counts) and
// synchat's width. Part 2 plays every string through the TUI in tmux, as message bodies and as
// display names, at 120x36 and 80x24, and judges every captured screen. Figures, never pass/fail.

let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

func widthsBench(arguments: [String]) {
    var sample: Int?
    var sizes = [(120, 36), (80, 24)]
    var measureOnly = false
    var speed = 40
    var args = arguments[...]
    while let a = args.popFirst() {
        switch a {
        case "--sample":
            guard let n = args.popFirst().flatMap(Int.init), n > 0 else { usage("--sample takes a positive number of strings") }
            sample = n
        case "--size":
            guard let s = args.popFirst(), let x = s.firstIndex(of: "x"), let w = Int(s[..<x]), let h = Int(s[s.index(after: x)...]), w >= 60, h >= 16
            else { usage("--size takes WIDTHxHEIGHT, at least 60x16") }
            sizes = [(w, h)]
        case "--measure": measureOnly = true
        case "--speed":
            guard let n = args.popFirst().flatMap(Int.init), n > 0 else { usage("--speed takes a positive number") }
            speed = n
        default: usage("widths: unknown argument \(a) (expected --sample N, --size WxH, --speed N, --measure)")
        }
    }
    guard Tmux.available else { say("skipped: tmux is not installed"); return }
    let corpusPath = Corpus.defaultPath(packageRoot: packageRoot)
    guard var entries = try? Corpus.load(path: corpusPath) else { say("skipped: cannot read \(corpusPath)"); return }
    if let sample { entries = Corpus.sample(entries, count: sample) }
    let probe = [CommandLine.arguments[0], "probe-widths"]
    say("== widths: \(entries.count) strings of TestData/width-corpus/corpus.txt")
    measureWidths(entries, probe: probe)
    if measureOnly { return }
    // SYNCHAT_BIN plays another build (say, one from before a change) against the same judge.
    guard let binary = ProcessInfo.processInfo.environment["SYNCHAT_BIN"] ?? releaseBinary() else { return }
    for (w, h) in sizes {
        say("-- the TUI in tmux at \(w)x\(h), --speed \(speed): every string as a message body, then as a display name")
        var run = WidthRun(binary: binary, probe: probe, entries: entries, width: w, height: h)
        run.speed = speed
        let r: WidthRun.Result
        do { r = try run.run(progress: say) } catch { say("failed: \(error)"); continue }
        row("strings tried", "\(r.strings)")
        row("screens captured", "\(r.screens)")
        row("screens broken", "\(r.broken)", "goal 0")
        row("messages never seen whole (the run outpaced the captures)", "\(r.unseen.count)")
        row("messages not readable", "\(r.unreadable.count)")
        row("tries at a whole frame that found synchat busy 2 s on end", "\(r.busy)")
        if let gone = r.exited { say("  synchat exited before the last message showed:\n\(gone)") }
        row("wall time", String(format: "%.0f s", r.seconds))
        for (p, n) in r.problems.sorted(by: { $0.value > $1.value }) { say("  \(n) screens: \(p)") }
        if !r.brokenClasses.isEmpty {
            say("  classes on broken screens: " + r.brokenClasses.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        for e in r.examples where e.hasPrefix("unreadable") { say("  " + e) }
        for e in r.examples.prefix(1) where !e.hasPrefix("unreadable") { say("  first broken screen:\n" + e.split(separator: "\n").map { "    |" + $0 }.joined(separator: "\n")) }
    }
}

/// Per class: strings whose advance in tmux equals the wcwidth sum, and equals synchat's width.
func measureWidths(_ entries: [CorpusEntry], probe: [String]) {
    _ = TextWidth.localeReady
    let printable = entries.filter { !$0.text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) } }
    // What synchat draws for each string (the cells of TextWidth), measured as well.
    let drawnForms = printable.map { $0.text.flatMap { TextWidth.cells($0) }.map(\.text).joined() }
    guard let advances = try? TerminalProbe.measureInTmux(printable.map(\.text), probe: probe),
          let drawnAdvances = try? TerminalProbe.measureInTmux(drawnForms, probe: probe)
    else { say("failed: the terminal probe did not answer"); return }
    struct Tally { var n = 0, sumAgrees = 0, synchatAgrees = 0, drawnAgrees = 0 }
    var tallies: [String: Tally] = [:]
    for ((e, a), d) in zip(zip(printable, advances), drawnAdvances) {
        guard let a else { continue }
        let sum = e.text.unicodeScalars.reduce(0) { $0 + max(0, Int(synchat_wcwidth($1.value))) }
        var t = tallies[e.kind, default: Tally()]
        t.n += 1
        if sum == a { t.sumAgrees += 1 }
        if TextWidth.of(e.text) == a { t.synchatAgrees += 1 }
        if TextWidth.of(e.text) == d { t.drawnAgrees += 1 }
        tallies[e.kind] = t
    }
    say("How far tmux 3.3a moves its cursor for each string, against the C library's wcwidth summed per scalar (what")
    say("ncursesw counts) and synchat's width; last column: tmux's advance for what synchat draws instead of the string.")
    say("class".padding(toLength: 24, withPad: " ", startingAt: 0) + "strings".leftPad(9) + "  tmux = wcwidth sum" + "  tmux = synchat" + "  drawn: tmux = synchat")
    var total = Tally()
    for (k, t) in tallies.sorted(by: { $0.key < $1.key }) {
        say(k.padding(toLength: 24, withPad: " ", startingAt: 0) + "\(t.n)".leftPad(9) + "\(t.sumAgrees)".leftPad(21) + "\(t.synchatAgrees)".leftPad(17) + "\(t.drawnAgrees)".leftPad(24))
        total.n += t.n; total.sumAgrees += t.sumAgrees; total.synchatAgrees += t.synchatAgrees; total.drawnAgrees += t.drawnAgrees
    }
    say("all".padding(toLength: 24, withPad: " ", startingAt: 0) + "\(total.n)".leftPad(9) + "\(total.sumAgrees)".leftPad(21) + "\(total.synchatAgrees)".leftPad(17) + "\(total.drawnAgrees)".leftPad(24))
}
