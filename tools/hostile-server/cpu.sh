#!/bin/bash
# A synchat bot against every mode of the hostile server (TestData/conformance/hostile_server.py),
# all modes at once, 100 s each: its CPU from the 60th to the 100th second and its peak resident
# memory (docs/benchmarks.md, issue 52). Usage: tools/hostile-server/cpu.sh [SYNCHAT-BINARY]
# (default: the release build, .build/release/synchat).
set -u
cd "$(dirname "$0")/../.."
bin=${1:-.build/release/synchat}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for mode in endless-join absurd-clock endless-answers escapes silent-sockets endless-pages contacts-flood directives; do
  (
    python3 TestData/conformance/hostile_server.py "$mode" > "$out/$mode.server" 2>&1 &
    sp=$!
    for _ in $(seq 100); do grep -q "port" "$out/$mode.server" && break; sleep 0.1; done
    port=$(grep -o "port [0-9]*" "$out/$mode.server" | head -1 | cut -d" " -f2)
    XDG_DATA_HOME="$out/$mode-data" HOME="$out" "$bin" bot --server "http://127.0.0.1:$port" --user zed --for 100 \
      --report "$out/$mode.json" > "$out/$mode.out" 2> "$out/$mode.err" &
    bp=$!
    sleep 60
    if kill -0 "$bp" 2>/dev/null; then
      a=$(awk '{print $14+$15}' "/proc/$bp/stat"); sleep 40
      b=$(awk '{print $14+$15}' "/proc/$bp/stat" 2>/dev/null || echo "$a")
      hwm=$(grep VmHWM "/proc/$bp/status" 2>/dev/null | awk '{print $2}')
      line=$(printf '%-16s CPU %5.1f %% (60-100 s)   peak RSS %6.1f MB' "$mode" "$(echo "($b - $a) / 40" | bc -l)" "$(echo "${hwm:-0} / 1024" | bc -l)")
    else
      line=$(printf '%-16s refused before 60 s (as it should: one line, exit 1)' "$mode")
    fi
    wait "$bp"; rc=$?
    echo "$line   exit $rc" > "$out/$mode.line"
    kill "$sp" 2>/dev/null
  ) &
done
wait
cat "$out"/*.line
