import ChatUI
import Config
import SyncCore
import SyncEngine
import Testing

/// Long messages: folded to their first rows with a row that says what is hidden, `z` shows
/// them whole, `Home` goes to the oldest message (docs/screen.md#long-messages, docs/keys.md).
@Suite("Long messages: folded, whole on z, Home to the oldest")
struct LongMessageTests {
    func pane(_ s: ViewState, width: Int = 100, height: Int = 24) -> [String] {
        Render.screen(s, width: width, height: height).text.compactMap { row in
            row.firstIndex(of: "│").map { String(row[row.index(after: $0)...]) }
        }
    }

    func received(_ text: String, id: String = "long", at second: Int64 = 310, in s: inout ViewState) {
        _ = ViewModel.reduce(&s, .message(alice, MessageRow(txId: id, outgoing: false, sender: "Alice", text: text, kind: .contextual,
                                                            blockTime: at(second), channel: .realtime)))
    }

    @Test("16 370 new lines: ten rows, then '⋯ 16361 more lines · z: whole messages'; z (outside the compose line) shows them all, z again folds")
    func manyLines() {
        var s = sampleState()
        received((1...16_371).map { "line \($0)" }.joined(separator: "\n"), in: &s)
        let rows = pane(s)
        let first = try! #require(rows.firstIndex { $0.contains("Alice: line 1") })
        #expect(rows[first + 9].contains("line 10") && !rows.joined().contains("line 11 "))
        #expect(rows[first + 10].trimmingCharacters(in: .whitespaces) == "⋯ 16361 more lines · z: whole messages", "\(rows[first + 10])")
        s.focus = .messages
        _ = ViewModel.reduce(&s, .key(.char("z")))
        let whole = s.wholeMessages
        #expect(whole)
        #expect(pane(s).contains { $0.contains("line 16371") }, "whole: the last line at the bottom")
        _ = ViewModel.reduce(&s, .key(.char("z")))
        let folded = !s.wholeMessages
        #expect(folded)
    }

    @Test("16 KiB of emoji on one line folds to ten rows with the characters left; a message of twelve rows shows whole")
    func oneLongLine() {
        var s = sampleState()
        received(String(repeating: "👩‍👩‍👧‍👦", count: 16_384 / 25), in: &s)
        received((1...12).map { "short \($0)" }.joined(separator: "\n"), id: "twelve", at: 320, in: &s)
        let rows = pane(s, height: 40)
        let more = try! #require(rows.first { $0.contains("more character") })
        #expect(more.contains("⋯ about ") && more.hasSuffix("more characters · z: whole messages"), "\(more)")
        let family = rows.filter { $0.contains("👩") }
        #expect(family.count == 10, "\(family.count) rows of emoji")
        #expect((1...12).allSatisfy { n in rows.contains { $0.hasSuffix("short \(n)") || $0.contains("short \(n) ") } }, "twelve rows: not folded")
    }

    @Test("Home goes to the oldest message; the frame holds the view there, so PgDn moves at once (PgUp past the top is held too)")
    func homeToOldest() {
        var s = sampleState()
        for i in 0..<200 { received("message \(i)", id: "m\(i)", at: 400 + Int64(i), in: &s) }
        s.focus = .messages
        _ = ViewModel.reduce(&s, .key(.home))
        #expect(s.scroll == ViewState.oldest)
        let g = Render.screen(s, width: 100, height: 24)
        let held = try! #require(g.messageScroll)
        #expect(held < 400)
        #expect(g.text.joined().contains("message 0 ") || g.text.contains { $0.hasSuffix("message 0") }, "the oldest in view")
        _ = ViewModel.reduce(&s, .messagesShown(scroll: held))
        #expect(s.scroll == held)
        _ = ViewModel.reduce(&s, .key(.pageDown))
        #expect(s.scroll == held - 10, "one PgDn moves the view")
        for _ in 0..<100 { _ = ViewModel.reduce(&s, .key(.pageUp)) }
        _ = ViewModel.reduce(&s, .messagesShown(scroll: Render.screen(s, width: 100, height: 24).messageScroll!))
        #expect(s.scroll == held, "PgUp past the top is held at the top")
    }

    @Test("while older pages are still to load, the view is not held (they load as it scrolls back)")
    func notHeldWhilePartial() {
        var s = sampleState()
        received("only", in: &s)
        s.partialHistory.insert(alice)
        s.scroll = 500
        _ = ViewModel.reduce(&s, .messagesShown(scroll: 0))
        #expect(s.scroll == 500)
    }
}
