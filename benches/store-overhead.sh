#!/usr/bin/env bash
# CPU of `reagent run` as a whole process with the run store on and with `--no-store`, against
# the scripted server (benches/src/server.rs), N tool-call iterations per run, REPEATS runs each,
# interleaved. The store-on runs share one SQLite store, as a user's runs share theirs: it is
# created (and migrated) by one unmeasured run first. Prints a table; the store's cost is the
# difference. benches/run.sh measures the same from inside the process (the run alone, after
# a warm-up: its "store on" rows).
#   benches/store-overhead.sh            N=150 REPEATS=7
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-150}
REPEATS=${REPEATS:-7}
cargo build --release -q -p reagent-cli -p reagent-bench
bin="${CARGO_TARGET_DIR:-target}/release"
tmp=$(mktemp -d)
srv=""
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$tmp"' EXIT
"$bin/reagent-bench" prepare --dir "$tmp/ws" --files "$N"
"$bin/reagent-bench" serve > "$tmp/port" &
srv=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
port=$(cat "$tmp/port")

# CPU seconds (user + system) of one run.
one_run() {
  local TIMEFORMAT='%U %S'
  { time "$bin/reagent" run --model "bench-$N" --host "http://127.0.0.1:$port" \
      --workspace "$tmp/ws" --quiet --num-ctx 1048576 --max-iterations $((N + 5)) \
      "$@" "Read every file, then answer." > /dev/null 2> "$tmp/err"; } 2> "$tmp/time" \
    || { cat "$tmp/err" >&2; exit 1; }
  awk '{print $1 + $2}' "$tmp/time"
}

: > "$tmp/on"; : > "$tmp/off"
one_run --store "$tmp/store.db" > /dev/null
for r in $(seq "$REPEATS"); do
  one_run --store "$tmp/store.db" >> "$tmp/on"
  one_run --no-store >> "$tmp/off"
done
median() { sort -g "$1" | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
on=$(median "$tmp/on"); off=$(median "$tmp/off")
events=$(sqlite3 "$tmp/store.db" \
  'select count(*) from events where run_id = (select id from runs order by started desc limit 1)' \
  2>/dev/null || echo "?")
printf '| N | runs each | --no-store CPU/iteration | store on CPU/iteration | store on / off | events stored per run |\n'
printf '|---|---|---|---|---|---|\n'
awk -v n="$N" -v r="$REPEATS" -v on="$on" -v off="$off" -v ev="$events" 'BEGIN {
  printf "| %d | %d | %.3f ms | %.3f ms | %.2fx | %s |\n", n, r, off * 1000 / n, on * 1000 / n, on / off, ev }'
