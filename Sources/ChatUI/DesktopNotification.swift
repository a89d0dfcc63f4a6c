import SyncCore

/// A desktop notification as a terminal takes it: one of the terminal protocols
/// that ask the terminal to show one, written after the frame, never into a curses cell.
/// Pure: the protocol, a title and a body in, the bytes out. Nothing a sender wrote reaches
/// the terminal as a sequence: title and body are `UntrustedText.plain` (no control, no ESC,
/// no BEL, no bidi control), and each protocol's own separators are kept out of the fields.
public enum DesktopNotification {
    /// How a notification reaches the desktop (`--notify`).
    public enum Method: String, CaseIterable, Sendable {
        /// kitty: `OSC 99`, its payloads base64.
        case osc99
        /// foot, urxvt (and others): `OSC 777 ; notify ; TITLE ; BODY`.
        case osc777
        /// iTerm2, WezTerm, Ghostty: `OSC 9 ; TEXT`.
        case osc9
        /// The terminal's bell: no text reaches the desktop.
        case bell
        /// Nothing.
        case off
    }

    /// The longest title and body, in characters (a notification is a glance, and a terminal's
    /// OSC buffer is finite: foot's is some kilobytes, tmux drops longer passthrough).
    public static let titleLimit = 64
    public static let bodyLimit = 200

    /// The bytes that ask the terminal for a notification of `title` and `body` by `method`;
    /// inside tmux (`passthrough`), wrapped in tmux's passthrough (`ESC P tmux; … ESC \`, every
    /// inner ESC doubled), which tmux 3.3 forwards with `allow-passthrough on`.
    public static func bytes(_ method: Method, title: String, body: String, id: Int = 1, passthrough: Bool = false) -> [UInt8] {
        let title = UntrustedText.plain(title, limit: titleLimit), body = UntrustedText.plain(body, limit: bodyLimit)
        let sequence: String
        switch method {
        case .off: return []
        case .bell: return [0x07]  // a bell needs no passthrough: tmux passes it on by itself
        case .osc777:
            // The title ends at the first `;`: a `;` of the sender's would start the body.
            sequence = osc("777;notify;" + title.replacingSemicolons() + ";" + body)
        case .osc9:
            // `OSC 9 ; 4 ; …` is a progress report to ConEmu and Ghostty: the text never starts
            // with a digit.
            var text = title.isEmpty ? body : title + ": " + body
            if let first = text.unicodeScalars.first, ("0"..."9").contains(first) { text = "› " + text }
            sequence = osc("9;" + text)
        case .osc99:
            // kitty's: the title, then the body (`d=0`: more to come), each base64 (`e=1`).
            sequence = osc("99;i=\(id):d=0:p=title:e=1;" + Base64.encode(Array(title.utf8)))
                + osc("99;i=\(id):d=1:p=body:e=1;" + Base64.encode(Array(body.utf8)))
        }
        let bytes = Array(sequence.utf8)
        guard passthrough else { return bytes }
        var wrapped = Array("\u{1B}Ptmux;".utf8)
        for b in bytes { wrapped += b == 0x1B ? [0x1B, 0x1B] : [b] }
        return wrapped + [0x1B, 0x5C]
    }

    static func osc(_ body: String) -> String { "\u{1B}]" + body + "\u{1B}\\" }
}

extension String {
    fileprivate func replacingSemicolons() -> String {
        String(String.UnicodeScalarView(unicodeScalars.map { $0 == ";" ? "," : $0 }))
    }
}

/// RFC 4648 base64, for OSC 99's payloads (ChatUI imports no Foundation).
enum Base64 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let n = min(3, bytes.count - i)
            let b0 = bytes[i], b1 = n > 1 ? bytes[i + 1] : 0, b2 = n > 2 ? bytes[i + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            out.append(n > 1 ? alphabet[Int((b1 & 0x0F) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(n > 2 ? alphabet[Int(b2 & 0x3F)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}
