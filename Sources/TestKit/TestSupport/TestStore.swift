import ChatUI
import CustomDump
import Testing

/// The view-model reducer under test, as TCA's `TestStore` tests a reducer (docs/testing.md#reducer-tests-teststore: "send
/// an event, state what changed"). Each `send` runs `ViewModel.reduce` on the store's state
/// and asserts two things exhaustively: the *whole* new state equals the old one changed by
/// `update`, and the commands are exactly `commands`. A failure prints a diff of the state
/// (`−` expected, `+` actual), so a change nobody stated is a failing test, not a silent one.
///
///     let store = TestStore(listFocused())
///     store.send(.key(.down)) { $0.selected = 1 }
///     store.send(.key(.enter), commands: [.apply(.open(handle: "bob"))]) {
///         $0.open = bob
///         $0.focus = .compose
///     }
public final class TestStore {
    /// The state after the last `send`.
    public private(set) var state: ViewState

    public init(_ state: ViewState) {
        self.state = state
    }

    /// Sends `input`; expects the commands `commands` and the state changed by `update`.
    /// Returns the commands, for a test that goes on to read them.
    @discardableResult
    public func send(_ input: ViewInput, commands expectedCommands: [Command] = [],
                     sourceLocation: SourceLocation = #_sourceLocation,
                     _ update: (inout ViewState) -> Void = { _ in }) -> [Command] {
        var expected = state
        update(&expected)
        let commands = ViewModel.reduce(&state, input)
        check(describe(input), commands: commands, expected: expectedCommands, state: expected, sourceLocation: sourceLocation)
        return commands
    }

    /// Loads the history the state asks for (`ViewModel.loadHistory`, which the app runs after
    /// each input), reading each page with `read`; expects the state changed by `update`.
    /// Returns the pages read, for a test that counts them.
    ///
    ///     store.send(.key(.pageUp)) { $0.scroll = 310 }
    ///     store.loadHistory(read: pages) { $0.messages[alice] = Array(all.suffix(1000)) }
    @discardableResult
    public func loadHistory(read: (HistoryPage) -> [MessageRow], sourceLocation: SourceLocation = #_sourceLocation,
                            _ update: (inout ViewState) -> Void = { _ in }) -> [HistoryPage] {
        var expected = state
        update(&expected)
        var pages: [HistoryPage] = []
        ViewModel.loadHistory(&state) { page in
            pages.append(page)
            return read(page)
        }
        check("loadHistory", commands: [], expected: [], state: expected, sourceLocation: sourceLocation)
        return pages
    }

    private func check(_ what: String, commands: [Command], expected expectedCommands: [Command], state expected: ViewState,
                       sourceLocation: SourceLocation) {
        if commands != expectedCommands {
            Issue.record(Comment(rawValue: "\(what): the commands differ (− expected, + actual):\n"
                                 + (diff(expectedCommands, commands) ?? "\(expectedCommands) vs \(commands)")),
                         sourceLocation: sourceLocation)
        }
        if state != expected {
            Issue.record(Comment(rawValue: "\(what): the state differs (− expected, + actual):\n"
                                 + (diff(expected, state) ?? "no difference CustomDump can show")),
                         sourceLocation: sourceLocation)
        }
    }

    /// Sends each key in turn, each expected to change nothing but what `update` says once
    /// they have all been handled, and to give no command: for typing.
    public func type(_ text: String, sourceLocation: SourceLocation = #_sourceLocation,
                     _ update: (inout ViewState) -> Void = { _ in }) {
        var expected = state
        update(&expected)
        var commands: [Command] = []
        for ch in text { commands += ViewModel.reduce(&state, .key(.char(ch))) }
        check("typing \"\(text.count > 40 ? text.prefix(40) + "…" : text)\"", commands: commands, expected: [], state: expected, sourceLocation: sourceLocation)
    }

    private func describe(_ input: ViewInput) -> String {
        var s = ""
        customDump(input, to: &s, maxDepth: 2)
        return "send(\(s))"
    }
}

// A line editor is a collection of characters to CustomDump, which would hide its cursor:
// dump it as what a test states — its text and cursor — and, when they are set, whether it
// is browsing the history and whether it refused a character at the limit.
extension LineEditor: CustomDumpReflectable {
    public var customDumpMirror: Mirror {
        var children: [(label: String?, value: Any)] = [("string", string), ("cursor", cursor)]
        for field in Mirror(reflecting: self).children {
            if field.label == "historyIndex", let index = field.value as? Int { children.append(("historyIndex", index)) }
            if field.label == "full", field.value as? Bool == true { children.append(("full", true)) }
        }
        return Mirror(self, children: children, displayStyle: .struct)
    }
}
