import ClientRuntime
import Directives
import SyncCore
import SyncEngine

/// What the view-model asks the outside world to do. The app performs these; the reducer
/// stays values in, values out. Whatever changes the world or the client is a directive
/// (`apply`), the one vocabulary of keys, scenario lines and recordings: a send, reading a
/// conversation, a mode, a rename, a mute. The rest is the app's own pacing and queries.
public enum Command: Equatable, Sendable {
    /// A change to the world, the client or the app's lifecycle, as a scenario line makes it.
    case apply(Directive)
    /// A fault key: the session resolves it against the world's truth (`FaultToggle`).
    case toggleFault(FaultToggle)
    case setSpeed(Double)
    /// Stop or restart the world's clock (the app's pacing, not the world: nothing is recorded).
    case togglePause
    /// While paused: run the world to its next logged event.
    case step
    /// Ask the engine for its `.inspection` events (true) or stop (false).
    case inspect(Bool)
    /// Search the store's history: one conversation, or all (nil).
    case search(SearchQuery, in: Address?)
    /// Ring the terminal's bell (a message while you look elsewhere, `--bell`).
    case bell
    /// A desktop notification (`--notify`), while the terminal is unfocused: the app writes it
    /// after the frame, by the method chosen at start (`DesktopAttention`).
    case notify(title: String, body: String)
    case quit
}

/// Everything that reaches the view-model.
public enum ViewInput: Equatable, Sendable {
    case key(Key)
    /// Text the terminal says was pasted (bracketed paste): one edit, nothing sent.
    case paste(String)
    /// The conversation list, fresh from the store (names, unread counts, activity).
    case conversations([ConversationRow])
    /// A message stored by the engine, in its conversation.
    case message(Address, MessageRow)
    /// A conversation's unread count, as the store has it (the engine's `.unread` event).
    case unread(Address, Int)
    /// A page of one conversation's history (`ViewState.historyWanted`), oldest first:
    /// the first when it is opened, then older ones; `complete` when it reaches the first
    /// message.
    case history(Address, [MessageRow], complete: Bool = true)
    /// A line of the app's own for the log (a notice), already with its time if it has one.
    case logLine(String)
    /// One engine event as a line of the sync log.
    case log(LogEntry)
    case banner(BannerRow)
    /// What the engine's status bar says (its `.status` event).
    case engineStatus(EngineStatus)
    /// A contact added, renamed, muted or unmuted.
    case contact(Contact)
    /// The world's clock now, and the speed of time (each frame).
    case clock(Instant, speed: Double)
    /// Where a played scenario is (told when it changes), nil without one.
    case script(ScriptPhase?)
    /// The world's faults and what the engine has not noticed of them (the session's ground
    /// truth, not the engine's), told whenever it changes.
    case truth(WorldTruth)
    /// Whether the world is reached: a server may be gone, or no longer know the user.
    case serverLink(ServerLink)
    /// The world's clock stopped (true) or runs (false).
    case paused(Bool)
    /// The clock is a server's, at this speed: no key here pauses, steps or changes it.
    case serverClock(Double)
    /// How the terminal draws emoji sequences, found at start (`EmojiWidths`).
    case emojiWidths(EmojiWidths)
    /// What the engine's inspector shows (its `.inspection` event, while `i` is open).
    case inspection(EngineInspection)
    /// A message written changed state: sending, failed, sent.
    case outgoing(OutgoingMessage)
    /// A conversation opened from outside the keys (a played `open NAME`).
    case openConversation(Address)
    /// Where the last session left off: open conversation, scroll, drafts (after the list).
    case restore(ViewMemory)
    /// Unsent lines survive a quit (a profile keeps them) or not (--ephemeral).
    case keepsDrafts(Bool)
    /// The keys in force (keys.toml).
    case keys(KeyMap)
    /// A click or the wheel, over the area of the screen under it (`Render.area`).
    case mouse(MouseEvent, ScreenArea)
    /// How far back the message pane could be scrolled, as the last frame found it: a view
    /// scrolled past the oldest message (`Home`, PgUp at the top) is held there.
    case messagesShown(scroll: Int)
    /// What a search found, newest first.
    case searchResults(SearchQuery, [SearchState.Hit])
    /// A catch-up started (its kind) or was skipped, for the timeline strip.
    case syncMark(TimelineStrip.Mark, at: Instant)
    /// A sync ended having made `n` backend requests, for the timeline strip.
    case syncRequests(Int, at: Instant)
    case notice(String)
    /// The terminal gained (true) or lost the focus (focus reporting: `CSI I`, `CSI O`).
    case focus(Bool)
    /// How desktop notifications reach the terminal (`--notify`, chosen at start).
    case notifyBy(DesktopNotification.Method, passthrough: Bool)
}

/// A paste as the compose line takes it.
public enum Paste {
    /// `text` with each new line one LF: terminals send a pasted new line as CR (tmux's
    /// `paste-buffer` too), some as LF or CRLF.
    public static func normalized(_ text: String) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        var lastWasCR = false
        for scalar in text.unicodeScalars {
            if scalar == "\n", lastWasCR { lastWasCR = false; continue }
            lastWasCR = scalar == "\r"
            out.unicodeScalars.append(scalar == "\r" ? "\n" : scalar)
        }
        return out
    }
}

/// What the compose line says when a message would pass `MessageLimits.maxBodyBytes`.
public enum Notices {
    /// What the compose line says of the notices the app starts with (a theme's, a keys file's
    /// warnings): one as it is; several counted, all of them, each in the log too.
    public static func atStart(_ notices: [String]) -> String? {
        guard notices.count > 1 else { return notices.first }
        return "\(notices.count) warnings, each in the log (l): " + notices.joined(separator: " · ")
    }

    static let limit = "message limit: \(MessageLimits.maxBodyBytes / 1024) KiB (\(MessageLimits.maxBodyBytes) bytes)"

    /// Built once: a paste past the limit says it for every key it refuses.
    public static let limitReached = limit + "; nothing more is added"

    public static let scriptOver = "the scenario is over: the world goes on live, and every key still works"

    /// What a key that paces the clock (space, `.`, `+`, `-`) says on a server's clock.
    public static func serverClock(_ speed: Double) -> String {
        "the clock is the server's: x\(Render.speedWord(speed)), not paused, stepped or changed from here"
    }

    /// A paste that held bytes that are not UTF-8: kept, each as `�`, and said.
    public static func pasteNotUTF8(_ n: Int) -> String {
        "the paste held \(n == 1 ? "a byte" : "\(n) bytes") that \(n == 1 ? "is" : "are") not UTF-8, each kept as \u{FFFD}"
    }

    public static func tooLongToSend(bytes: Int) -> String { limit + "; this line is \(bytes) bytes, nothing was sent" }
}
