#ifndef SYNCHAT_CNCURSES_SHIM_H
#define SYNCHAT_CNCURSES_SHIM_H

#define NCURSES_WIDECHAR 1
#define _XOPEN_SOURCE_EXTENDED 1
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <wchar.h>
#include <fcntl.h>
#include <ncursesw/curses.h>
#include <ncursesw/term.h>

// Swift 6 cannot see C globals and function-like macros: tiny accessors instead.
static inline WINDOW *synchat_stdscr(void) { return stdscr; }
static inline int synchat_lines(void) { return LINES; }
static inline int synchat_cols(void) { return COLS; }
static inline attr_t synchat_a_normal(void) { return A_NORMAL; }
static inline attr_t synchat_a_bold(void) { return A_BOLD; }
static inline attr_t synchat_a_dim(void) { return A_DIM; }
static inline attr_t synchat_a_reverse(void) { return A_REVERSE; }
static inline attr_t synchat_a_underline(void) { return A_UNDERLINE; }
static inline int synchat_key_code_yes(void) { return KEY_CODE_YES; }
static inline int synchat_key_mouse(void) { return KEY_MOUSE; }

/// Mouse reporting (clicks and the wheel), or none. Returns what was granted.
static inline mmask_t synchat_mouse(int on) {
    mmask_t wanted = on ? (BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED) : 0;
    mouseinterval(0);
    return mousemask(wanted, NULL);
}

/// The mouse event just read: 1 a click (or press) of the first button, 4 the wheel up, 5 the
/// wheel down, 0 anything else; its cell in x, y.
static inline int synchat_mouse_event(int *x, int *y) {
    MEVENT e;
    if (getmouse(&e) != OK) return 0;
    *x = e.x; *y = e.y;
    if (e.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)) return 1;
    if (e.bstate & BUTTON4_PRESSED) return 4;
    if (e.bstate & BUTTON5_PRESSED) return 5;
    return 0;
}
static inline int synchat_has_colors(void) { return has_colors(); }
static inline int synchat_colors(void) { return COLORS; }

/// Sets the attributes and colour pair, then writes `n` wide characters at (y, x).
static inline int synchat_put(WINDOW *w, int y, int x, const wchar_t *s, int n, attr_t attrs, short pair) {
    wattr_set(w, attrs, pair, NULL);
    return mvwaddnwstr(w, y, x, s, n);
}

/// Writes one grid cell at (y, x): `s` holds one spacing character of `width` columns and up to
/// four zero-width marks. Anything else is refused (ERR, nothing written), so that ncursesw never
/// lays a cell out at another width than the grid gave it.
static inline int synchat_put_cell(WINDOW *w, int y, int x, const wchar_t *s, int n, int width, attr_t attrs, short pair) {
    if (n < 1 || n > 5 || n >= CCHARW_MAX + 1 || wcwidth(s[0]) != width) return ERR;
    wchar_t text[CCHARW_MAX + 1];
    for (int i = 0; i < n; i++) {
        if (i > 0 && wcwidth(s[i]) != 0) return ERR;
        text[i] = s[i];
    }
    text[n] = 0;
    cchar_t cell;
    if (setcchar(&cell, text, attrs, pair, NULL) != OK) return ERR;
    return mvwadd_wch(w, y, x, &cell);
}

/// Sends the cursor to (y, x) by absolute addressing (cup), whatever ncursesw believes about
/// where it is: `mvcur` from an unknown place (-1, -1) never moves relatively.
/// `mvcur` writes through stdio, not ncursesw's own buffer: flushed at once, so that the move
/// reaches the terminal before the next refresh's output.
static inline void synchat_replace_cursor(int y, int x) {
    mvcur(-1, -1, y, x);
    fflush(stdout);
}

/// Opens the terminal without `initscr`, which exits the process on an unknown TERM.
/// Returns NULL (and leaves the terminal alone) when that fails.
static inline SCREEN *synchat_newterm(void) {
    return newterm(NULL, stdout, stdin);
}

/// Whether terminfo says the terminal type `term` can move the cursor to any place
/// (capability `cup`), as a full-screen program needs: 1 yes, 0 no (`dumb`, say), -1 terminfo
/// does not know `term`. Reads the description only, writes nothing to the terminal, and
/// frees it again.
static inline int synchat_can_address_cursor(const char *term) {
    int status = 0;
    if (setupterm(term, STDOUT_FILENO, &status) != OK) return -1;
    const char *cup = tigetstr("cup");
    int addressable = cup != NULL && cup != (char *)-1;
    del_curterm(cur_term);
    return addressable;
}

/// The key codes the terminal's bracketed paste is read as (its `ESC [200~` and `ESC [201~`,
/// defined with `define_key`): past every code curses has of its own.
static inline int synchat_key_paste_start(void) { return KEY_MAX + 1; }
static inline int synchat_key_paste_end(void) { return KEY_MAX + 2; }
/// Focus reporting's `ESC [I` (focus in) and `ESC [O` (focus out).
static inline int synchat_key_focus_in(void) { return KEY_MAX + 3; }
static inline int synchat_key_focus_out(void) { return KEY_MAX + 4; }

/// Bracketed paste and focus reporting off again (they are on while the TUI runs), as a
/// signal handler may: one write.
static inline void synchat_paste_mode_off(void) {
    static const char off[] = "\033[?2004l\033[?1004l";
    ssize_t written = write(STDOUT_FILENO, off, sizeof off - 1);
    (void)written;
}

/// SIGINT, SIGTERM, SIGHUP, SIGQUIT: put the terminal back, then exit 128+signal.
static void synchat_on_signal(int sig) {
    endwin();
    synchat_paste_mode_off();
    _exit(128 + sig);
}

/// A crash (a Swift trap is SIGILL or SIGTRAP): put the terminal back, then die of the
/// same signal so that the crash is still reported as one.
static void synchat_on_fatal(int sig) {
    endwin();
    synchat_paste_mode_off();
    signal(sig, SIG_DFL);
    raise(sig);
}

static inline void synchat_install_signal_handlers(void) {
    signal(SIGINT, synchat_on_signal);
    signal(SIGTERM, synchat_on_signal);
    signal(SIGHUP, synchat_on_signal);
    signal(SIGQUIT, synchat_on_signal);
    signal(SIGILL, synchat_on_fatal);
    signal(SIGTRAP, synchat_on_fatal);
    signal(SIGABRT, synchat_on_fatal);
    signal(SIGSEGV, synchat_on_fatal);
    signal(SIGBUS, synchat_on_fatal);
    signal(SIGFPE, synchat_on_fatal);
}

/// A pseudo-terminal for `synchat --cast` (the chat runs on it, recorded): the master's
/// descriptor (close-on-exec), its slave's path in `name`; -1 when there is none. Declared
/// here: the C library hides them without _XOPEN_SOURCE 600 / _GNU_SOURCE.
int posix_openpt(int flags);
int grantpt(int fd);
int unlockpt(int fd);
int ptsname_r(int fd, char *buf, size_t buflen);
int pipe2(int pipefd[2], int flags);
static inline int synchat_open_pty(char *name, size_t size) {
    int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0) return -1;
    if (grantpt(master) != 0 || unlockpt(master) != 0 || ptsname_r(master, name, size) != 0) { close(master); return -1; }
    return master;
}
/// A pipe whose ends close on exec (and do not block, when asked).
static inline int synchat_pipe(int fds[2], int nonblocking) {
    return pipe2(fds, O_CLOEXEC | (nonblocking ? O_NONBLOCK : 0));
}

#endif
