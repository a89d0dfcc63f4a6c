#!/usr/bin/env bash
# The graphical judge of desktop notifications (docs/screen.md#desktop-notifications): synchat
# in foot 1.13 (which speaks OSC 777) under a headless sway, foot's `notify` command set to
# append `TITLE|BODY` to a file, with notify-focus-inhibit=no so that the choice is synchat's.
# Then the same with tmux between them (allow-passthrough on): synchat asks tmux which terminal
# its client runs in and wraps the sequence in tmux's passthrough.
#
# A headless sway has no keyboard, so foot never has the keyboard focus and never reports it:
# synchat counts the window as unfocused and notifies (focus itself is judged in tmux by
# feeding CSI I / CSI O: NotifyEndToEndTests). What this judge checks: with --notify auto
# synchat chooses OSC 777 for foot, each message from a contact gives exactly one line with
# the contact's name, a muted contact none, and a hostile name and body arrive as plain text,
# whole.
#
#   tools/foot-judge/notify.sh [SYNCHAT_BINARY]
#
# Needs foot, sway and tmux. As root, it runs as the user synchat-judge (see run.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="$(realpath "${1:-$root/.build/debug/synchat}")"
for tool in foot sway tmux; do
  command -v "$tool" >/dev/null || { echo "notify-judge: $tool is missing (apt-get install foot sway tmux)" >&2; exit 2; }
done
[ -x "$bin" ] || { echo "notify-judge: no synchat at $bin (swift build first)" >&2; exit 2; }

work="$(mktemp -d /tmp/synchat-notify-judge.XXXXXX)"
chmod 755 "$work"
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

# carol is muted before she writes; bob's name and message carry escapes (OSC 52, a title, BEL).
cat > "$work/n.scenario" <<'SCENARIO'
seed 1
duration 10m
contacts 3
traffic 0/h
at 1s mute carol
at 2s contact bob "Bob\e]0;pwned\x07"
at 20s receive alice "lunch at one?"
at 30s receive carol "muted, never on the desktop"
at 40s receive bob "hi \e]52;c;cHduZWQ=\x07 there; semi;colons"
SCENARIO

# foot runs this with the notification's title and body as two arguments.
cat > "$work/note.sh" <<NOTE
#!/bin/sh
printf '%s|%s\n' "\$1" "\$2" >> "$work/notes-\$NOTIFY_RUN"
NOTE
chmod 755 "$work/note.sh"
mkdir -p "$work/config/foot"
printf '[main]\nfont=monospace:size=11\nnotify=%s ${title} ${body}\nnotify-focus-inhibit=no\n' "$work/note.sh" > "$work/config/foot/foot.ini"
# No focus-events: tmux would tell the pane its client has the focus (it cannot know better:
# foot without a keyboard never says), and a focused window gets no notification.
printf 'set -g allow-passthrough on\nset -g status off\nset -g default-shell /bin/sh\n' > "$work/tmux.conf"

cat > "$work/inside.sh" <<INSIDE
#!/usr/bin/env bash
set -u
export XDG_RUNTIME_DIR="$work/xdg" HOME="$work" XDG_CONFIG_HOME="$work/config" WLR_BACKENDS=headless WLR_RENDERER=pixman WLR_LIBINPUT_NO_DEVICES=1
mkdir -p "\$XDG_RUNTIME_DIR"; chmod 700 "\$XDG_RUNTIME_DIR"
printf 'output HEADLESS-1 resolution 1280x800\ndefault_border none\n' > "$work/sway.conf"
sway -c "$work/sway.conf" > "$work/sway.log" 2>&1 &
sway=\$!
for i in \$(seq 100); do ls "\$XDG_RUNTIME_DIR"/wayland-[0-9] >/dev/null 2>&1 && break; sleep 0.1; done
export WAYLAND_DISPLAY="\$(basename "\$(ls "\$XDG_RUNTIME_DIR"/wayland-[0-9] | head -1)")"
run() {  # NAME COMMAND...: one run in foot, until bob's message is in the log and 2 s more
  local name=\$1; shift
  NOTIFY_RUN=\$name foot "\$@" > "$work/foot-\$name.log" 2>&1 &
  local foot=\$!
  for i in \$(seq 300); do grep -q 'world: receive bob' "$work/log-\$name.txt" 2>/dev/null && break; sleep 0.1; done
  sleep 2
  kill \$foot 2>/dev/null; wait \$foot 2>/dev/null
}
run foot sh -c "'$bin' --ephemeral --speed 10 --log '$work/log-foot.txt' --scenario '$work/n.scenario' 2> '$work/err-foot.txt'"
run tmux tmux -L judge -f "$work/tmux.conf" new-session "$bin --ephemeral --speed 10 --log $work/log-tmux.txt --scenario $work/n.scenario"
tmux -L judge kill-server 2>/dev/null
kill \$sway
INSIDE
chmod 755 "$work/inside.sh"

. "$here/inside.sh"
run_inside "$work"

want_alice='Alice|lunch at one?'
want_bob='Bob^[]0,pwned^G|hi ^[]52;c;cHduZWQ=^G there; semi;colons'
failed=0
for name in foot tmux; do
  chosen="$(grep -m1 '^# notifications:' "$work/log-$name.txt" 2>/dev/null | sed 's/^# //' || true)"
  echo "notify-judge ($name): synchat chose: ${chosen:-nothing logged}"
  notes="$work/notes-$name"
  touch "$notes"
  echo "notify-judge ($name): foot ran its notify command $(wc -l < "$notes") times:"
  sed 's/^/  /' "$notes" | LC_ALL=C.UTF-8 cat -v
  if [ "$(wc -l < "$notes")" -ne 2 ] || ! grep -qxF "$want_alice" "$notes" || ! grep -qxF "$want_bob" "$notes"; then
    echo "notify-judge ($name): expected exactly two lines: '$want_alice' and '$want_bob' (none for muted carol)" >&2
    echo "notify-judge ($name): the last of foot's log:" >&2
    tail -3 "$work/foot-$name.log" | sed 's/^/  /' >&2
    failed=1
  fi
  if LC_ALL=C grep -q "$(printf '\033')\|$(printf '\007')" "$notes"; then
    echo "notify-judge ($name): a control character reached the notification" >&2
    failed=1
  fi
done
exit $failed
