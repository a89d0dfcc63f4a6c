import ChatUI
import Foundation
import TerminalUI
import Testing

/// The asciicast v2 writer: a header line and an event a line, every line JSON, each event's
/// text whole UTF-8 however the bytes were cut.
@Suite("Asciicast v2, written")
struct AsciicastTests {
    final class Lines: @unchecked Sendable {
        var all: [String] = []
    }

    static func written(_ body: (inout Asciicast) -> Void, header: Asciicast.Header = .init(width: 100, height: 30)) -> [String] {
        let lines = Lines()
        var cast = Asciicast(header) { lines.all.append($0) }
        body(&cast)
        return lines.all
    }

    @Test("the header: version 2, the size, and what the cast was drawn with (the title, TERM and SYNCHAT_EMOJI), as JSON")
    func header() throws {
        let lines = Self.written({ _ in }, header: .init(width: 80, height: 24, timestamp: 1_700_000_000, title: "synchat \"demo\"",
                                                          env: [("TERM", "xterm-256color"), ("SYNCHAT_EMOJI", "safe")]))
        #expect(lines.count == 1 && lines[0].hasSuffix("\n"))
        let h = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(h["version"] as? Int == 2 && h["width"] as? Int == 80 && h["height"] as? Int == 24 && h["timestamp"] as? Int == 1_700_000_000)
        #expect(h["title"] as? String == "synchat \"demo\"")
        #expect((h["env"] as? [String: String]) == ["TERM": "xterm-256color", "SYNCHAT_EMOJI": "safe"])
    }

    @Test("output cut inside a UTF-8 sequence is held until it is whole; every control is escaped; each event parses back to the bytes")
    func output() throws {
        let bytes = Array("\u{1B}[1;1H👨\u{200D}👩\u{200D}👧 \"q\" \\ \u{07}\u{9B}é\r\n".utf8)
        for cut in 1..<bytes.count {
            let lines = Self.written { cast in
                cast.output(bytes[..<cut], at: 0.5)
                cast.output(bytes[cut...], at: 1.25)
                cast.finish(at: 2)
            }
            var text = ""
            for line in lines.dropFirst() {
                let event = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [Any], "\(line)")
                #expect(event.count == 3 && event[1] as? String == "o")
                text += event[2] as! String
                #expect(!line.dropLast().contains { $0.isNewline || $0 == "\u{1B}" }, "a raw control in \(line.debugDescription)")
            }
            #expect(Array(text.utf8) == bytes, "cut at \(cut)")
        }
    }

    @Test("times with microseconds; a resize as an r event; a sequence never finished goes out as U+FFFD")
    func timesAndResize() {
        let lines = Self.written { cast in
            cast.output([0x61], at: 1.5)
            cast.resize(width: 90, height: 28, at: 2.000_001)
            cast.output([0xF0, 0x9F], at: 3)
            cast.finish(at: 3.5)
        }
        #expect(lines.dropFirst() == ["[1.500000, \"o\", \"a\"]\n", "[2.000001, \"r\", \"90x28\"]\n", "[3.500000, \"o\", \"\u{FFFD}\"]\n"])
    }

    @Test("a cast's child draws safe widths and sends no desktop notification unless asked (--emoji, --notify, or their variables): a cast played later must not pop notifications on its viewer's desktop")
    func castChild() {
        #expect(CastRecorder.childArguments(["--cast", "a.cast", "--speed", "60"], environment: [:]) == ["--speed", "60", "--emoji", "safe", "--notify", "off"])
        #expect(CastRecorder.childArguments(["--cast=a.cast", "--notify", "osc777"], environment: [:]) == ["--notify", "osc777", "--emoji", "safe"])
        #expect(CastRecorder.childArguments(["--cast", "a.cast"], environment: ["SYNCHAT_NOTIFY": "bell", "SYNCHAT_EMOJI": "full"]).isEmpty)
    }
}
