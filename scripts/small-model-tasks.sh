#!/usr/bin/env bash
# Measure what the loop makes of SmolLM2-135M on five small workspace tasks (BENCHMARKS.md,
# "Small models: what the loop changes do").
#
#   scripts/small-model-tasks.sh REAGENT_BINARY [MODES...]      (modes default: constrained prompt)
#   TASKS="notes config" scripts/small-model-tasks.sh ...           (a subset of the tasks)
#
# Starts llama-server (~/.cache/reagent, installed by scripts/install-model-server.sh) on
# 127.0.0.1 with --jinja --seed 1 -c 2048, runs each task in each mode with temperature 0, and
# prints one line per run: mode, task, outcome, exit code, whether the answer holds the expected
# fact, tool calls, wall seconds, and the answer's first 120 characters.
set -euo pipefail
bin=${1:?usage: $0 REAGENT_BINARY [MODES...]}
shift
modes=("$@")
[ ${#modes[@]} -eq 0 ] && modes=(constrained prompt)
cache=${REAGENT_CACHE:-$HOME/.cache/reagent}
server=${REAGENT_LLAMA_SERVER:-$cache/bin/llama-server}
model=${REAGENT_MODEL_FILE:-$cache/models/SmolLM2-135M-Instruct.Q4_1.gguf}
port=${PORT:-18431}
work=$(mktemp -d)
"$server" -m "$model" --host 127.0.0.1 --port "$port" --jinja --seed 1 -c 2048 --parallel 1 \
  --alias SmolLM2-135M-Instruct --no-webui --threads "${THREADS:-2}" >"$work/server.log" 2>&1 &
server_pid=$!
trap 'kill $server_pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 120); do
  curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
  sleep 1
done

make_ws() { # name -> directory
  local d="$work/ws-$1-$RANDOM"
  mkdir -p "$d"
  case $1 in
  notes) printf 'orchid\nsecond line\nthird line\n' >"$d/notes.txt" ;;
  config) printf 'name = "demo"\nport = 8080\nhost = "localhost"\n' >"$d/config.toml" ;;
  keeper) printf 'The lighthouse keeper is named Ines Calloway.\nShe lights the lamp every evening at dusk.\n' >"$d/keeper.txt"
    printf '# Demo\nA small workspace.\n' >"$d/README.md" ;;
  colour) printf 'The secret colour is teal.\n' >"$d/favourite.txt"
    printf 'shopping: milk, eggs\n' >"$d/list.txt" ;;
  biglog) for i in $(seq 4000); do
      if [ "$i" = 2718 ]; then echo "2026-11-23 10:00:$((i % 60)) ERROR code=E4711 disk full on /var"
      else echo "2026-11-23 10:00:$((i % 60)) INFO request $i served in 12 ms"; fi
    done >"$d/big.log" ;;
  esac
  echo "$d"
}
declare -A task=(
  [notes]="Read the file notes.txt and tell me its first line."
  [config]="Read the file config.toml and tell me the value of port."
  [keeper]="Read the file keeper.txt and tell me the name of the lighthouse keeper."
  [colour]="Read the file favourite.txt and tell me the secret colour."
  [biglog]="Find the ERROR line in big.log and tell me its error code."
)
declare -A fact=([notes]=orchid [config]=8080 [keeper]="Ines Calloway" [colour]=teal [biglog]=E4711)

for mode in "${modes[@]}"; do
  for t in ${TASKS:-notes config keeper colour biglog}; do
    ws=$(make_ws "$t")
    start=$(date +%s.%N)
    set +e
    out=$("$bin" run --provider openai --base-url "http://127.0.0.1:$port/v1" \
      --model SmolLM2-135M-Instruct --workspace "$ws" --tool-mode "$mode" --read-only \
      --no-stream --num-ctx 2048 --temperature 0 --seed 1 --max-iterations 8 --timeout 200 \
      --json --quiet "${task[$t]}" 2>/dev/null)
    code=$?
    set -e
    secs=$(echo "$(date +%s.%N) - $start" | bc)
    outcome=$(jq -r .outcome <<<"$out" 2>/dev/null || echo none)
    answer=$(jq -r .answer <<<"$out" 2>/dev/null | tr '\n' ' ' || true)
    calls=$(jq -r .tool_calls <<<"$out" 2>/dev/null || echo -)
    right=no
    grep -qF "${fact[$t]}" <<<"$answer" && right=yes
    printf '%-11s %-7s %-16s exit=%s right=%-3s calls=%-2s %5.1fs  %s\n' "$mode" "$t" "$outcome" \
      "$code" "$right" "$calls" "$secs" "${answer:0:120}"
  done
done
