import CNCurses
import SyncCore

/// Bracketed paste, read as one edit (docs/keys.md): the text between the terminal's
/// `ESC [200~` and `ESC [201~`, never keys.
extension Terminal {
    /// The most of a paste kept: four times the message limit (the rest is read and dropped).
    static let pasteLimit = 4 * MessageLimits.maxBodyBytes

    /// After the paste's start: its text up to its end (`ESC [201~`), or up to a second with
    /// nothing more, should the end never come. Keys curses would make of what is pasted (an
    /// arrow's sequence in it) are dropped.
    /// A byte that is not UTF-8 is kept as U+FFFD, and counted (`replaced`): curses answers
    /// it with ERR at once, the rest of the paste still waiting (read to its end, not lost).
    func readPaste() -> (text: String, replaced: Int) {
        guard let window else { return ("", 0) }
        wtimeout(window, 1000)
        var text = String.UnicodeScalarView()
        var kept = 0, replaced = 0
        while true {
            var wch: wint_t = 0
            let r = wget_wch(window, &wch)
            if r == ERR {
                // The wait's end, or a byte curses could not decode with more behind it.
                wtimeout(window, 0)
                var next: wint_t = 0
                let more = wget_wch(window, &next)
                wtimeout(window, 1000)
                if more == ERR { break }
                replaced += 1
                if kept < Self.pasteLimit { text.append("\u{FFFD}"); kept += 3 }
                if more == synchat_key_code_yes() { _ = ungetch(Int32(next)) } else { _ = unget_wch(wchar_t(bitPattern: UInt32(next))) }
                continue
            }
            if r == synchat_key_code_yes() {
                if Int32(wch) == synchat_key_paste_end() {
                    // What follows the end in the same write is the paste's too (a pasted text
                    // holding `ESC [201~` would otherwise end it and act as keys: `ESC p` a
                    // fault, `q q` a quit); a key a person types comes later than at once.
                    wtimeout(window, 0)
                    var next: wint_t = 0
                    let more = wget_wch(window, &next)
                    wtimeout(window, 1000)
                    if more == ERR { break }
                    if more == synchat_key_code_yes() { _ = ungetch(Int32(next)) } else { _ = unget_wch(wchar_t(bitPattern: UInt32(next))) }
                }
                continue
            }
            guard let scalar = UnicodeScalar(UInt32(wch)), kept < Self.pasteLimit else { continue }
            text.append(scalar)
            kept += scalar.utf8.count
        }
        return (String(text), replaced)
    }
}
