import ChatUI
import Foundation
import Testing

/// Compares a rendered screen with its golden files (docs/testing.md#golden-screens; ratatui's
/// buffer asserts), cell by cell, in the folder `TestData/golden-screens/` (test data apart from test code):
///
/// - `NAME.txt`, the screen's text, one line a row, trailing blanks trimmed: what a person
///   reads with `cat`;
/// - `NAME.roles.txt`, one letter a cell for its style role (the legend heads the file), with
///   every cell of a row, so that it lines up with the text in a terminal.
///
/// A failure names each row and column that differs, expected against actual, with both rows.
/// `SYNCHAT_RECORD_GOLDEN=1 swift test --filter GoldenScreenTests` rewrites the files from
/// what the code renders now (a warning says so); read the diff before committing them.
/// `record: false` compares even then (for a test that expects a difference).
public func expectGolden(_ grid: Grid, named name: String, roles: Bool = true, record: Bool? = nil,
                         sourceLocation: SourceLocation = #_sourceLocation) {
    let folder = BuiltProducts.packageRoot.appendingPathComponent("TestData/golden-screens")
    let record = record ?? (ProcessInfo.processInfo.environment["SYNCHAT_RECORD_GOLDEN", default: ""] == "1")
    var files = ["\(name).txt"]
    if roles { files.append("\(name).roles.txt") }
    for file in files {
        let isRoles = file.hasSuffix(".roles.txt")
        let rows = isRoles ? GoldenRoles.legend + GoldenRoles.rows(grid) : grid.text
        let url = folder.appendingPathComponent(file)
        let actual = rows.joined(separator: "\n") + "\n"
        if record {
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try actual.write(to: url, atomically: true, encoding: .utf8)
                Issue.record("recorded TestData/golden-screens/\(file) (SYNCHAT_RECORD_GOLDEN=1)", severity: .warning, sourceLocation: sourceLocation)
            } catch {
                Issue.record("cannot write \(url.path): \(error)", sourceLocation: sourceLocation)
            }
            continue
        }
        guard let expected = try? String(contentsOf: url, encoding: .utf8) else {
            Issue.record("no golden file TestData/golden-screens/\(file); record it with SYNCHAT_RECORD_GOLDEN=1 swift test --filter GoldenScreenTests",
                         sourceLocation: sourceLocation)
            continue
        }
        guard expected != actual else { continue }
        var expectedRows = expected.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if expected.hasSuffix("\n") { expectedRows.removeLast() }
        let found = isRoles ? roleDifferences(expected: expectedRows, actual: rows) : textDifferences(expected: expectedRows, grid: grid)
        let shown = found.prefix(12).joined(separator: "\n")
        let more = found.count > 12 ? "\n… and \(found.count - 12) more rows" : ""
        Issue.record(Comment(rawValue: "TestData/golden-screens/\(file) differs from the screen rendered (\(grid.width)x\(grid.height)):\n\(shown)\(more)\n"
                             + "If the new screen is right: SYNCHAT_RECORD_GOLDEN=1 swift test --filter GoldenScreenTests"),
                     sourceLocation: sourceLocation)
    }
}

/// The text rows that differ, each with the first column where it does.
func textDifferences(expected: [String], grid: Grid) -> [String] {
    let actual = grid.text
    var out: [String] = []
    for y in 0..<max(expected.count, actual.count) {
        let e = y < expected.count ? Array(expected[y]) : [], a = y < actual.count ? Array(actual[y]) : []
        guard e != a else { continue }
        let i = zip(e, a).prefix { $0 == $1 }.count
        // The column of the i-th character of the actual row (a wide character takes two cells).
        var column = 0, seen = 0
        if y < grid.height {
            while column < grid.width && seen < i {
                if grid[column, y].width != 0 { seen += 1 }
                column += 1
            }
            while column < grid.width && grid[column, y].width == 0 { column += 1 }
        }
        let show = { (c: [Character]) in i < c.count ? "\"\(c[i])\"" : "end of row" }
        let row = y < grid.height ? "row \(y)" : "row \(y) (the grid has \(grid.height))"
        let others = (i + 1..<max(e.count, a.count)).count { k in (k < e.count ? e[k] : " ") != (k < a.count ? a[k] : " ") }
        out.append("\(row), column \(column + (seen < i ? i - seen : 0))\(others > 0 ? " (and \(others) more cells)" : ""): "
                   + "expected \(show(e)), actual \(show(a))\n"
                   + "  expected: \(String(e).debugDescription)\n  actual:   \(String(a).debugDescription)")
    }
    return out
}

/// The role rows that differ, each with the columns where they do (legend lines first).
func roleDifferences(expected: [String], actual: [String]) -> [String] {
    var out: [String] = []
    for y in 0..<max(expected.count, actual.count) {
        let e = y < expected.count ? Array(expected[y]) : [], a = y < actual.count ? Array(actual[y]) : []
        guard e != a else { continue }
        let row = y - GoldenRoles.legend.count
        guard row >= 0 else { out.append("the legend differs at its line \(y + 1): expected \(String(e).debugDescription), actual \(String(a).debugDescription)"); continue }
        let columns = (0..<max(e.count, a.count)).filter { x in (x < e.count ? e[x] : " ") != (x < a.count ? a[x] : " ") }
        let first = columns.first ?? 0
        let name = { (c: [Character]) in first < c.count ? "\(GoldenRoles.name(c[first])) (\(c[first]))" : "nothing" }
        out.append("row \(row), column \(first)\(columns.count > 1 ? " (and \(columns.count - 1) more cells)" : ""): expected role \(name(e)), actual \(name(a))\n"
                   + "  expected: \(String(e))\n  actual:   \(String(a))")
    }
    return out
}

/// One letter for each style role in the roles layer.
enum GoldenRoles {
    static let letters: [Role: Character] = [
        .normal: ".", .title: "T", .border: "#",
        .listItem: "l", .listSelected: "L", .listUnread: "u", .listMuted: "m",
        .messageIncoming: "i", .messageOutgoing: "o", .messageMeta: "t", .messageMark: "k", .messageDimmed: "d", .daySeparator: "D",
        .compose: "c", .composeCursor: "C", .logLine: "g", .logTitle: "G",
        .statusBar: "s", .statusLifecycle: "f", .statusBackground: "F", .statusRealtimeLive: "R", .statusRealtimeDegraded: "r",
        .statusPushReliable: "P", .statusPushUnknown: "p", .statusPushUnreliable: "X", .statusPushDisabled: "x", .statusTruth: "Y",
        .banner: "B", .help: "h", .helpKey: "H", .warning: "W",
    ]

    /// The file's head: which letter is which role (a role without a letter shows as `?`).
    static var legend: [String] {
        let pairs = Role.allCases.map { "\(letters[$0] ?? "?") \($0.rawValue)" }
        return stride(from: 0, to: pairs.count, by: 8).map { "# " + pairs[$0..<min(pairs.count, $0 + 8)].joined(separator: ", ") }
    }

    static func rows(_ grid: Grid) -> [String] {
        (0..<grid.height).map { y in String((0..<grid.width).map { letters[grid[$0, y].role] ?? "?" }) }
    }

    static func name(_ letter: Character) -> String {
        letters.first { $0.value == letter }?.key.rawValue ?? "unknown"
    }
}
