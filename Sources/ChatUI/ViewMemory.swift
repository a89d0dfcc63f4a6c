import Foundation
import SyncCore

/// Where you left off (issue 15 #1): the open conversation, how far it was scrolled back,
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
