/// Grids as the bytes a terminal receives to show them, with no terminal (`simulate --cast`):
/// the first frame clears the screen and draws every row, each later one the rows that
/// changed, each row whole (so a cast's text holds every line as it was shown). A role is drawn
/// with its SGR sequence (`Theme.sgr`: as the terminal adapter's colours), and after a cell the
/// adapter writes on its own — a cluster drawn in several cells, a whole emoji sequence — the
/// cursor is placed where the grid says it ends, as the adapter does. Pure.
public struct ANSIScreen: Sendable {
    /// Each role's SGR sequence.
    public let sgr: [Role: String]
    private var shown: Grid?

    public init(sgr: [Role: String]) {
        self.sgr = sgr
    }

    /// The bytes that turn the screen shown so far into `grid` ("" when nothing changed).
    public mutating func frame(_ grid: Grid) -> String {
        var out = ""
        let whole = shown.map { $0.width != grid.width || $0.height != grid.height } ?? true
        if whole { out += "\u{1B}[0m\u{1B}[?25l\u{1B}[H\u{1B}[2J" }
        var role: Role?
        for y in 0..<grid.height where whole || grid.row(y) != shown!.row(y) || links(grid, y) != links(shown!, y) {
            out += "\u{1B}[\(y + 1);1H"
            let rowLinks = links(grid, y)
            var open: GridLink?
            for x in 0..<grid.width {
                let cell = grid[x, y]
                guard cell.width > 0 else { continue }
                // A link's cells between its OSC 8 sequences (a cast holds them: a demo's links
                // work in asciinema's player).
                if let o = open, x >= o.x + o.width { out += Links.close; open = nil }
                if open == nil, let link = rowLinks.first(where: { $0.x == x }) { out += Links.open(link.url, id: link.id); open = link }
                if cell.role != role {
                    out += sgr[cell.role] ?? "\u{1B}[0m"
                    role = cell.role
                }
                out.append(cell.character)
                let end = x + Int(cell.width)
                if cell.whole || cell.isolated, end < grid.width { out += "\u{1B}[\(y + 1);\(end + 1)H" }
            }
            if open != nil { out += Links.close }
        }
        shown = grid
        if !out.isEmpty { out += "\u{1B}[0m" }
        return out
    }

    private func links(_ g: Grid, _ y: Int) -> [GridLink] { g.links.filter { $0.y == y } }
}
