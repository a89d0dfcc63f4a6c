/// The terminal modes a program left set, read from what it wrote (`synchat --cast` reads its
/// child's output this way): so that the recorder can put the terminal back whatever the child
/// did — killed in the alternate screen with the mouse on, or stopped and continued — without
/// guessing, and write nothing when the child cleaned up after itself.
///
/// It reads DECSET and DECRST (`CSI ? Pm h`, `CSI ? Pm l`) of the modes a full-screen program
/// sets, and the keypad's `ESC =` / `ESC >`; a sequence cut between two reads is read whole.
/// OSC, DCS, APC, PM and SOS strings are skipped to their end (their text is not a mode).
/// Pure: the tests feed it bytes.
public struct TerminalModes: Equatable, Sendable {
    /// The private modes tracked, each with the state a shell expects: off, but the cursor on.
    static let tracked: [(mode: Int, shellState: Bool)] = [
        (1, false),  // application cursor keys
        (25, true),  // the cursor shown
        (47, false), (1047, false), (1049, false),  // the alternate screen
        (1000, false), (1002, false), (1003, false), (1006, false), (1015, false),  // mouse reporting
        (1004, false),  // focus reporting
        (2004, false),  // bracketed paste
    ]

    /// Each tracked mode as the program left it (absent: as the shell expects).
    public private(set) var modes: [Int: Bool] = [:]
    /// The keypad in application mode (`ESC =`).
    public private(set) var applicationKeypad = false

    private enum State: Equatable, Sendable { case ground, escape, csi, string, stringEscape }
    private var state = State.ground
    private var parameters: [UInt8] = []
    private var isPrivate = false
    private var hasIntermediate = false

    public init() {}

    /// Reads what the program wrote next.
    public mutating func read(_ bytes: some Sequence<UInt8>) {
        for b in bytes { step(b) }
    }

    private mutating func step(_ b: UInt8) {
        switch state {
        case .ground:
            if b == 0x1B { state = .escape }
        case .escape:
            switch b {
            case UInt8(ascii: "["):
                state = .csi
                parameters = []
                isPrivate = false
                hasIntermediate = false
            case UInt8(ascii: "]"), UInt8(ascii: "P"), UInt8(ascii: "_"), UInt8(ascii: "^"), UInt8(ascii: "X"):
                state = .string
            case UInt8(ascii: "="): applicationKeypad = true; state = .ground
            case UInt8(ascii: ">"): applicationKeypad = false; state = .ground
            case 0x1B: state = .escape
            default: state = .ground
            }
        case .csi:
            switch b {
            case UInt8(ascii: "?") where parameters.isEmpty && !isPrivate: isPrivate = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: ";"): if parameters.count < 64 { parameters.append(b) }
            case 0x20...0x2F: hasIntermediate = true  // DECRQM (`CSI ? Pm $ p`) and the like: not a set
            case 0x40...0x7E:
                if isPrivate, !hasIntermediate, b == UInt8(ascii: "h") || b == UInt8(ascii: "l") { set(on: b == UInt8(ascii: "h")) }
                state = .ground
            case 0x1B: state = .escape
            case 0x18, 0x1A: state = .ground  // CAN, SUB: the sequence is abandoned
            default: break  // other parameter bytes (`:`, `<`…): a sequence this does not track
            }
        case .string:
            if b == 0x07 { state = .ground } else if b == 0x1B { state = .stringEscape }
        case .stringEscape:
            state = b == UInt8(ascii: "\\") ? .ground : (b == 0x1B ? .stringEscape : .string)
        }
    }

    private mutating func set(on: Bool) {
        for field in parameters.split(separator: UInt8(ascii: ";")) {
            guard let mode = Int(String(decoding: field, as: UTF8.self)),
                  let shell = Self.tracked.first(where: { $0.mode == mode })?.shellState else { continue }
            modes[mode] = on == shell ? nil : on
        }
    }

    /// The bytes that put a terminal back as a shell expects it, from the modes the program left:
    /// empty when it left none. The alternate screen is left last (leaving it puts back the
    /// cursor of the shell's screen).
    public var resetBytes: [UInt8] {
        var out = ""
        let screens: Set = [47, 1047, 1049]
        for (mode, shell) in Self.tracked where modes[mode] != nil && !screens.contains(mode) {
            out += "\u{1B}[?\(mode)\(shell ? "h" : "l")"
        }
        if applicationKeypad { out += "\u{1B}>" }
        if !modes.isEmpty || applicationKeypad { out += "\u{1B}[0m" }
        for mode in [47, 1047, 1049] where modes[mode] != nil { out += "\u{1B}[?\(mode)l" }
        return Array(out.utf8)
    }

    /// The bytes that set again what the program had set (after the terminal was given back to
    /// the shell a while): the alternate screen first, then the rest.
    public var restoreBytes: [UInt8] {
        var out = ""
        for mode in [47, 1047, 1049] where modes[mode] == true { out += "\u{1B}[?\(mode)h" }
        for (mode, _) in Self.tracked where ![47, 1047, 1049].contains(mode) {
            if let on = modes[mode] { out += "\u{1B}[?\(mode)\(on ? "h" : "l")" }
        }
        if applicationKeypad { out += "\u{1B}=" }
        return Array(out.utf8)
    }
}
