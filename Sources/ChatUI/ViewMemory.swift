import Foundation
import SyncCore

/// Where you left off: the open conversation, how far it was scrolled back,
/// and every conversation's unsent line with its cursor. The app keeps it in the profile
/// and gives it back at the next launch; the reducer makes it and takes it.
public struct ViewMemory: Codable, Equatable, Sendable {
    public struct Draft: Codable, Equatable, Sendable {
        public var text: String
        public var cursor: Int

        public init(text: String, cursor: Int) {
            self.text = text
            self.cursor = cursor
        }
    }

    public var open: String?
    public var scroll: Int
    public var drafts: [String: Draft]

    public init(open: String? = nil, scroll: Int = 0, drafts: [String: Draft] = [:]) {
        self.open = open
        self.scroll = scroll
        self.drafts = drafts
    }

    /// What the view state has to keep: nothing is kept of an empty line.
    public init(_ s: ViewState) {
        open = s.open?.value
        scroll = s.scroll
        drafts = [:]
        for (address, line) in s.drafts where !line.isEmpty {
            drafts[address.value] = Draft(text: line.string, cursor: line.cursor)
        }
    }

    /// As the profile stores it (JSON), and back; nil for text that is not a memory.
    public var encoded: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    public static func decode(_ text: String) -> ViewMemory? {
        try? JSONDecoder().decode(ViewMemory.self, from: Data(text.utf8))
    }
}

/// The words for unsent lines when the app ends or asks first: `your unsent line to Alice is
/// kept`, `your unsent lines to Alice and Frank are kept`, `… to Alice, Bob and Frank …`.
public enum UnsentLines {
    /// `Alice`, `Alice and Frank`, `Alice, Bob and Frank` (names made safe).
    public static func names(_ names: [String]) -> String {
        let shown = names.map(UntrustedText.visible)
        guard shown.count > 1 else { return shown.first ?? "" }
        return shown.dropLast().joined(separator: ", ") + " and " + shown.last!
    }

    /// What the command says after the screen closes, when a profile kept the lines.
    public static func kept(_ to: [String]) -> String {
        to.count == 1
            ? "your unsent line to \(names(to)) is kept in the profile; it will be there next time"
            : "your unsent lines to \(names(to)) are kept in the profile; they will be there next time"
    }

    /// What `q` says first when nothing keeps them: the lines being written (`to`), and the
    /// messages still waiting to be sent (`waiting`).
    public static func wouldBeLost(_ to: [String], waiting: [String] = []) -> String {
        var parts: [String] = []
        if !to.isEmpty { parts.append(to.count == 1 ? "an unsent line to \(names(to))" : "unsent lines to \(names(to))") }
        if !waiting.isEmpty { parts.append("\(waiting.count == 1 ? "a message" : "messages") waiting to be sent to \(names(waiting))") }
        return parts.joined(separator: " and ") + " would be lost (nothing is kept): press q again to quit"
    }
}
