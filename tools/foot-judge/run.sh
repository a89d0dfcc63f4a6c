#!/usr/bin/env bash
# The graphical judge of emoji widths (docs/screen.md#emoji): synchat in foot (Debian's 1.13)
# under a headless sway, screenshotted with grim. foot 1.13 shapes an emoji sequence into one
# glyph but advances its cursor by the sum of its code points' widths; only a layout measured
# on it stays straight. Prints what synchat's probe found there, checks on the screenshot that
# the list's border is one straight line, and leaves the PNG for a person to look at.
#
#   tools/foot-judge/run.sh [SYNCHAT_BINARY] [OUT_DIR]
#
# Needs foot, sway, grim and fonts-noto-color-emoji (apt-get install foot sway grim
# fonts-noto-color-emoji). sway refuses to run as root: as root, the judge runs as the user
# synchat-judge (made if missing, with no login and no home of its own).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="$(realpath "${1:-$root/.build/debug/synchat}")"
out="$(realpath -m "${2:-$root/.build/foot-judge}")"
for tool in foot sway grim; do
  command -v "$tool" >/dev/null || { echo "foot-judge: $tool is missing (apt-get install foot sway grim fonts-noto-color-emoji)" >&2; exit 2; }
done
[ -e /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf ] || { echo "foot-judge: fonts-noto-color-emoji is missing" >&2; exit 2; }
[ -x "$bin" ] || { echo "foot-judge: no synchat at $bin (swift build first)" >&2; exit 2; }

work="$(mktemp -d /tmp/synchat-foot-judge.XXXXXX)"
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

# The sequences the width probe measures and more, as message bodies and in a name. Each is
# followed by a space and a sentinel `│`: a sequence the terminal advances further than the
# layout gave it wipes the cells after it, its sentinel with them (border.py counts them).
cat > "$work/emoji.scenario" <<'SCENARIO'
seed 1
duration 10m
contacts 2
traffic 0/h
at 5s receive alice "flag 🇩🇪 │ thumb 👍🏽 │ end"
at 6s receive alice "family 👨‍👩‍👧 │ end"
at 7s receive alice "heart ❤️ │ rainbow 🏳️‍🌈 │ end"
at 8s receive alice "coder 🧑🏾‍💻 │ keycap 1️⃣ │ end"
at 9s receive alice "scotland 🏴󠁧󠁢󠁳󠁣󠁴󠁿 │ kiss 🧑🏾‍❤️‍💋‍🧑🏽 │ end"
at 10s contact bob "Bob 🧑🏾‍💻"
at 11s receive bob "from 🧑🏾‍💻 with 👍🏽"
at 12s open alice
SCENARIO

cat > "$work/inside.sh" <<INSIDE
#!/usr/bin/env bash
set -u
export XDG_RUNTIME_DIR="$work/xdg" HOME="$work" WLR_BACKENDS=headless WLR_RENDERER=pixman WLR_LIBINPUT_NO_DEVICES=1
mkdir -p "\$XDG_RUNTIME_DIR"; chmod 700 "\$XDG_RUNTIME_DIR"
printf 'output HEADLESS-1 resolution 1280x800\ndefault_border none\n' > "$work/sway.conf"
sway -c "$work/sway.conf" > "$work/sway.log" 2>&1 &
sway=\$!
for i in \$(seq 100); do ls "\$XDG_RUNTIME_DIR"/wayland-[0-9] >/dev/null 2>&1 && break; sleep 0.1; done
export WAYLAND_DISPLAY="\$(basename "\$(ls "\$XDG_RUNTIME_DIR"/wayland-[0-9] | head -1)")"
foot -o font=monospace:size=12 "$bin" --ephemeral --speed 20 --log "$work/log.txt" --scenario "$work/emoji.scenario" > "$work/foot.log" 2>&1 &
# The script's last message (11 s at x20, a second of wall time), then a few frames.
for i in \$(seq 200); do grep -q 'world: receive bob' "$work/log.txt" 2>/dev/null && break; sleep 0.1; done
sleep 2
grim "$work/foot.png"
kill \$sway
INSIDE
chmod 755 "$work/inside.sh"

. "$here/inside.sh"
run_inside "$work"
[ -s "$work/foot.png" ] || { echo "foot-judge: no screenshot (sway: $(tail -3 "$work/sway.log"))" >&2; exit 1; }
cp "$work/foot.png" "$out/foot.png"
echo "foot-judge: $(foot --version 2>/dev/null | head -1)"
echo "foot-judge: the probe found: $(head -1 "$work/log.txt" | sed 's/^# //')"
python3 "$here/border.py" "$out/foot.png" 9
echo "foot-judge: screenshot $out/foot.png (look at it: each sequence one glyph in the cells the layout gave it)"
