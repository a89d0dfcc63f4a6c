import ChatUI
import SyncCore
import SyncEngine
import Testing

/// Canonical screens against golden files in `TestData/golden-screens/` (the text, and the style role of
/// every cell), compared cell by cell. After a deliberate change to the layout:
/// `SYNCHAT_RECORD_GOLDEN=1 swift test --filter GoldenScreenTests`, then read the diff.
@Suite("Golden screens")
struct GoldenScreenTests {
    @Test("the whole screen at 100x24")
    func wholeScreen() {
        expectGolden(Render.screen(sampleState(), width: 100, height: 24), named: "whole-screen-100x24")
    }

    @Test("backgrounded at 100x24: the dimmed pane, a banner and the badge")
    func background() {
        expectGolden(Render.screen(backgroundedSampleState(), width: 100, height: 24), named: "background-banner-100x24")
    }

    @Test("the help overlay at 100x40")
    func help() {
        var s = sampleState()
        s.focus = .list
        _ = ViewModel.reduce(&s, .key(.char("?")))
        expectGolden(Render.screen(s, width: 100, height: 40), named: "help-100x40")
    }

    @Test("the smallest full layout, 60x16")
    func minimum() {
        expectGolden(Render.screen(sampleState(), width: 60, height: 16), named: "minimum-60x16")
    }

    @Test("too small, 59x24: one line says so")
    func tooSmall() {
        expectGolden(Render.screen(sampleState(), width: 59, height: 24), named: "too-small-59x24")
    }

    @Test("a screen that differs from its golden file fails, naming the row and column, expected against actual")
    func cellDiff() {
        var s = sampleState()
        _ = ViewModel.reduce(&s, .clock(at(312), speed: 30))  // one second later: the status bar's clocks
        withKnownIssue {
            expectGolden(Render.screen(s, width: 100, height: 24), named: "whole-screen-100x24", record: false)
        } matching: { issue in
            let text = issue.comments.map(\.rawValue).joined()
            return text.contains("TestData/golden-screens/whole-screen-100x24.txt differs") && text.contains("row 23, column 13 (and 3 more cells): expected \"0\", actual \"1\"")
                && text.contains("  actual:   \" catch-up 2m11s ago, next 7m49s │ req 42 this launch │ remote-push │ d1 08:05:12 x30\"")
        }
    }
}
