import Foundation

/// Asks the real terminal how far it moves the cursor for a string: inside the terminal (a tmux
/// pane), print the string at the start of a cleared screen, send CSI 6n (device status report)
/// and read the cursor position the terminal answers. The terminal is the judge, so this shares
/// nothing with synchat's width model.
public enum TerminalProbe {
    /// Runs in the terminal: one advance per string of `strings`, nil where it did not answer.
    public static func measureHere(_ strings: [String]) -> [Int?] {
        var saved = termios()
        tcgetattr(STDIN_FILENO, &saved)
        var raw = saved
        cfmakeraw(&raw)
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        defer { tcsetattr(STDIN_FILENO, TCSANOW, &saved) }
        var results: [Int?] = []
        for s in strings {
            write("\u{1B}[H\u{1B}[2J" + s + "\u{1B}[6n")
            results.append(readColumn())
        }
        write("\u{1B}[H\u{1B}[2J")
        return results
    }

    private static func write(_ s: String) {
        var bytes = Array(s.utf8)
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Foundation.write(STDOUT_FILENO, $0.baseAddress! + off, $0.count - off) }
            if n <= 0 { return }
            off += n
        }
    }

    /// Reads `ESC [ row ; col R` and returns col - 1.
    private static func readColumn() -> Int? {
        var reply: [UInt8] = []
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            var p = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 100) > 0 else { continue }
            var byte: UInt8 = 0
            guard read(STDIN_FILENO, &byte, 1) == 1 else { return nil }
            reply.append(byte)
            if byte == UInt8(ascii: "R") {
                guard let semi = reply.lastIndex(of: UInt8(ascii: ";")) else { return nil }
                return Int(String(decoding: reply[(semi + 1)..<(reply.count - 1)], as: UTF8.self)).map { $0 - 1 }
            }
        }
        return nil
    }

    /// From outside: runs `probe` (a command that calls `measureHere` on the strings of file IN and
    /// writes one advance a line to file OUT) in a pane of a private tmux server and returns the
    /// advances. `probe` is given IN and OUT as its last two arguments.
    public static func measureInTmux(_ strings: [String], probe: [String], width: Int = 250) throws -> [Int?] {
        let dir = NSTemporaryDirectory() + "synchat-probe-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let input = dir + "/in.txt", output = dir + "/out.txt"
        try encode(strings).write(toFile: input, atomically: true, encoding: .utf8)
        let tmux = Tmux(tag: "probe")
        defer { tmux.close() }
        try tmux.start(width: width, height: 5, argv: probe + [input, output])
        let done = Tmux.poll(seconds: 60 + Double(strings.count) / 200) {
            ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").hasSuffix("END\n")
        }
        guard done, let text = try? String(contentsOfFile: output, encoding: .utf8) else {
            throw Corpus.FormatError(description: "the terminal probe did not finish")
        }
        let lines = text.split(separator: "\n").dropLast()
        return lines.map { Int($0) }
    }

    /// What the terminal holds after each of `strings` is printed raw (`printf`), as tmux's
    /// `capture-pane` gives it back: a pane may keep less of a long sequence than it was given
    /// (tmux 3.3a keeps at most 21 bytes in a cell). One string a row of a pane of a private
    /// tmux server.
    public static func heldInTmux(_ strings: [String], width: Int = 250) throws -> [String] {
        guard !strings.isEmpty else { return [] }
        let dir = NSTemporaryDirectory() + "synchat-held-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try (strings.joined(separator: "\r\n") + "\r\nEND").write(toFile: dir + "/held.txt", atomically: true, encoding: .utf8)
        let tmux = Tmux(tag: "held")
        defer { tmux.close() }
        try tmux.start(width: width, height: strings.count + 2, argv: ["sh", "-c", "printf '\\033[H\\033[2J'; cat \(dir)/held.txt; sleep 60"])
        guard Tmux.poll(seconds: 20, until: { tmux.capture().contains("END") }) else {
            throw Corpus.FormatError(description: "tmux did not show the strings printed raw")
        }
        let rows = tmux.capture().split(separator: "\n", omittingEmptySubsequences: false).map { row -> String in
            var r = Substring(row)
            while r.last == " " { r = r.dropLast() }
            return String(r)
        }
        return Array(rows.prefix(strings.count))
    }

    /// One string a line; each scalar as `\u{HEX}` so that no line holds a line break.
    public static func encode(_ strings: [String]) -> String {
        strings.map { $0.unicodeScalars.map { "\\u{" + String($0.value, radix: 16) + "}" }.joined() }.joined(separator: "\n") + "\n"
    }

    public static func decode(_ text: String) throws -> [String] {
        try text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map {
            try Corpus.unescape(String($0).unicodeScalars, at: "probe input")
        }
    }

    /// The probe's side: reads IN, measures here, writes OUT (one advance a line, `-` when the
    /// terminal did not answer, then `END`).
    public static func runProbe(input: String, output: String) throws {
        let strings = try decode(String(contentsOfFile: input, encoding: .utf8))
        let advances = measureHere(strings)
        let text = advances.map { $0.map(String.init) ?? "-" }.joined(separator: "\n") + (advances.isEmpty ? "" : "\n") + "END\n"
        try text.write(toFile: output + ".tmp", atomically: false, encoding: .utf8)
        rename(output + ".tmp", output)
    }
}
