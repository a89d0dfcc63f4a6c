import CNCurses
import ChatUI
import Foundation
import Spawn

/// What the adapter writes outside curses' cells, after a frame: desktop notifications
/// (docs/screen.md#desktop-notifications; what the terminal is, found at start) and hyperlinks
/// (docs/screen.md#links).
extension Terminal {
    /// `--notify` chosen for this terminal: its answers to the probe, its environment, and
    /// inside tmux what tmux says of its client.
    static func chooseNotifications(_ request: DesktopNotification.Request, term: String, environment env: [String: String],
                                    replies: TerminalReplies) -> DesktopNotification.Choice {
        var identity = DesktopNotification.Identity(term: term, termProgram: env["TERM_PROGRAM"], version: replies.version,
                                                    answersOSC99: replies.answersOSC99, insideTmux: !(env["TMUX"] ?? "").isEmpty)
        if identity.insideTmux { (identity.tmuxClient, identity.tmuxPassthrough) = askTmux(pane: env["TMUX_PANE"]) }
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

    /// The hyperlinks (OSC 8) of the rows a frame wrote: over the cells curses drew, the same
    /// characters in the same colours, between the link's opening and closing sequences; then
    /// curses' cursor put back where it believes it is. A terminal without OSC 8 (tmux 3.3
    /// drops it) shows exactly the screen it had.
    func writeLinks(of grid: Grid, in rows: Set<Int>) {
        for link in grid.links where rows.contains(link.y) {
            var out = "\u{1B}[\(link.y + 1);\(link.x + 1)H" + Links.open(link.url, id: link.id)
            var role: Role?
            var end = link.x
            for x in link.x..<min(grid.width, link.x + link.width) where grid[x, link.y].width > 0 {
                let cell = grid[x, link.y]
                guard !cell.whole, !cell.isolated else { break }
                if cell.role != role {
                    out += sgr[cell.role] ?? "\u{1B}[0m"
                    role = cell.role
                }
                out.append(cell.character)
                end = x + Int(cell.width)
            }
            writeRaw(out + Links.close + "\u{1B}[0m")
            synchat_replace_cursor(Int32(link.y), Int32(min(end, grid.width - 1)))
        }
    }
}
