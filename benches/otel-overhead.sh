#!/usr/bin/env bash
# CPU per iteration of `reagent run` without traces, with OTLP export to a collector that
# answers (a minimal receiver on 127.0.0.1), and with export plus --otlp-capture-content, against
# the scripted server (benches/src/server.rs), N tool-call iterations per run, REPEATS runs each,
# interleaved; also the OTLP bytes sent per run. Prints a table.
#   benches/otel-overhead.sh            N=150 REPEATS=7
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-150}
REPEATS=${REPEATS:-7}
cargo build --release -q -p reagent-cli -p reagent-bench
bin=target/release
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
"$bin/reagent-bench" prepare --dir "$tmp/ws" --files "$N"
"$bin/reagent-bench" serve > "$tmp/port" &
pids+=($!)
# The collector: accepts POST /v1/traces, adds each body's size to a file.
python3 - "$tmp/otlp-bytes" > "$tmp/otlp-port" <<'PY' &
import http.server, sys
out = sys.argv[1]
class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with open(out, "a") as f:
            f.write(f"{len(body)}\n")
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
print(server.server_address[1], flush=True)
server.serve_forever()
PY
pids+=($!)
for _ in $(seq 100); do [ -s "$tmp/port" ] && [ -s "$tmp/otlp-port" ] && break; sleep 0.1; done
port=$(cat "$tmp/port")
otlp="http://127.0.0.1:$(cat "$tmp/otlp-port")"

# CPU seconds (user + system) of one run.
one_run() {
  local TIMEFORMAT='%U %S'
  { time "$bin/reagent" "$@" run --model "bench-$N" --host "http://127.0.0.1:$port" \
      --workspace "$tmp/ws" --quiet --no-store --num-ctx 1048576 --max-iterations $((N + 5)) \
      "Read every file, then answer." > /dev/null 2> "$tmp/err"; } 2> "$tmp/time" \
    || { cat "$tmp/err" >&2; exit 1; }
  awk '{print $1 + $2}' "$tmp/time"
}
# OTLP bytes received since the last call.
sent() { local total; total=$(awk '{s += $1} END {print s + 0}' "$tmp/otlp-bytes" 2>/dev/null || echo 0); : > "$tmp/otlp-bytes"; echo "$total"; }

: > "$tmp/off"; : > "$tmp/on"; : > "$tmp/content"; : > "$tmp/on-bytes"; : > "$tmp/content-bytes"
for _ in $(seq "$REPEATS"); do
  one_run >> "$tmp/off"
  sent > /dev/null
  one_run --otlp-endpoint "$otlp" >> "$tmp/on"
  sent >> "$tmp/on-bytes"
  one_run --otlp-endpoint "$otlp" --otlp-capture-content >> "$tmp/content"
  sent >> "$tmp/content-bytes"
done
median() { sort -g "$1" | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
printf '| N | runs each | no traces CPU/iteration | OTLP export | export + content | OTLP bytes/run (content) |\n'
printf '|---|---|---|---|---|---|\n'
awk -v n="$N" -v r="$REPEATS" -v off="$(median "$tmp/off")" -v on="$(median "$tmp/on")" \
  -v c="$(median "$tmp/content")" -v b="$(median "$tmp/on-bytes")" -v cb="$(median "$tmp/content-bytes")" 'BEGIN {
  printf "| %d | %d | %.3f ms | %.3f ms (%.2fx) | %.3f ms (%.2fx) | %d (%d) |\n",
    n, r, off * 1000 / n, on * 1000 / n, on / off, c * 1000 / n, c / off, b, cb }'
