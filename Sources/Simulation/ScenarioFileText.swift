import Foundation
import SyncCore

/// A scenario file read from disk a chunk at a time, never whole: `simulate` checks it, parses
/// it, then each run reads its lines again as it plays them (a million-line file held as its
/// bytes, then as text, would take 106 MB at the peak). The file stays open from the check
/// to the last run, so a file renamed or replaced meanwhile is not what is played; one
/// rewritten in place is caught when a line that parsed no longer does.
public final class ScenarioFileText: Sendable {
    public let path: String
    private let fd: Int32

    /// Opens `path`; an unreadable file is a `ScenarioError` naming it, as `load` says it.
    public init(path: String) throws {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let missing = errno == ENOENT || errno == ENOTDIR
            throw ScenarioError(file: path, line: 0, message: missing ? "no such file" : "cannot read the file")
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// The file's lines as bytes (docs/scenarios.md: LF or CRLF line ends, a UTF-8 BOM first skipped),
    /// as `ScenarioParser.LineIterator` splits a text: the last line too, even empty.
    func byteLines() -> ByteLines { ByteLines(fd: fd, path: path) }

    /// Checks that the whole file is UTF-8, as `parse(data:)` does: the first bad line and byte.
    func checkUTF8() throws {
        var lines = byteLines()
        var number = 0
        while let line = try lines.next() {
            number += 1
            if let at = UntrustedText.firstInvalidUTF8(line) {
                throw ScenarioError(file: path, line: number, message: "not UTF-8 text (byte \(at.column) of the line)")
            }
        }
    }

    /// The lines as text, for a file `checkUTF8` passed.
    func lines() -> TextLines { TextLines(bytes: byteLines(), path: path) }

    struct TextLines: IteratorProtocol {
        var bytes: ByteLines
        let path: String

        mutating func next() -> String? {
            do {
                return try bytes.next().map { String(decoding: $0, as: UTF8.self) }
            } catch {
                preconditionFailure("\(path): read before and not now: \(error)")
            }
        }
    }

    struct ByteLines {
        private let fd: Int32
        private let path: String
        private var offset: off_t = 0
        private var chunk = [UInt8](repeating: 0, count: 1 << 16)
        private var start = 0
        private var end = 0
        private var atFileStart = true
        private var done = false

        init(fd: Int32, path: String) {
            self.fd = fd
            self.path = path
        }

        /// Reads the next chunk; false at the end of the file.
        private mutating func fill() throws -> Bool {
            let n = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, offset) }
            guard n >= 0 else { throw ScenarioError(file: path, line: 0, message: "cannot read the file") }
            offset += off_t(n)
            start = 0
            end = n
            return n > 0
        }

        mutating func next() throws -> [UInt8]? {
            guard !done else { return nil }
            var line: [UInt8] = []
            while true {
                if start == end, try !fill() {
                    done = true
                    break
                }
                if atFileStart {
                    atFileStart = false
                    if end - start >= 3, chunk[start] == 0xEF, chunk[start + 1] == 0xBB, chunk[start + 2] == 0xBF { start += 3 }
                }
                if let newline = chunk[start..<end].firstIndex(of: 0x0A) {
                    line.append(contentsOf: chunk[start..<newline])
                    start = newline + 1
                    break
                }
                line.append(contentsOf: chunk[start..<end])
                start = end
            }
            if line.last == 0x0D { line.removeLast() }
            return line
        }
    }
}
