import SyncCore

/// Whether the person is looking, and what reaches them when not (docs/screen.md#notifications):
/// a desktop notification through the terminal while the terminal is unfocused, never while it
/// is focused (the unread marks say it there). A terminal that never reports focus counts as
/// unfocused. What a notification shows and how often follow rule 15 through the engine's own
/// `NotificationPresenter` (muted contacts never, one per conversation per second, the preview
/// mode's words): the rule has one owner; the view keeps its own instance of it for the
/// messages the foreground takes (the engine raises banners only in the background).
public struct DesktopAttention: Hashable, Sendable {
    /// `--notify`, as chosen at start (`off` until then).
    public var method: DesktopNotification.Method = .off
    /// Inside tmux: each notification wrapped in its passthrough.
    public var passthrough = false
    /// What the terminal last said (focus reporting, `CSI I` / `CSI O`); nil: it never said.
    public var focused: Bool?
    /// Messages that land from this instant on notify (the first clock the view is told):
    /// history a first catch-up brings is not news.
    public var since: Instant?
    var presenter = NotificationPresenter()

    public init() {}

    /// Away: the terminal said it lost focus, or never said.
    public var away: Bool { focused != true }

    /// The notification for an incoming message the foreground took (`row`), if one is due:
    /// away, the method not `off`, the message new, and rule 15 letting it through.
    mutating func message(_ row: MessageRow, in conversation: ConversationRow?, status: StatusInfo) -> Command? {
        guard method != .off, away, !row.outgoing, status.lifecycle == .foreground,
              let since, row.blockTime >= since, let conversation else { return nil }
        presenter.preview = status.preview
        let contact = Contact(address: conversation.address, handle: conversation.handle, displayName: conversation.name, muted: conversation.muted)
        guard case .show(let banner) = presenter.incoming(from: contact, kind: row.kind, text: row.text, mode: status.mode, now: status.clock) else {
            return nil
        }
        return notify(banner.title, banner.body)
    }

    /// The notification for a banner the engine raised in the background (rule 15 decided it).
    mutating func banner(_ b: BannerRow) -> Command? {
        guard method != .off, away else { return nil }
        return notify(b.title, b.body)
    }

    private func notify(_ title: String, _ body: String) -> Command { .notify(title: title, body: body) }
}
