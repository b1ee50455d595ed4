#!/usr/bin/env bash
# Installs what shingle needs from Debian's packages (only what is missing) and
# builds the C core and the Lua module for Lua 5.4, 5.3 and LuaJIT 2.1 into
# build/<version>. Safe to run again: it only does what is not done yet.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(build-essential cmake pkg-config zlib1g-dev libzstd-dev zstd libutf8proc-dev liblmdb-dev libxxhash-dev
          lua5.4 liblua5.4-dev lua5.3 liblua5.3-dev luajit2 libluajit2-5.1-dev
          lua-busted lua-argparse lua-cjson lua-filesystem luarocks
          nginx libnginx-mod-http-lua curl lmdb-utils wrk  # shingle serve, its spec (curl, mdb_load) and bench/serve_bench.lua (wrk)
          openmpi-bin libopenmpi-dev  # shingle cluster --mpi (shingle/mpi.so, docs/scale-out.md)
          clang libclang-rt-14-dev # the libFuzzer targets (scripts/fuzz.sh)
          libxml2-doc   # libxml2-doc: the HTML manual mirrored by spec/collections_spec.lua
          rsyslog-doc   # the 318-page manual of the collections test bed (spec/mirrors.lua)
          libxml2-utils # xmllint: spec/report_spec.lua parses the reports' SVG
          locales)      # localedef: spec/writer_spec.lua writes numbers under a locale whose decimal point is ","
# headless Chromium for the reports in a real browser (scripts/browser/check.sh);
# SHINGLE_NO_BROWSER=1 (scripts/demo.sh) leaves it and Node.js out
[ "${SHINGLE_NO_BROWSER:-0}" = 1 ] || PACKAGES+=(chromium)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Debian starts the nginx service it installs (port 80, all addresses); shingle runs
  # its own nginx (shingle serve), so a service this script brought in is stopped again
  if [[ " ${missing[*]} " == *" nginx "* ]] && command -v systemctl >/dev/null && systemctl is-active --quiet nginx 2>/dev/null; then
    echo "setup: stopping and disabling the nginx service the package started (shingle serve runs its own)" >&2
    $SUDO systemctl disable --now nginx >/dev/null 2>&1 || true
  fi
fi

# The browser check drives Debian's chromium with playwright-core (no browser
# download), installed from scripts/browser/package-lock.json with the
# machine's Node.js and npm, or Debian's when it has none.
if [ "${SHINGLE_NO_BROWSER:-0}" = 1 ]; then
  :
elif ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "setup: installing nodejs npm" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
if [ "${SHINGLE_NO_BROWSER:-0}" != 1 ] && [ ! -f scripts/browser/node_modules/playwright-core/package.json ]; then
  (cd scripts/browser && npm ci --no-audit --no-fund >/dev/null 2>&1) ||
    echo "setup: npm ci in scripts/browser failed: the browser check will fail" >&2
fi

build() { # build DIR LUA [extra cmake args]
  local dir=$1 lua=$2; shift 2
  cmake -S . -B "$dir" -DSHINGLE_LUA="$lua" -DSHINGLE_WERROR=ON "$@" >/dev/null
  cmake --build "$dir" -j"$(nproc)" >/dev/null
}

build build/5.4 5.4
if [ "${SHINGLE_ONLY_54:-0}" != 1 ]; then
  build build/5.3 5.3
  build build/jit jit
elif pkg-config --exists luajit; then
  # the demo's build: LuaJIT too when it is installed (OpenResty's nginx runs shingle under it)
  build build/jit jit
fi
