import CNCurses
import Foundation
import SyncCore

/// Bracketed paste, read as one edit (docs/keys.md): the text between the terminal's
/// `ESC [200~` and `ESC [201~`, never keys. Read from the terminal's bytes here, not through
/// curses: curses answers a byte that is not UTF-8 with ERR and drops what it had read behind
/// it.
extension Terminal {
    /// The most of a paste kept: four times the message limit (the rest is read and dropped).
    static let pasteLimit = 4 * MessageLimits.maxBodyBytes

    /// After the paste's start (curses has just read its `ESC [200~`): its bytes up to its end,
    /// or up to a second with nothing more, should the end never come. What follows the end
    /// at once (in the same write) is the paste's too: a pasted text holding `ESC [201~` would
    /// otherwise end it and act as keys (`ESC p` a fault, `q q` a quit); a key a person types
    /// comes later than at once.
    func readPaste() -> (text: String, replaced: Int) {
        var paste = PastedBytes(limit: Self.pasteLimit)
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            var ready = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
            let n = poll(&ready, 1, paste.ended ? 0 : 1000)
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            let got = buffer.withUnsafeMutableBufferPointer { Foundation.read(STDIN_FILENO, $0.baseAddress, $0.count) }
            guard got > 0 else { break }
            paste.take(buffer[0..<got])
        }
        return paste.text
    }
}

/// A paste's bytes as the terminal sends them, its marks (`ESC [200~`, `ESC [201~`) taken out, kept up to
/// `limit` bytes, then read as UTF-8 with each byte that is not UTF-8 as U+FFFD (counted). Pure:
/// the tests feed it bytes cut anywhere.
public struct PastedBytes: Sendable {
    /// A mark: `ESC [20`, then `0` (a start, inside a paste nothing) or `1` (the end), then `~`.
    static let mark = Array("\u{1B}[20".utf8)
    public let limit: Int
    private var kept: [UInt8] = []
    private var matched: [UInt8] = []  // the bytes of a mark seen so far
    private var dropped = false
    /// An end mark was seen.
    public private(set) var ended = false

    public init(limit: Int) { self.limit = limit }

    public mutating func take(_ bytes: some Sequence<UInt8>) {
        for b in bytes {
            let n = matched.count
            let fits = n < Self.mark.count ? b == Self.mark[n]
                : n == Self.mark.count ? b == UInt8(ascii: "0") || b == UInt8(ascii: "1")
                : b == UInt8(ascii: "~")
            if fits {
                matched.append(b)
                if matched.count == Self.mark.count + 2 {
                    if matched[Self.mark.count] == UInt8(ascii: "1") { ended = true }
                    matched = []
                }
                continue
            }
            if !matched.isEmpty { keep(matched); matched = [] }
            if b == Self.mark[0] { matched = [b] } else { keep(CollectionOfOne(b)) }
        }
    }

    private mutating func keep(_ bytes: some Collection<UInt8>) {
        guard kept.count + bytes.count <= limit else { dropped = true; return }
        kept.append(contentsOf: bytes)
    }

    /// The text, and how many bytes that were not UTF-8 it holds as U+FFFD. A sequence the
    /// limit cut in two is left out whole, not counted as a bad byte.
    public var text: (String, replaced: Int) {
        var bytes = kept + matched
        if dropped, let lead = bytes.lastIndex(where: { $0 & 0xC0 != 0x80 }) {
            let need = bytes[lead] >= 0xF0 ? 4 : bytes[lead] >= 0xE0 ? 3 : bytes[lead] >= 0xC0 ? 2 : 1
            if bytes.count - lead < need { bytes.removeSubrange(lead...) }
        }
        let text = String(decoding: bytes, as: UTF8.self)
        let replacements = text.unicodeScalars.filter { $0 == "\u{FFFD}" }.count
        // U+FFFD sent as itself (EF BF BD) is text, not a bad byte.
        var literal = 0
        var i = 0
        while i + 2 < bytes.count {
            if bytes[i] == 0xEF, bytes[i + 1] == 0xBF, bytes[i + 2] == 0xBD { literal += 1; i += 3 } else { i += 1 }
        }
        return (text, max(0, replacements - literal))
    }
}
