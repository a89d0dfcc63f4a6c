import ChatUI
import Foundation
import SyncCore
import Testing
import WidthCorpus

/// The bytes: a desktop notification by each terminal protocol, with nothing a
/// sender wrote reaching the terminal as a sequence.
@Suite("Desktop notifications: the bytes")
struct DesktopNotificationTests {
    typealias Method = DesktopNotification.Method

    /// The fields of a notification as the terminal reads its bytes (a reader written here,
    /// by each protocol's documentation, not by the encoder): nil when the bytes are not one
    /// whole sequence (or two, for OSC 99) with nothing outside or inside that a terminal acts on.
    static func read(_ bytes: [UInt8], _ method: Method) -> (title: String, body: String)? {
        var text = String(decoding: bytes, as: UTF8.self)
        if method == .osc99 {
            // Two OSCs: `ESC ] 99 ; i=1:d=0:p=title:e=1 ; B64 ESC \` then the body's.
            let parts = Array(text.utf8).split(separator: 0x5C, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
            // Split at each ST's backslash: each part but the last ends with the ST's ESC.
            guard parts.count == 3, parts[2].isEmpty, parts[0].hasSuffix("\u{1B}"), parts[1].hasSuffix("\u{1B}") else { return nil }
            var fields: [String: String] = [:]
            for part in parts.dropLast().map({ String($0.unicodeScalars.dropLast()) }) {
                guard part.hasPrefix("\u{1B}]99;"), part.unicodeScalars.dropFirst(2).allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else { return nil }
                let f = Array(part.utf8.dropFirst(5)).split(separator: UInt8(ascii: ";"), maxSplits: 1, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
                guard f.count == 2, f[0].contains("e=1"), let data = Data(base64Encoded: f[1]) else { return nil }
                let kind = f[0].contains("p=title") ? "title" : "body"
                fields[kind] = String(decoding: data, as: UTF8.self)
            }
            return (fields["title"] ?? "", fields["body"] ?? "")
        }
        guard text.hasPrefix("\u{1B}]"), text.hasSuffix("\u{1B}\\") else { return nil }
        text = String(String.UnicodeScalarView(text.unicodeScalars.dropFirst(2).dropLast(2)))
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) else { return nil }
        switch method {
        case .osc777:
            // By bytes, as a terminal reads them (a `;` and a skin tone after it are one Character).
            let f = Array(text.utf8).split(separator: UInt8(ascii: ";"), maxSplits: 3, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
            guard f.count == 4, f[0] == "777", f[1] == "notify" else { return nil }
            return (f[2], f[3])
        case .osc9:
            guard text.utf8.starts(with: "9;".utf8) else { return nil }
            return ("", String(String.UnicodeScalarView(text.unicodeScalars.dropFirst(2))))
        default: return nil
        }
    }

    @Test("each protocol carries the contact's name and the message: OSC 777 notify;TITLE;BODY, OSC 9 TEXT, OSC 99 title and body in base64; the bell is one BEL; off is nothing")
    func protocols() throws {
        for method in [Method.osc777, .osc99] {
            let r = try #require(Self.read(DesktopNotification.bytes(method, title: "Alice", body: "lunch at one?"), method), "\(method)")
            #expect(r.title == "Alice" && r.body == "lunch at one?", "\(method)")
        }
        #expect(Self.read(DesktopNotification.bytes(.osc9, title: "Alice", body: "lunch at one?"), .osc9)?.body == "Alice: lunch at one?")
        #expect(DesktopNotification.bytes(.bell, title: "Alice", body: "x") == [0x07])
        #expect(DesktopNotification.bytes(.off, title: "Alice", body: "x").isEmpty)
        // OSC 99's base64 is what Foundation's is.
        let body = "ünïcödé 👩‍👩‍👧 and more"
        let osc99 = String(decoding: DesktopNotification.bytes(.osc99, title: "t", body: body), as: UTF8.self)
        #expect(osc99.contains(Data(body.utf8).base64EncodedString()))
    }

    @Test("nothing a sender writes is a sequence: the hostile corpus, the public width corpus and emoji with escapes as a name and a message, by every protocol, plain and through tmux, read back whole with no control, no ESC, no BEL, no bidi control; a ; never ends OSC 777's title; OSC 9's text never starts with a digit; each capped")
    func hostile() throws {
        let corpus = try Corpus.load(path: Corpus.defaultPath(packageRoot: BuiltProducts.packageRoot.path)).map(\.text)
        let texts = try escapeCorpus() + EmojiScreenTests.hostileEmoji + corpus.enumerated().filter { $0.offset % 9 == 0 }.map(\.element)
            + ["4;3;100", "9;4;1;50\u{07}", "a;b;c", String(repeating: "long ", count: 500)]
        #expect(texts.count > 500)
        let bidi: Set<UInt32> = [0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069]
        for text in texts {
            for method in [Method.osc777, .osc9, .osc99] {
                let bytes = DesktopNotification.bytes(method, title: text, body: text)
                let r = try #require(Self.read(bytes, method), "\(method) \(text.debugDescription)")
                for field in [r.title, r.body] {
                    #expect(!field.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || bidi.contains($0.value) },
                            "\(method) \(text.debugDescription): \(field.debugDescription)")
                }
                #expect(r.title.count <= DesktopNotification.titleLimit && r.body.count <= DesktopNotification.bodyLimit + DesktopNotification.titleLimit + 2)
                if method == .osc777 { #expect(!r.title.contains(";")) }
                if method == .osc9 { #expect(!(r.body.unicodeScalars.first.map { (48...57).contains($0.value) } ?? false), "\(r.body.debugDescription)") }
                // Through tmux: one passthrough, every inner ESC doubled, and the same sequence inside.
                let wrapped = DesktopNotification.bytes(method, title: text, body: text, passthrough: true)
                let prefix = Array("\u{1B}Ptmux;".utf8)
                #expect(Array(wrapped.prefix(prefix.count)) == prefix && wrapped.suffix(2) == [0x1B, 0x5C])
                var inner: [UInt8] = [], i = prefix.count
                while i < wrapped.count - 2 {
                    if wrapped[i] == 0x1B {
                        #expect(i + 1 < wrapped.count - 2 && wrapped[i + 1] == 0x1B, "a lone ESC inside the passthrough")
                        i += 1
                    }
                    inner.append(wrapped[i])
                    i += 1
                }
                #expect(inner == bytes)
            }
        }
        #expect(Self.read(DesktopNotification.bytes(.osc9, title: "4", body: "3"), .osc9)?.body == "› 4: 3")
        #expect(Self.read(DesktopNotification.bytes(.osc777, title: "a;b", body: "c;d"), .osc777).map { [$0.title, $0.body] } == ["a,b", "c;d"])
    }
}
