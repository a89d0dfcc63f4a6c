import ChatUI

/// How one role looks: colours by number (0–255; names are resolved when a theme is read)
/// and attributes.
public struct Style: Equatable, Sendable {
    public var fg: Int?
    public var bg: Int?
    public var bold = false
    public var dim = false
    public var reverse = false
    public var underline = false

    public init(fg: Int? = nil, bg: Int? = nil, bold: Bool = false, dim: Bool = false, reverse: Bool = false, underline: Bool = false) {
        self.fg = fg
        self.bg = bg
        self.bold = bold
        self.dim = dim
        self.reverse = reverse
        self.underline = underline
    }
}

/// A theme: a style per semantic role. `colour` is false under `NO_COLOR`, when only the
/// attributes are used.
public struct Theme: Equatable, Sendable {
    public var name: String
    public var styles: [Role: Style]
    public var colour = true

    public init(name: String, styles: [Role: Style]) {
        self.name = name
        self.styles = styles
    }

    public func style(for role: Role) -> Style { styles[role] ?? Style() }

    /// The default dark theme, compiled in so that the binary works from any directory.
    public static let `default` = Theme(name: "default", styles: [
        .title: Style(fg: 0, bg: 6, bold: true),
        .border: Style(fg: 8),
        .listSelected: Style(bold: true, reverse: true),
        .listUnread: Style(fg: 3, bold: true),
        .listMuted: Style(dim: true),
        .messageOutgoing: Style(fg: 6),
        .messageMeta: Style(fg: 8),
        .messageMark: Style(fg: 5),
        .messageDimmed: Style(fg: 8, dim: true),
        .daySeparator: Style(fg: 8),
        .composeCursor: Style(reverse: true),
        .logLine: Style(fg: 7),
        .logTitle: Style(fg: 6),
        .statusBar: Style(fg: 252, bg: 236),
        .statusLifecycle: Style(fg: 255, bg: 236, bold: true),
        .statusBackground: Style(fg: 0, bg: 3, bold: true),
        .statusRealtimeLive: Style(fg: 2, bg: 236, bold: true),
        .statusRealtimeDegraded: Style(fg: 1, bg: 236, bold: true),
        .statusPushReliable: Style(fg: 2, bg: 236, bold: true),
        .statusPushUnknown: Style(fg: 3, bg: 236, bold: true),
        .statusPushUnreliable: Style(fg: 15, bg: 1, bold: true),
        .statusPushDisabled: Style(fg: 8, bg: 236),
        .statusTruth: Style(fg: 0, bg: 13, bold: true),
        .banner: Style(fg: 0, bg: 3),
        .help: Style(fg: 15, bg: 4),
        .helpKey: Style(fg: 11, bg: 4, bold: true),
        .warning: Style(fg: 0, bg: 3, bold: true),
        .focus: Style(fg: 0, bg: 11, bold: true),
        .searchMatch: Style(fg: 0, bg: 14, bold: true),
    ])
}
