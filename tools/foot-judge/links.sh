#!/usr/bin/env bash
# The graphical judge of links (docs/screen.md#links): synchat in foot 1.13 under a headless
# sway; a message holds a URL too long for its row (cut over two rows, indented) and a mailto.
# wtype (a virtual keyboard) opens foot's URL mode (Control+Shift+u) and types each jump
# label in turn; foot's `[url] launch` command, set to append the URL to a file, records what
# each label opens. With links (OSC 8) the long URL opens whole, from one label; with
# --links off foot's own URL detection sees only the first row's part, and the judge says so
# (it shows the judge can tell them apart). A screenshot of URL mode is left for a person.
#
#   tools/foot-judge/links.sh [SYNCHAT_BINARY] [OUT_DIR]
#
# Needs foot, sway, grim and wtype. As root, it runs as the user synchat-judge (see run.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="$(realpath "${1:-$root/.build/debug/synchat}")"
out="$(realpath -m "${2:-$root/.build/foot-judge}")"
for tool in foot sway grim wtype; do
  command -v "$tool" >/dev/null || { echo "links-judge: $tool is missing (apt-get install foot sway grim wtype)" >&2; exit 2; }
done
[ -x "$bin" ] || { echo "links-judge: no synchat at $bin (swift build first)" >&2; exit 2; }
work="$(mktemp -d /tmp/synchat-links-judge.XXXXXX)"
chmod 755 "$work"
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
mkdir -p "$out"

long="https://example.com/aaaaaaaaaa/bbbbbbbbbb/cccccccccc/dddddddddd/eeeeeeeeee/ffffffffff/gggggggggg/end.html"
cat > "$work/u.scenario" <<SCENARIO
seed 1
duration 10m
contacts 2
traffic 0/h
at 3s receive alice "the doc $long and mail mailto:ana@example.org."
at 4s open alice
SCENARIO
cat > "$work/open.sh" <<OPEN
#!/bin/sh
printf '%s\n' "\$1" >> "$work/opened-\$LINKS_RUN"
OPEN
chmod 755 "$work/open.sh"
mkdir -p "$work/config/foot"
printf '[main]\nfont=monospace:size=11\n[url]\nlaunch=%s ${url}\nlabel-letters=abcdef\n' "$work/open.sh" > "$work/config/foot/foot.ini"

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
for run in on off; do
  LINKS_RUN=\$run foot "$bin" --ephemeral --speed 10 --links \$run --log "$work/log-\$run.txt" --scenario "$work/u.scenario" > "$work/foot-\$run.log" 2>&1 &
  foot=\$!
  for i in \$(seq 200); do grep -q 'world: open alice' "$work/log-\$run.txt" 2>/dev/null && break; sleep 0.1; done
  sleep 1
  # One wtype a step: its virtual keyboard comes and goes with it, and a key sent as it
  # comes may be lost, so each step waits a little first.
  wtype -s 300 -M ctrl -M shift -k u -m shift -m ctrl -s 500; grim "$work/url-mode-\$run.png"
  wtype -s 300 -k Escape -s 300
  for label in a b c d; do
    wtype -s 300 -M ctrl -M shift -k u -m shift -m ctrl -s 500 \$label -s 300
    wtype -s 300 -k Escape -s 200
  done
  kill \$foot 2>/dev/null; wait \$foot 2>/dev/null
done
kill \$sway
INSIDE
chmod 755 "$work/inside.sh"
. "$here/inside.sh"
run_inside "$work"
for run in on off; do
  touch "$work/opened-$run"
  [ -s "$work/url-mode-$run.png" ] && cp "$work/url-mode-$run.png" "$out/links-$run.png"
  echo "links-judge (--links $run): foot's URL mode opened:"
  sed 's/^/  /' "$work/opened-$run"
done
failed=0
if [ "$(grep -cxF "$long" "$work/opened-on")" -ne 1 ] || ! grep -qxF "mailto:ana@example.org" "$work/opened-on"; then
  echo "links-judge: with links, the URL cut over two rows must open whole from one label, and the mailto too" >&2; failed=1
fi
if grep -qxF "$long" "$work/opened-off"; then
  echo "links-judge: with --links off foot opened the whole URL: the judge cannot tell links from foot's own detection" >&2; failed=1
fi
echo "links-judge: screenshots $out/links-on.png and $out/links-off.png (URL mode: one label on the wrapped link)"
exit $failed
