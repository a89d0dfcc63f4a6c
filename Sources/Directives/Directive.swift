import Foundation
import SyncCore

// What a person or a script can do to the app and its world: one vocabulary for the keys of
// the TUI, the lines of a scenario file and the session that applies both, so that a key and
// its scenario verb read the same in the log.

/// One change from outside the engine: a lifecycle move, a fault of the world, a message,
/// a setting. `AppSession.apply(_:)` carries it out.
public enum Directive: Equatable, Sendable {
    case foreground
    case background
    /// A change to the world's faults (`push drop 100%`, `network off`): what a world,
    /// simulated or a server's, applies.
    case fault(WorldFaults.Change)
    case mode(NotificationMode)
    case send(handle: String, text: String)
    case receive(handle: String, text: String)
    case contact(handle: String, displayName: String)
    /// A contact added by its address (the app's `a`); later lines name it by that address, so
    /// the log, a recording and a person call it what it was added as.
    case add(address: String, displayName: String)
    case mute(handle: String)
    case unmute(handle: String)
    case sync
    /// The notification preview (`v`): message, contact or hidden.
    case preview(PreviewMode)
    /// Open a conversation and read it (`Enter`, `o`, and every read while it is open).
    case open(handle: String)
    /// Send the refused messages again now (`R`).
    case retry
    case quit
    /// The run ends here, as the app did when it quit: no final foreground, no settle. What
    /// `--record` writes last, so that a recorded session replays to its last line.
    case stop

    /// Whether the engine logs this directive itself when it takes effect (`world: notification
    /// mode off`, `world: notification preview hidden`, `world: muted alice`), so that a
    /// session does not log it a second time in other words.
    public var engineLogsIt: Bool {
        switch self {
        case .mode, .preview, .mute, .unmute: return true
        default: return false
        }
    }

    /// The change to the world's faults this directive makes, if it is one: what a world
    /// (simulated, or a server's) applies.
    public var worldFault: WorldFaults.Change? {
        if case .fault(let change) = self { return change }
        return nil
    }

    /// How the directive reads in the event log (text is made safe by the log line); a text
    /// longer than a line is cut, with its size (a 16 KiB message is not 100 lines of log).
    public var summary: String {
        switch self {
        case .send(let h, let t): return "send \(h) \(Self.brief(t))"
        case .receive(let h, let t): return "receive \(h) \(Self.brief(t))"
        case .contact(let h, let d): return "contact \(h) \(Self.brief(d))"
        case .add(let a, let d): return "add \(a) \(Self.brief(d))"
        default: return scenarioText
        }
    }

    /// `"text"` as the log shows it (controls made visible: one line whatever it holds), or
    /// its first characters and the text's size: `"abc…" (16384 bytes)`.
    static func brief(_ text: String) -> String { UntrustedText.brief(text, quoted: true) }

    /// How the directive reads in a scenario line, text as typed (`scenarioText` escapes it).
    var plainText: String {
        switch self {
        case .foreground: return "foreground"
        case .background: return "background"
        case .fault(let change): return change.words
        case .mode(let m): return "mode \(m.rawValue)"
        case .send(let h, let t): return "send \(h) \"\(t)\""
        case .receive(let h, let t): return "receive \(h) \"\(t)\""
        case .contact(let h, let d): return "contact \(h) \"\(d)\""
        case .add(let a, let d): return "add \(a) \"\(d)\""
        case .mute(let h): return "mute \(h)"
        case .unmute(let h): return "unmute \(h)"
        case .sync: return "sync"
        case .preview(let p): return "preview \(p.rawValue)"
        case .open(let h): return "open \(h)"
        case .retry: return "retry"
        case .quit: return "quit"
        case .stop: return "stop"
        }
    }

    /// The directive as a scenario line reads it back (`ScenarioParser`): text is quoted
    /// with every character that would not survive as itself escaped.
    public var scenarioText: String {
        switch self {
        case .send(let h, let t): return "send \(h) \(Self.quoted(t))"
        case .receive(let h, let t): return "receive \(h) \(Self.quoted(t))"
        case .contact(let h, let d): return "contact \(h) \(Self.quoted(d))"
        case .add(let a, let d): return "add \(a) \(Self.quoted(d))"
        default: return plainText
        }
    }

    /// Whether `text` is an address a contact can be added by: `kaspa:` and 8 to 80 lower-case
    /// letters and digits.
    public static func isAddress(_ text: String) -> Bool {
        guard text.hasPrefix("kaspa:") else { return false }
        let rest = text.dropFirst(6)
        return (8...80).contains(rest.count) && rest.allSatisfy { ($0.isASCII && $0.isLowercase) || ($0.isASCII && $0.isNumber) }
    }


    /// `"…"` with `\\`, `\"`, `\n`, `\t`, `\e`, `\xHH` for other controls (C0, DEL, C1).
    public static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\u{1B}": out += "\\e"
            default:
                let v = scalar.value
                if v < 0x20 || v == 0x7F || (0x80...0x9F).contains(v) {
                    out += "\\x" + String(format: "%02X", v)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
