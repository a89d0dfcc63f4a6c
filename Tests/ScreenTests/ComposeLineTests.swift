import ChatUI
import SyncCore
import Testing

/// A line of characters that counts how many of them are read: what a frame costs, told
/// without a clock.
final class ReadCounter: @unchecked Sendable { var reads = 0 }

struct CountingLine: RandomAccessCollection {
    let characters: [Character]
    let counter = ReadCounter()
    var startIndex: Int { 0 }
    var endIndex: Int { characters.count }
    subscript(i: Int) -> Character {
        counter.reads += 1
        return characters[i]
    }
}

@Suite("Compose line: long messages")
struct ComposeLineTests {
    let limit = MessageLimits.maxBodyBytes

    /// A line holding `text` that refused a character at the limit, as a paste leaves it.
    func full(_ text: String) -> LineEditor {
        var line = LineEditor(text)
        let fitted = line.insert("🎉", maxBytes: text.utf8.count)
        #expect(!fitted)
        return line
    }

    @Test("a 17 KiB paste stops at the 16 KiB limit with a notice, and Enter sends exactly the limit")
    func pasteStopsAtTheLimit() {
        let store = TestStore(sampleState())  // Alice open, the compose line focused
        let atLimit = String(repeating: "x", count: limit)
        store.type(String(repeating: "x", count: 17 * 1024)) {
            $0.drafts[alice] = full(atLimit)
            $0.notice = "message limit: 16 KiB (16384 bytes); nothing more is added"
        }
        #expect(store.state.compose.utf8Count == limit && store.state.compose.count == limit)
        let shown = Render.screen(store.state, width: 100, height: 24).text
        #expect(shown[20] == " message limit: 16 KiB (16384 bytes); nothing more is added" && shown[21].hasPrefix("to Alice> "), "\(shown[20])\n\(shown[21])")
        store.send(.key(.enter), commands: [.apply(.send(handle: "alice", text: atLimit))]) {
            $0.drafts[alice] = nil
            $0.history.record(atLimit)
            $0.notice = nil
        }
    }

    @Test("the limit counts UTF-8 bytes; after a character that did not fit, the rest of a paste is refused too, until an edit")
    func limitCountsBytes() {
        let store = TestStore(sampleState())
        let a = String(repeating: "a", count: limit - 3)
        store.type(a + "é") { $0.drafts[alice] = LineEditor(a + "é") }  // é is 2 bytes: fits, 1 byte left
        #expect(store.state.compose.utf8Count == limit - 1)
        store.send(.key(.char("🎉"))) {  // 4 bytes: refused
            $0.drafts[alice] = full(a + "é")
            $0.notice = Notices.limitReached
        }
        store.send(.key(.char("b")))  // would fit, but it follows a refused one: refused, said again
        store.send(.key(.backspace)) {  // é goes: 3 bytes free
            $0.drafts[alice] = LineEditor(a)
            $0.notice = nil
        }
        store.send(.key(.char("b"))) { $0.drafts[alice] = LineEditor(a + "b") }
        #expect(store.state.compose.utf8Count == limit - 2 && store.state.compose.string.hasSuffix("ab"))
    }

    @Test("Enter on a line over the limit sends nothing and says why; the line stays to be shortened")
    func overTheLimitIsNotSent() {
        var s = sampleState()
        let long = String(repeating: "y", count: limit + 10)
        s.drafts[alice] = LineEditor(long)  // from elsewhere: typing stops at the limit
        let store = TestStore(s)
        store.send(.key(.enter)) { $0.notice = "message limit: 16 KiB (16384 bytes); this line is 16394 bytes, nothing was sent" }
        store.send(.key(.backspace)) {
            $0.drafts[alice] = LineEditor(String(repeating: "y", count: limit + 9))
            $0.notice = nil
        }
        for n in (limit..<(limit + 9)).reversed() {
            store.send(.key(.backspace)) { $0.drafts[alice] = LineEditor(String(repeating: "y", count: n)) }
        }
        store.send(.key(.enter), commands: [.apply(.send(handle: "alice", text: String(repeating: "y", count: limit)))]) {
            $0.drafts[alice] = nil
            $0.history.record(String(repeating: "y", count: limit))
        }
    }

    @Test("a frame reads only the characters around the cursor, never the whole 16 KiB line", arguments: [
        ("ASCII", Character("a")), ("CJK", Character("漢")), ("NUL", Character("\u{0}")), ("combining mark alone", Character("\u{301}")),
    ])
    func frameCostIsBounded(kind: String, ch: Character) {
        let columns = 80
        let n = limit / ch.utf8.count
        for cursor in [n, n / 2, 0] {
            let line = CountingLine(characters: Array(repeating: ch, count: n))
            let cells = Render.composeWindow(line, cursor: cursor, columns: columns)
            #expect(line.counter.reads <= 3 * columns + 2, "\(kind), cursor \(cursor) of \(n): \(line.counter.reads) characters read")
            #expect(cells.contains { $0.isCursor }, "\(kind): the cursor is visible")
        }
    }

    @Test("the compose line scrolls by the width characters are drawn with: CJK takes two columns, a control shows as ^@")
    func windowWidths() {
        let wide = Render.composeWindow(Array(repeating: Character("漢"), count: 100), cursor: 100, columns: 11)
        #expect(wide.map(\.text).joined() == "漢漢漢漢漢 ")
        let nul = Render.composeWindow(Array("ab\u{0}cd"), cursor: 5, columns: 20)
        #expect(nul.map(\.text).joined() == "ab^@cd ")
        // The cursor on the first character of a line that does not fit.
        let start = Render.composeWindow(Array("abcdefghij"), cursor: 0, columns: 4)
        #expect(start.map(\.text) == ["a", "b", "c", "d"] && start[0].isCursor)
        let end = Render.composeWindow(Array("abcdefghij"), cursor: 10, columns: 4)
        #expect(end.map(\.text) == ["h", "i", "j", " "] && end[3].isCursor)
    }

    @Test("editing anywhere in a long line gives what an array of characters would (a model check of the gap buffer)")
    func editsMatchAModel() {
        var editor = LineEditor()
        var model: [Character] = []
        var cursor = 0
        var state: UInt64 = 11
        func next(_ n: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(n))
        }
        let alphabet: [Character] = ["a", "b", " ", "é", "漢", "🎉", "e\u{301}"]
        for step in 0..<20_000 {
            switch next(10) {
            case 0...3:
                let ch = alphabet[next(alphabet.count)]
                editor.insert(ch); model.insert(ch, at: cursor); cursor += 1
            case 4: editor.left(); cursor = max(0, cursor - 1)
            case 5: editor.right(); cursor = min(model.count, cursor + 1)
            case 6:
                editor.backspace()
                if cursor > 0 { model.remove(at: cursor - 1); cursor -= 1 }
            case 7:
                editor.deleteForward()
                if cursor < model.count { model.remove(at: cursor) }
            case 8:
                if next(2) == 0 { editor.home(); cursor = 0 } else { editor.end(); cursor = model.count }
            default:
                editor.killWord()
                var start = cursor
                while start > 0, model[start - 1] == " " { start -= 1 }
                while start > 0, model[start - 1] != " " { start -= 1 }
                model.removeSubrange(start..<cursor); cursor = start
            }
            if step % 997 == 0 || step == 19_999 {
                #expect(Array(editor) == model && editor.cursor == cursor, "step \(step)")
                #expect(editor.utf8Count == String(model).utf8.count, "step \(step)")
                #expect(editor.string == String(model), "step \(step)")
            }
        }
        editor.killToStart(); model.removeFirst(cursor)
        #expect(Array(editor) == model && editor.cursor == 0)
    }
}
