import Foundation
import Spawn

/// Key echo measured through a tmux control-mode client (`tmux -C`): a key is sent on the
/// client's standard input and the time runs until tmux reports the program's output
/// holding that character (`%output`). No process is started per key or per look at the
/// screen: `send-keys` and `capture-pane` run by a shell take 2–3 ms each, more than the
/// programs themselves, and the look comes every few milliseconds, so synchat and WeeChat
/// could not be told apart that way. What is left is tmux's pty round trip and the program.
final class EchoProbe {
    private let pid: pid_t
    private let input = Pipe()
    private let output = Pipe()
    private var pending = Data()

    /// Attaches to session `target` of the tmux server `socket` (`-L`).
    init?(socket: String, target: String) {
        guard let pid = try? ChildProcess.spawn(["tmux", "-L", socket, "-C", "attach", "-t", target],
                                                streams: .descriptors(input: input.fileHandleForReading.fileDescriptor,
                                                                      output: output.fileHandleForWriting.fileDescriptor)) else { return nil }
        self.pid = pid
        // The child's ends are the child's: closed here, the reader sees its end when it exits.
        try? input.fileHandleForReading.close()
        try? output.fileHandleForWriting.close()
        _ = lines(for: 0.3)  // the attach's own replies, and a frame or two
    }

    deinit {
        try? input.fileHandleForWriting.write(contentsOf: Data("detach-client\n".utf8))
        try? input.fileHandleForWriting.close()
        ChildProcess.wait(pid)
    }

    /// The lines tmux writes within `seconds`.
    private func lines(for seconds: Double, until done: (String) -> Bool = { _ in false }) -> Bool {
        let fd = output.fileHandleForReading.fileDescriptor
        let end = now() + UInt64(seconds * 1e9)
        while now() < end {
            while let newline = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending.removeSubrange(pending.startIndex...newline)
                if done(line) { return true }
            }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, Int32(max(1, (end - min(end, now())) / 1_000_000))) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let n = read(fd, &buffer, buffer.count)
            guard n > 0 else { return false }
            pending.append(contentsOf: buffer[0..<n])
        }
        return false
    }

    /// Milliseconds from sending `key` (a letter that no terminal escape ends with) to the
    /// program's output holding it; nil after 5 s.
    func echo(_ key: Character, target: String) -> Double? {
        _ = lines(for: 0.02)  // what came before (a clock's tick) is not the echo
        let start = now()
        try? input.fileHandleForWriting.write(contentsOf: Data("send-keys -t \(target) -l \(key)\n".utf8))
        let seen = lines(for: 5) { $0.hasPrefix("%output ") && $0.dropFirst(8).contains(key) }
        return seen ? Double(now() - start) / 1e6 : nil
    }
}
