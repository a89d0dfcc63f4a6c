# Sourced by the foot judges: runs "$work/inside.sh" (the judge's sway and foot) in an
# environment of its own, so that what the machine's shell carries cannot change the verdict:
# no $TMUX or $TMUX_TMPDIR of an outer tmux, a UTF-8 locale, a shell that runs commands (the
# judge's user logs in with nologin, which tmux would take for its panes' shell). As root, it
# runs as the system user synchat-judge: sway and foot refuse to run as root.
run_inside() {  # WORK
  local work=$1
  local env=(env -i "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    LANG=C.UTF-8 SHELL=/bin/sh "KEEP=${KEEP:-}")
  if [ "$(id -u)" -eq 0 ]; then
    id synchat-judge >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin synchat-judge
    chown -R synchat-judge "$work"
    timeout 120 runuser -u synchat-judge -- "${env[@]}" "$work/inside.sh"
  else
    timeout 120 "${env[@]}" "$work/inside.sh"
  fi
}
