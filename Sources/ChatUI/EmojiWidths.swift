import CWidth

/// How the terminal lays out an emoji sequence — a flag (🇩🇪), a skin tone (👍🏽), a family
/// joined by zero-width joiners (👨‍👩‍👧), a presentation selector (❤️), a keycap (1️⃣), a tag
/// flag (🏴󠁧󠁢󠁳󠁣󠁴󠁿) — and so what the screen draws for one and how many columns it takes.
///
/// Terminals disagree (measured: tmux 3.3a joins what follows a joiner into one cell but draws
/// a skin tone beside its base, foot 1.13 advances by the sum of every code point's width,
/// a terminal with grapheme clustering on gives every sequence one cell pair), so the terminal
/// adapter asks the one it runs in at start (`TerminalProbe`) and the value is told to the
/// render (`ViewState.emojiWidths`): never a global.
public enum EmojiWidths: Equatable, Sendable {
    /// Each sequence split into what every terminal draws alike (`TextWidth.cells`): its
    /// emoji one by one, a flag as its two letters. What a terminal that answers nothing gets.
    case safe
    /// The terminal clusters graphemes (DEC mode 2027 on): each sequence whole, in one cell
    /// pair (one cell for a keycap or a text-presentation sequence).
    case clusters
    /// Each sequence whole, in the columns this terminal was measured to advance for it.
    case measured(EmojiAdvances)

    /// Whether sequences are drawn whole.
    public var whole: Bool { self != .safe }

    /// One line for the log and the inspector.
    public var description: String {
        switch self {
        case .safe: return "emoji split into what every terminal draws alike (safe)"
        case .clusters: return "emoji whole, one cell pair each (grapheme clusters, mode 2027)"
        case .measured(let a): return "emoji whole at the measured widths (\(a.description))"
        }
    }

    /// The columns `ch` takes drawn whole, or nil when it is no emoji sequence (or one drawn
    /// split here): then `TextWidth.cells` splits it safely.
    public func wholeAdvance(_ ch: Character) -> Int? {
        guard whole, let sequence = EmojiSequence(ch) else { return nil }
        switch self {
        case .safe: return nil
        case .clusters: return sequence.clusterAdvance
        case .measured(let a): return sequence.advance(a)
        }
    }
}

/// What each part of an emoji sequence advances the cursor on a terminal, measured there by
/// cursor position reports after a test sequence of each kind (`TerminalProbe`).
public struct EmojiAdvances: Equatable, Sendable, Codable {
    /// A flag: a pair of regional indicators (🇩🇪).
    public var flag: Int
    /// A skin tone after its base (👍🏽 less 👍): 2 where it is drawn beside it, 0 in one glyph.
    public var modifier: Int
    /// An emoji after a zero-width joiner adds nothing (tmux joins it into the cell before) or
    /// its own width (the sum of the code points).
    public var joined: Bool
    /// A text-default emoji with the emoji selector VS16 (❤️): 1 or 2.
    public var presentation: Int
    /// A keycap (1️⃣).
    public var keycap: Int
    /// A tag sequence (🏴󠁧󠁢󠁳󠁣󠁴󠁿).
    public var tag: Int

    public init(flag: Int, modifier: Int, joined: Bool, presentation: Int, keycap: Int, tag: Int) {
        self.flag = flag
        self.modifier = modifier
        self.joined = joined
        self.presentation = presentation
        self.keycap = keycap
        self.tag = tag
    }

    public var description: String {
        "flag \(flag), skin tone +\(modifier), after a joiner \(joined ? "joined" : "summed"), VS16 \(presentation), keycap \(keycap), tag flag \(tag)"
    }
}

/// An emoji sequence as synchat draws it whole: a flag, a keycap, a tag flag, or emoji joined
/// by single zero-width joiners, each perhaps with one presentation selector and one skin
/// tone. Anything else — a joiner at either end or twice, a skin tone with no base, a joiner
/// before a letter, more than eight emoji joined, a selector twice — is no sequence here and
/// is drawn split (safely): terminals do not agree on it.
public struct EmojiSequence: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        case flag
        /// A digit, `#` or `*`, with or without VS16, and U+20E3.
        case keycap(selector: Bool)
        /// 🏴 and tag letters, ended by the cancel tag.
        case tag
        /// Emoji joined by zero-width joiners.
        case joined([Component])
    }

    public struct Component: Equatable, Sendable {
        /// Columns the C library gives the emoji alone (1 or 2).
        public var width: Int
        /// VS16 (emoji presentation) follows it.
        public var emojiSelector: Bool
        /// VS15 (text presentation) follows it.
        public var textSelector: Bool
        /// A skin tone follows it.
        public var modifier: Bool
    }

    public let kind: Kind
    static let maxComponents = 8
    static let maxTags = 32

    public init?(_ ch: Character) {
        _ = TextWidth.localeReady
        let s = Array(ch.unicodeScalars)
        guard s.count >= 2 else { return nil }
        if s.count == 2, s.allSatisfy(Self.isRegionalIndicator) { kind = .flag; return }
        if s.last?.value == 0x20E3 {
            guard Self.isKeycapBase(s[0]), s.count == 2 || (s.count == 3 && s[1].value == 0xFE0F) else { return nil }
            kind = .keycap(selector: s.count == 3)
            return
        }
        if s.contains(where: Self.isTag) {
            // 🏴, tag letters and digits, the cancel tag: a subdivision flag.
            guard s[0].value == 0x1F3F4, s.count >= 3, s.count - 2 <= Self.maxTags, s.last!.value == 0xE007F,
                  s.dropFirst().dropLast().allSatisfy({ (0xE0020...0xE007E).contains($0.value) }) else { return nil }
            kind = .tag
            return
        }
        var components: [Component] = []
        var i = 0
        while i < s.count {
            guard Self.isEmojiBase(s[i]) else { return nil }
            let w = Int(synchat_wcwidth(s[i].value))
            guard w >= 1 else { return nil }
            var c = Component(width: min(2, w), emojiSelector: false, textSelector: false, modifier: false)
            let base = s[i]
            i += 1
            if i < s.count, s[i].value == 0xFE0F || s[i].value == 0xFE0E {
                if s[i].value == 0xFE0F { c.emojiSelector = true } else { c.textSelector = true }
                i += 1
            }
            if i < s.count, Self.isModifier(s[i]) {
                guard base.properties.isEmojiModifierBase, !c.textSelector else { return nil }
                c.modifier = true
                i += 1
            }
            components.append(c)
            guard i < s.count else { break }
            // Only a joiner may come next, with an emoji after it.
            guard s[i].value == 0x200D, i + 1 < s.count else { return nil }
            i += 1
        }
        guard !components.isEmpty, components.count <= Self.maxComponents else { return nil }
        kind = .joined(components)
    }

    /// Columns on a terminal that clusters graphemes (mode 2027): two, but for a keycap without
    /// its selector and one emoji with the text selector, which take the first character's.
    public var clusterAdvance: Int {
        switch kind {
        case .flag, .tag: return 2
        case .keycap(let selector): return selector ? 2 : 1
        case .joined(let c):
            if c.count == 1, c[0].textSelector { return c[0].width }
            if c.contains(where: { $0.emojiSelector || $0.modifier }) { return 2 }
            return c[0].width
        }
    }

    /// Columns on a terminal measured as `a` says: each emoji's own width (widened by VS16 as
    /// measured), each skin tone's, and what follows a joiner added or joined.
    public func advance(_ a: EmojiAdvances) -> Int {
        switch kind {
        case .flag: return a.flag
        case .keycap: return a.keycap
        case .tag: return a.tag
        case .joined(let components):
            var total = 0
            for (i, c) in components.enumerated() {
                let joinedIn = i > 0 && a.joined
                if !joinedIn {
                    total += c.width
                    if c.emojiSelector, c.width == 1 { total += a.presentation - 1 }
                }
                if c.modifier { total += a.modifier }
            }
            return total
        }
    }

    static func isRegionalIndicator(_ s: Unicode.Scalar) -> Bool { (0x1F1E6...0x1F1FF).contains(s.value) }
    static func isModifier(_ s: Unicode.Scalar) -> Bool { (0x1F3FB...0x1F3FF).contains(s.value) }
    static func isTag(_ s: Unicode.Scalar) -> Bool { (0xE0020...0xE007F).contains(s.value) }
    static func isKeycapBase(_ s: Unicode.Scalar) -> Bool { s == "#" || s == "*" || ("0"..."9").contains(s) }
    /// An emoji that may start a component: not ASCII (digits are emoji only in keycaps), not a
    /// regional indicator, skin tone, selector or joiner.
    static func isEmojiBase(_ s: Unicode.Scalar) -> Bool {
        !s.isASCII && s.properties.isEmoji && !isRegionalIndicator(s) && !isModifier(s) && s.value != 0x200D
            && s.value != 0xFE0F && s.value != 0xFE0E && s.value != 0x20E3
    }
}
