#!/usr/bin/env bash
# Installs the programs the sandbox red-team tests (crates/reagent-sandbox/tests) drive
# from inside the sandbox: python3, perl and xxd are required (tests fail loudly without
# them); curl, wget, nc, ssh, dig, gdb, git, procps and util-linux add attack variants.
# bubblewrap is optional: `reagent doctor` reports it, no test depends on it.
# Debian/Ubuntu only (apt-get). Idempotent: installs only what is missing.
set -euo pipefail

# command -> Debian package
declare -A PKG=(
  [python3]=python3 [perl]=perl [xxd]=xxd [gdb]=gdb [curl]=curl [wget]=wget
  [nc]=netcat-openbsd [ssh]=openssh-client [dig]=dnsutils [git]=git
  [pkill]=procps [setsid]=util-linux [fallocate]=util-linux [bwrap]=bubblewrap
)

missing=()
for cmd in "${!PKG[@]}"; do
  if ! command -v "$cmd" >/dev/null 2>&1 && [ ! -x "/usr/bin/$cmd" ]; then
    missing+=("${PKG[$cmd]}")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "sandbox test dependencies: all present" >&2
  exit 0
fi
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
echo "sandbox test dependencies: installing ${missing[*]}" >&2

if ! command -v apt-get >/dev/null 2>&1; then
  echo "apt-get not found: install ${missing[*]} with your package manager" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "not root and no sudo: install ${missing[*]} as root" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
