#!/usr/bin/env bash
# Installs the programs the sandbox red-team tests (crates/reagent-sandbox/tests) drive
# from inside the sandbox: python3, perl and xxd are required (tests fail loudly without
# them); curl, wget, nc, ssh, dig, gdb, git, procps and util-linux add attack variants.
# bubblewrap is optional: `reagent doctor` reports it, no test depends on it.
# The hub's network-namespace fault test (crates/reagent-cli/tests/hub_faults.rs) needs `ip` (iproute2).
# The store's tests need PostgreSQL 15 (Debian's postgresql-15: initdb, pg_ctl; the tests start
# a private cluster themselves) and the HTML export test needs chromium (headless screenshot).
# The dashboard's browser test (crates/reagent-server/tests/dashboard.rs) needs chromium, node
# and npm, and playwright-core from npm (pinned in that test's package-lock.json; installed at
# the end of this script into crates/reagent-server/tests/dashboard/node_modules).
# The store's SQLite lock test (crates/reagent-cli/tests/store_outages.rs) holds a lock with the
# `sqlite3` command; the console's end-to-end tests (crates/reagent-cli/tests/chat_tmux.rs) need tmux.
# Debian/Ubuntu only (apt-get). Idempotent: installs only what is missing.
# Also installs ollama-openai-proxy (PyPI) into a venv in the cache, for the feature-fallback
# test against a third-party implementation of the Ollama API (see the end of this script).
set -euo pipefail

# command -> Debian package
declare -A PKG=(
  [python3]=python3 [perl]=perl [xxd]=xxd [gdb]=gdb [curl]=curl [wget]=wget
  [nc]=netcat-openbsd [ssh]=openssh-client [dig]=dnsutils [git]=git
  [pkill]=procps [setsid]=util-linux [fallocate]=util-linux [bwrap]=bubblewrap [ip]=iproute2
  [chromium]=chromium [createdb]=postgresql-client-15 [node]=nodejs [npm]=npm [tmux]=tmux [sqlite3]=sqlite3
)

missing=()
for cmd in "${!PKG[@]}"; do
  if ! command -v "$cmd" >/dev/null 2>&1 && [ ! -x "/usr/bin/$cmd" ]; then
    missing+=("${PKG[$cmd]}")
  fi
done
# initdb and pg_ctl live in /usr/lib/postgresql/VERSION/bin, not on PATH.
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
  missing+=(postgresql-15)
fi
if [ ${#missing[@]} -eq 0 ]; then
  echo "test dependencies: all present" >&2
else
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  echo "test dependencies: installing ${missing[*]}" >&2

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
fi

# ollama-openai-proxy (PyPI): a third-party implementation of the Ollama API over an
# OpenAI-compatible server, which accepts only "json" in `format`. The real-model test of the
# feature fallback runs reagent against it over llama-server
# (crates/reagent-cli/tests/e2e_ollama_proxy.rs). It goes into a venv in the cache. Its 0.7.0
# wheel installs its modules at the top level of site-packages but imports them as `src.*`,
# so `shim/src` links to site-packages and the test puts `shim` on PYTHONPATH.
PROXY_DIR="${REAGENT_CACHE:-$HOME/.cache/reagent}/ollama-proxy"
PROXY_VERSION="${OLLAMA_PROXY_VERSION:-0.7.0}"
if [ -x "$PROXY_DIR/bin/python" ] && [ -e "$PROXY_DIR/shim/src/main.py" ]; then
  echo "ollama-openai-proxy: present" >&2
else
  echo "ollama-openai-proxy: installing $PROXY_VERSION into $PROXY_DIR" >&2
  python3 -m venv "$PROXY_DIR"
  "$PROXY_DIR/bin/pip" install -q "ollama-openai-proxy==$PROXY_VERSION" >&2
  site=$("$PROXY_DIR/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  mkdir -p "$PROXY_DIR/shim"
  ln -sfn "$site" "$PROXY_DIR/shim/src"
fi

# playwright-core (npm) for the dashboard's browser test, exactly as package-lock.json pins it.
# It drives Debian's /usr/bin/chromium (no browser download).
DASH_DIR="$(cd "$(dirname "$0")/.." && pwd)/crates/reagent-server/tests/dashboard"
DASH_WANT=$(sed -n 's/.*"playwright-core": "\(.*\)".*/\1/p' "$DASH_DIR/package.json")
DASH_HAVE=$(sed -n 's/^  "version": "\(.*\)".*/\1/p' "$DASH_DIR/node_modules/playwright-core/package.json" 2>/dev/null || true)
if [ -n "$DASH_WANT" ] && [ "$DASH_HAVE" = "$DASH_WANT" ]; then
  echo "playwright-core: present ($DASH_HAVE)" >&2
else
  echo "playwright-core: installing $DASH_WANT into $DASH_DIR/node_modules" >&2
  (cd "$DASH_DIR" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error >&2)
fi

# ---- MCP (crates/reagent-mcp, crates/reagent-cli/tests/mcp.rs) ----------------------------
# The npm reference filesystem server, exactly as crates/reagent-mcp/tests/npm/package-lock.json
# pins it, and the official Python MCP SDK (an independent client of `reagent mcp serve`) in a
# venv in the cache.
MCP_NPM_DIR="$(cd "$(dirname "$0")/.." && pwd)/crates/reagent-mcp/tests/npm"
MCP_NPM_WANT=$(sed -n 's/.*"@modelcontextprotocol\/server-filesystem": "\(.*\)".*/\1/p' "$MCP_NPM_DIR/package.json")
MCP_NPM_HAVE=$(sed -n 's/^  "version": "\(.*\)".*/\1/p' "$MCP_NPM_DIR/node_modules/@modelcontextprotocol/server-filesystem/package.json" 2>/dev/null || true)
if [ -n "$MCP_NPM_WANT" ] && [ "$MCP_NPM_HAVE" = "$MCP_NPM_WANT" ]; then
  echo "@modelcontextprotocol/server-filesystem: present ($MCP_NPM_HAVE)" >&2
else
  echo "@modelcontextprotocol/server-filesystem: installing $MCP_NPM_WANT into $MCP_NPM_DIR/node_modules" >&2
  (cd "$MCP_NPM_DIR" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
MCP_PY_DIR="${REAGENT_CACHE:-$HOME/.cache/reagent}/mcp-python"
MCP_PY_VERSION="${MCP_PYTHON_VERSION:-2.3.0}"
if [ -x "$MCP_PY_DIR/bin/python" ] && "$MCP_PY_DIR/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$MCP_PY_VERSION')" 2>/dev/null; then
  echo "mcp (Python SDK): present ($MCP_PY_VERSION)" >&2
else
  echo "mcp (Python SDK): installing $MCP_PY_VERSION into $MCP_PY_DIR" >&2
  python3 -m venv "$MCP_PY_DIR"
  "$MCP_PY_DIR/bin/pip" install -q "mcp==$MCP_PY_VERSION" >&2
fi
