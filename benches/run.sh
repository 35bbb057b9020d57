#!/usr/bin/env bash
# Runtime cost of reagent against the Python peers (issue 6), measured in one run.
#
#   benches/run.sh           full run: release build; N = 10, 50, 150 (3 repeats each); 1,000
#                            concurrent runs; prompt cache against llama-server when installed.
#                            Prints the markdown report and writes benches/RESULTS.md and the
#                            "## Runtime cost vs peers" section of BENCHMARKS.md (other sections
#                            are kept). Run it on a quiet machine (see `uptime`).
#   benches/run.sh --smoke   CI: debug build, tiny counts, every agent (reagent and the three
#                            peers); writes nothing, asserts no timing; exits non-zero if the
#                            build, the peers' install or any agent's run fails.
#
#   benches/run.sh --store-only --repeats 15
#                            issue 28's store cost alone: reagent with the run store on and with
#                            `--no-store`, interleaved, N = 10, 50, 150; prints store on / off per
#                            N against the targets (≤ +50% at N=10, ≤ +25% at N=150) and says
#                            whether each is met. No peers (no venv), writes nothing.
#
# Extra arguments go to benches/bench.py (e.g. `--repeats 5`, `--peers ollama`, `--no-cache`).
# The prompt-cache runs take ~7 minutes on 2 cores (llama-server) and their token counts do not
# depend on the load, so they can be made apart and reused:
#   benches/run.sh --cache-only benches/cache-results.json
#   benches/run.sh --cache-json benches/cache-results.json   # the rest, on a quiet machine
# The peers are installed from PyPI into benches/.venv (pinned in benches/requirements.txt;
# reinstalled when that file changes). PYTHON picks the interpreter for the venv (>= 3.10).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
cd "$root"

smoke=0
store_only=0
for a in "$@"; do
  if [ "$a" = --smoke ]; then smoke=1; fi
  if [ "$a" = --store-only ]; then store_only=1; fi
done

target="${CARGO_TARGET_DIR:-$root/target}"
if [ "$smoke" = 1 ]; then
  # Timings are not looked at: reuse the debug build CI makes anyway.
  cargo build --quiet -p reagent-bench
  bin="$target/debug/reagent-bench"
  extra=()
else
  cargo build --quiet --release -p reagent-bench
  bin="$target/release/reagent-bench"
  extra=(--write)
fi

if [ "$store_only" = 1 ]; then
  # No peer runs: no venv needed.
  exec "${PYTHON:-python3}" "$here/bench.py" --bin "$bin" --python "${PYTHON:-python3}" \
    --command "benches/run.sh${*:+ $*}" "$@"
fi

venv="$here/.venv"
req="$here/requirements.txt"
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$req" | cut -d' ' -f1)"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
  t0=$(date +%s)
  "${PYTHON:-python3}" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --retries 5 --timeout 60 -r "$req"
  echo "$want" > "$stamp"
  echo "run.sh: peers installed into benches/.venv in $(( $(date +%s) - t0 )) s" >&2
fi

exec "$venv/bin/python" "$here/bench.py" --bin "$bin" --python "$venv/bin/python" \
  --command "benches/run.sh${*:+ $*}" "${extra[@]}" "$@"
