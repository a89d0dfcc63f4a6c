import ChatUI
import SyncCore

extension LiveApp {
    /// The session played in virtual time with no terminal (`synchat simulate --cast`): the
    /// world run to each frame's instant, the view fed what it said exactly as on a screen
    /// (`absorb`), and the screen rendered (`Render.screen`) at `width` × `height` with
    /// `emoji`. A frame every `every` of virtual time from the start until `end` (or a `quit`
    /// line); `draw` gets each with its instant.
    public func frames(width: Int, height: Int, emoji: EmojiWidths, every: Interval, until end: Instant,
                       draw: (Instant, Grid) -> Void) {
        _ = ViewModel.reduce(&state, .emojiWidths(emoji))
        var t = session.scheduler.now
        absorb()
        draw(t, Render.screen(state, width: width, height: height))
        while t < end, !session.quitRequested {
            t = min(end, t + every)
            advanceWorld(to: t)
            absorb()
            draw(t, Render.screen(state, width: width, height: height))
        }
    }
}
