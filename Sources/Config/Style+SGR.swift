import ChatUI

/// A style as the SGR sequence (`CSI … m`) that draws it, from the normal attributes: what
/// the terminal adapter writes before a whole emoji sequence (curses cannot hold one in a
/// cell), and what a cast's frames use for every cell, so both draw a role as curses does.
extension Style {
    /// `colours`: how many the terminal has (0 without colour, as under `NO_COLOR`); a colour
    /// past them is taken modulo 8, as the adapter gives it to curses.
    public func sgr(colours: Int) -> String {
        var codes = ["0"]
        if bold { codes.append("1") }
        if dim { codes.append("2") }
        if underline { codes.append("4") }
        if reverse { codes.append("7") }
        if colours > 0 {
            let limit = max(8, min(256, colours))
            func colour(_ c: Int, base: Int, bright: Int, extended: Int) -> String {
                let c = c < limit ? c : c % 8
                if c < 8 { return "\(base + c)" }
                if c < 16 { return "\(bright + c - 8)" }
                return "\(extended);5;\(c)"
            }
            if let fg { codes.append(colour(Int(fg), base: 30, bright: 90, extended: 38)) }
            if let bg { codes.append(colour(Int(bg), base: 40, bright: 100, extended: 48)) }
        }
        return "\u{1B}[" + codes.joined(separator: ";") + "m"
    }
}

extension Theme {
    /// Every role's SGR sequence (`Style.sgr`), for a terminal of `colours` colours.
    public func sgr(colours: Int) -> [Role: String] {
        Dictionary(uniqueKeysWithValues: Role.allCases.map { ($0, style(for: $0).sgr(colours: colour ? colours : 0)) })
    }
}
