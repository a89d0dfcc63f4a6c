import SyncCore

/// How `--notify` is chosen (docs/screen.md#notifications): asked for by name, or with `auto`
/// (the default) by asking the terminal — kitty answers OSC 99's query — else by what the
/// terminal says it is (XTVERSION's answer, `TERM_PROGRAM`, `TERM`; inside tmux, the terminal
/// tmux's client runs in), else the bell. Pure: the tests feed it identities.
extension DesktopNotification {
    /// What `--notify` (or `SYNCHAT_NOTIFY`) asks for.
    public enum Request: String, CaseIterable, Sendable {
        case auto, osc99, osc777, osc9, bell, off
    }

    /// What the terminal is, as far as it was found at start.
    public struct Identity: Equatable, Sendable {
        public var term: String?
        public var termProgram: String?
        /// XTVERSION's answer (`CSI > q` → `DCS > | NAME VERSION ST`).
        public var version: String?
        /// kitty answered OSC 99's query (before DA1).
        public var answersOSC99 = false
        /// `$TMUX` is set: the program runs in a tmux pane.
        public var insideTmux = false
        /// Inside tmux: the outer terminal as tmux knows it (`client_termname`, `client_termtype`).
        public var tmuxClient: [String] = []
        /// Inside tmux: `allow-passthrough` is on (nil: tmux could not be asked).
        public var tmuxPassthrough: Bool?

        public init(term: String? = nil, termProgram: String? = nil, version: String? = nil, answersOSC99: Bool = false,
                    insideTmux: Bool = false, tmuxClient: [String] = [], tmuxPassthrough: Bool? = nil) {
            self.term = term
            self.termProgram = termProgram
            self.version = version
            self.answersOSC99 = answersOSC99
            self.insideTmux = insideTmux
            self.tmuxClient = tmuxClient
            self.tmuxPassthrough = tmuxPassthrough
        }

        /// In a tmux pane, as far as can be told: `$TMUX` is set, unless tmux could not be asked
        /// and the terminal itself answered XTVERSION as something else (a `$TMUX` left behind
        /// by a shell started from tmux; tmux answers XTVERSION as tmux).
        var runsInTmux: Bool {
            guard insideTmux else { return false }
            guard tmuxPassthrough == nil, tmuxClient.isEmpty, let version, !version.isEmpty else { return true }
            return version.lowercased().contains("tmux")
        }
    }

    /// The method, whether it is wrapped for tmux, and one line for the log saying why.
    public struct Choice: Equatable, Sendable {
        public var method: Method
        public var passthrough: Bool
        public var report: String
    }

    /// The terminals known by name, and how each shows a notification.
    static let known: [(name: String, method: Method)] = [
        ("kitty", .osc99), ("foot", .osc777), ("rxvt", .osc777), ("wezterm", .osc9), ("iterm", .osc9), ("ghostty", .osc9),
    ]

    public static func choose(_ request: Request, _ id: Identity) -> Choice {
        func choice(_ m: Method, _ why: String) -> Choice {
            var method = m, why = why
            // tmux drops a sequence it is not told to pass on: the bell gets through.
            if id.runsInTmux, [.osc99, .osc777, .osc9].contains(m), id.tmuxPassthrough != true, request == .auto {
                method = .bell
                why += "; inside tmux without allow-passthrough on, so the bell (set -g allow-passthrough on)"
            }
            let wrapped = id.runsInTmux && [.osc99, .osc777, .osc9].contains(method)
            let words = method == .off ? "notifications: off (\(why))"
                : "notifications: \(method.rawValue) (\(why))\(wrapped ? ", through tmux's passthrough" : ""), only while the terminal is unfocused"
            return Choice(method: method, passthrough: wrapped, report: words)
        }
        if request != .auto, let m = Method(rawValue: request.rawValue) { return choice(m, "--notify \(request.rawValue)") }
        if id.answersOSC99 { return choice(.osc99, "the terminal answered OSC 99's query") }
        let named: [(String, String?)] = id.runsInTmux
            ? id.tmuxClient.map { ("tmux's client terminal", $0) }
            : [("XTVERSION", id.version), ("TERM_PROGRAM", id.termProgram), ("TERM", id.term)]
        for (source, value) in named {
            guard let value, !value.isEmpty else { continue }
            let lower = value.lowercased()
            if let k = known.first(where: { lower.contains($0.name) }) {
                return choice(k.method, "\(source) says \(UntrustedText.plain(value, limit: 40))")
            }
        }
        return choice(.bell, "no terminal known to show desktop notifications")
    }
}
