# Source this to use shingle from the checkout: Lua paths for the modules and
# the C module built by scripts/setup.sh for the given Lua (5.4 by default).
# shellcheck shell=bash
_shingle_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
_shingle_lua=${1:-5.4}
export LUA_PATH="$_shingle_root/lua/?.lua;$_shingle_root/lua/?/init.lua;${LUA_PATH:-;}"
export LUA_CPATH="$_shingle_root/build/$_shingle_lua/lib/?.so;${LUA_CPATH:-;}"
export PATH="$_shingle_root/bin:$PATH"
