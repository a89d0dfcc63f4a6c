import ChatUI
import Foundation
import Spawn

/// Desktop notifications, the terminal's side (docs/screen.md#desktop-notifications): what the
/// terminal is, found at start, and the notification's bytes written after a frame.
extension Terminal {
    /// `--notify` chosen for this terminal: its answers to the probe, its environment, and
    /// inside tmux what tmux says of its client.
    static func chooseNotifications(_ request: DesktopNotification.Request, term: String, environment env: [String: String],
                                    replies: TerminalReplies) -> DesktopNotification.Choice {
        var identity = DesktopNotification.Identity(term: term, termProgram: env["TERM_PROGRAM"], version: replies.version,
                                                    answersOSC99: replies.answersOSC99, insideTmux: !(env["TMUX"] ?? "").isEmpty)
        if identity.insideTmux, request == .auto { (identity.tmuxClient, identity.tmuxPassthrough) = askTmux(pane: env["TMUX_PANE"]) }
        return DesktopNotification.choose(request, identity)
    }

    /// Inside tmux: the terminal tmux's client runs in (`client_termname`, `client_termtype`)
    /// and whether `allow-passthrough` is on; nothing when tmux cannot be asked.
    static func askTmux(pane: String?) -> ([String], Bool?) {
        let format = "#{client_termname}\t#{client_termtype}\t#{allow-passthrough}"
        let target = pane.map { ["-t", $0] } ?? []
        guard let exit = try? ChildProcess.run(["tmux", "display-message", "-p"] + target + [format], captureOutput: true),
              exit.status == 0 else { return ([], nil) }
        let parts = exit.out.trimmingCharacters(in: .newlines).split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3 else { return ([], nil) }
        return (Array(parts[0..<2]).filter { !$0.isEmpty }, ["on", "all", "1"].contains(parts[2]))  // a flag option reads 1 in a format
    }

    /// A desktop notification's bytes (`DesktopNotification.bytes`), written after the frame
    /// as the title is: never into a curses cell.
    public func notify(_ bytes: [UInt8]) {
        guard isOpen, !bytes.isEmpty else { return }
        _ = bytes.withUnsafeBufferPointer { Foundation.write(STDOUT_FILENO, $0.baseAddress, $0.count) }
    }
}
