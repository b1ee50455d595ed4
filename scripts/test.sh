#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs every test: the C unit tests, the busted
# specs under Lua 5.4, 5.3 and LuaJIT, the HTML reports in headless Chromium
# (scripts/browser/check.sh), the C tests and the 5.4 specs again under
# AddressSanitizer + UndefinedBehaviorSanitizer, and a LuaRocks install into a
# scratch tree, and the libFuzzer targets (their kept inputs and a short run
# each, FUZZ_SECONDS = 10). Ends with one line "N passed, N failed" (test functions and
# specs added up) and exits non-zero if anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }

passed=0 failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

count_c() { # count_c LABEL BINARY...
  local label=$1; shift
  local t
  for t in "$@"; do
    "$t" >"$log" 2>&1
    local rc=$? line
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
    if [ -z "$line" ]; then
      echo "[$label] $(basename "$t"): crashed (exit $rc)"; tail -20 "$log"; failed=$((failed + 1)); continue
    fi
    local p f
    p=${line%% passed*}; f=${line#*, }; f=${f%% failed}
    passed=$((passed + p)); failed=$((failed + f))
    [ "$rc" -eq 0 ] && [ "$f" -eq 0 ] || { echo "[$label] $(basename "$t"): FAILED"; grep -v '^$' "$log" | tail -30; }
    [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && failed=$((failed + 1))
    echo "[$label] $(basename "$t"): $line"
  done
}

count_busted() { # count_busted LABEL LUA [busted options...] [env...]
  local label=$1 lua=$2; shift 2
  local opts=()
  while [ $# -gt 0 ] && [[ "$1" == --* ]]; do opts+=("$1"); shift; done
  env "$@" busted --lua="$lua" -o plainTerminal "${opts[@]}" >"$log" 2>&1
  local rc=$? line
  line=$(grep -E '^[0-9]+ successes? / [0-9]+ failures? / [0-9]+ errors?' "$log" | tail -1)
  if [ -z "$line" ]; then
    echo "[$label] busted did not finish (exit $rc)"; tail -30 "$log"; failed=$((failed + 1)); return
  fi
  local s f e
  read -r s _ _ f _ _ e _ <<<"$line"
  passed=$((passed + s)); failed=$((failed + f + e))
  echo "[$label] $line"
  [ $((f + e)) -eq 0 ] || sed -n '/^Failure\|^Error/,/^$/p' "$log" | head -60
}

count_c "C" build/5.4/test_*
count_busted "lua5.4" lua5.4
# the fault specs (#faults: kills, full disks, damaged pages; CLI processes,
# tens of seconds) run once, under Lua 5.4
count_busted "lua5.3" lua5.3 --exclude-tags=faults
count_busted "luajit" luajit --exclude-tags=faults

# The reports in headless Chromium: no console error, phone width, print, no JavaScript.
count_c "browser" scripts/browser/check.sh

# Each Lua module exports its luaopen_ function and nothing else, except
# core.so, which also carries the C API of core/include/shingle.h (shingle.ffi
# calls it there); libshingle.so exports the C API only (-fvisibility=hidden).
api=$(grep -oE '^SHINGLE_API [^(]*\bshingle_[a-z0-9_]+\(' core/include/shingle.h | grep -oE 'shingle_[a-z0-9_]+' | sort)
for so in build/{5.4,5.3,jit}/lib/shingle/{core,mpi}.so build/5.4/libshingle.so; do
  [ -f "$so" ] || continue
  syms=$(nm -D --defined-only "$so" | awk '{ print $NF }')
  case "${so##*/}" in
    core.so) want="luaopen_* and the C API"; extra=$(echo "$syms" | grep -v '^luaopen_' | grep -vxF "$api" || true)
             missing=$(echo "$api" | grep -vxF "$syms" || true) ;;
    libshingle.so) want="the C API"; extra=$(echo "$syms" | grep -vxF "$api" || true)
             missing=$(echo "$api" | grep -vxF "$syms" || true) ;;
    *) want="luaopen_*"; extra=$(echo "$syms" | grep -v '^luaopen_' || true); missing= ;;
  esac
  if [ -z "$extra" ] && [ -z "$missing" ]; then echo "[symbols] $so exports $want only"; passed=$((passed + 1))
  else echo "[symbols] $so: exports beyond $want: $(echo $extra | head -c 300); missing: $(echo $missing | head -c 300)"; failed=$((failed + 1)); fi
done

# The portable path alone (core/simd.h): a build without the SIMD code runs
# the C tests and the 5.4 specs; the default build runs its C tests and the
# SIMD spec with SHINGLE_SIMD=portable; and the sketches of the adversarial
# corpus (spec/simd_corpus.lua) must be the same, bit for bit, from the
# default build, from it with SHINGLE_SIMD=portable, and from the build
# without SIMD.
cmake -S . -B build/nosimd -DSHINGLE_LUA=5.4 -DSHINGLE_SIMD=OFF -DSHINGLE_WERROR=ON >/dev/null &&
  cmake --build build/nosimd -j"$(nproc)" >/dev/null || { echo "[nosimd] build failed"; failed=$((failed + 1)); }
if [ -d build/nosimd ]; then
  count_c "C nosimd" build/nosimd/test_*
  count_busted "lua5.4 nosimd" lua5.4 SHINGLE_BUILD=build/nosimd
fi
SHINGLE_SIMD=portable count_c "C SHINGLE_SIMD=portable" build/5.4/test_simd build/5.4/test_canon build/5.4/test_shingler
d_simd=$(lua5.4 spec/simd_corpus.lua 2>&1)
d_env=$(SHINGLE_SIMD=portable lua5.4 spec/simd_corpus.lua 2>&1)
d_off=$(SHINGLE_BUILD=build/nosimd lua5.4 spec/simd_corpus.lua 2>&1)
if [ -n "$d_simd" ] && [ "$d_simd" = "$d_env" ] && [ "$d_simd" = "$d_off" ]; then
  echo "[simd] the adversarial corpus sketches alike with SIMD, SHINGLE_SIMD=portable and -DSHINGLE_SIMD=OFF: ok"
  passed=$((passed + 1))
else
  echo "[simd] sketches differ between builds or levels: FAILED"
  diff <(echo "$d_simd") <(echo "$d_env"); diff <(echo "$d_simd") <(echo "$d_off")
  failed=$((failed + 1))
fi

# Sanitizers: the core and its tests instrumented; the specs through an
# instrumented module loaded into the stock interpreter (runtime preloaded).
cmake -S . -B build/asan -DSHINGLE_LUA=5.4 -DSHINGLE_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null &&
  cmake --build build/asan -j"$(nproc)" >/dev/null || { echo "[asan] build failed"; failed=$((failed + 1)); }
if [ -d build/asan ]; then
  # LeakSanitizer on. Every process of this run has the runtime (it is
  # preloaded, and children inherit it), so ASan and LSan reports go to files
  # (log_path) and a leak does not change an exit code (exitcode=0); the files
  # are read below. A report counts when it comes from our code or from a Lua
  # process (a frame in core/, the shingle module or the Lua library): the
  # specs also run cp, mkdir and the C compiler, whose leaks at exit are not
  # ours and are not counted (each is named in one line). No suppression.
  reports=$(mktemp -d)
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:log_path=$reports/asan LSAN_OPTIONS=exitcode=0 \
         UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  count_c "C asan+ubsan" build/asan/test_*
  count_busted "lua5.4 asan+ubsan" lua5.4 --exclude-tags=faults SHINGLE_BUILD=build/asan \
    LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
  unset ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS
  ours=0 foreign=0
  for r in "$reports"/asan.*; do
    [ -e "$r" ] || continue
    if grep -q 'ERROR: LeakSanitizer' "$r" && ! grep -q 'ERROR: AddressSanitizer' "$r" &&
       ! grep -Eq '#[0-9]+ .*(/core/|shingle|liblua|lua5\.[0-9])' "$r"; then
      foreign=$((foreign + 1))
      echo "[asan] not ours: leaks at exit of $(grep -Eo '\(/[^+)]+' "$r" | grep -v sanitizer | head -1 | tr -d '(')"
      continue
    fi
    ours=$((ours + 1))
    echo "[asan] $(grep -m1 -E 'ERROR: (Leak|Address)Sanitizer' "$r")"; sed -n '1,40p' "$r"
  done
  rm -rf "$reports"
  if [ "$ours" -eq 0 ]; then
    echo "[asan] LeakSanitizer and AddressSanitizer reports of our code: none ($foreign of other programs)"; passed=$((passed + 1))
  else
    echo "[asan] LeakSanitizer and AddressSanitizer reports of our code: $ours"; failed=$((failed + 1))
  fi
fi

# Without MPI (-DSHINGLE_MPI=OFF, as on a machine without Open MPI): everything
# builds, the distributed phases pass over threads, and --mpi says what is missing.
if cmake -S . -B build/nompi -DSHINGLE_LUA=5.4 -DSHINGLE_MPI=OFF -DSHINGLE_WERROR=ON >/dev/null &&
   cmake --build build/nompi -j"$(nproc)" >/dev/null && [ ! -e build/nompi/lib/shingle/mpi.so ]; then
  count_c "C without MPI" build/nompi/test_dist build/nompi/test_exchange
  env -u LUA_CPATH SHINGLE_BUILD=build/nompi busted --lua=lua5.4 -o plainTerminal spec/mpi_spec.lua >"$log" 2>&1
  line=$(grep -E '^[0-9]+ success(es)? / [0-9]+ failures? / [0-9]+ errors?' "$log" | tail -1)
  if [ -n "$line" ]; then
    read -r s _ _ f _ _ e _ <<<"$line"
    passed=$((passed + s)); failed=$((failed + f + e)); echo "[lua5.4 without MPI] $line"
  else
    echo "[lua5.4 without MPI] busted did not finish"; tail -20 "$log"; failed=$((failed + 1))
  fi
else
  echo "[without MPI] build failed"; failed=$((failed + 1))
fi
# The bindings under allocation failure (core/test/alloc_lua.c): a Lua state
# whose allocator fails from the n-th allocation on, for every n, plain and
# under ASan with LeakSanitizer (leaks of lua-cjson's own buffers suppressed).
count_alloc() { # count_alloc LABEL BUILD_DIR [env...]
  local label=$1 dir=$2; shift 2
  env "$@" "$dir/alloc_lua" "$dir/lib/?.so" "lua/?.lua;lua/?/init.lua" spec/alloc_script.lua >"$log" 2>&1
  local rc=$? line
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
  if [ -z "$line" ] || [ "$rc" -ne 0 ]; then
    echo "[$label] alloc_lua: FAILED (exit $rc)"; grep -E "went wrong|leak of|#[1-4] |ERROR|alloc_lua:" "$log" | head -30
    failed=$((failed + 1)); return
  fi
  passed=$((passed + 1))
  echo "[$label] $(grep -E '^alloc_lua: ' "$log" | tail -1)"
}
count_alloc "alloc" build/5.4
[ -x build/asan/alloc_lua ] && count_alloc "alloc asan+lsan" build/asan \
  ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions="$PWD/core/test/alloc_lua.supp" \
  ALLOC_LUA_PIN="$(ls /usr/lib/x86_64-linux-gnu/lua/5.4/cjson.so 2>/dev/null)"

# Fuzzing (docs/robustness.md): every libFuzzer target over its seeds and the
# crash inputs kept as regressions, then a short run of each (FUZZ_SECONDS).
count_fuzz() { # count_fuzz ARGS...: one test per target line of scripts/fuzz.sh
  local line
  bash scripts/fuzz.sh "$@" >"$log" 2>&1
  while IFS= read -r line; do
    case "$line" in
      "fuzz "*": ok"*) passed=$((passed + 1)); echo "[fuzz] $line" ;;
      "fuzz "*) failed=$((failed + 1)); echo "[fuzz] $line" ;;
      *) [[ "$line" == *FAILED* || "$line" == *invariant* || "$line" == *ERROR* ]] && echo "  $line" ;;
    esac
  done <"$log"
  grep -q "^fuzz " "$log" || { echo "[fuzz] scripts/fuzz.sh $*: did not run"; tail -5 "$log"; failed=$((failed + 1)); }
}
count_fuzz --regress
count_fuzz "${FUZZ_SECONDS:-10}"

# The rockspec builds and installs a working command into a scratch tree, and
# the examples run against the installed modules alone (not the checkout's).
# Its Lua dependencies (argparse, lua-cjson, luafilesystem) come from Debian's
# packages here, offline: a LuaRocks config says they are provided, as a
# Debian user's would. The build leaves nothing in the checkout outside build/.
tree=$(mktemp -d)
installed() { # run a command with the installed tree's Lua paths only
  LUA_PATH="$tree/share/lua/5.4/?.lua;$tree/share/lua/5.4/?/init.lua;;" LUA_CPATH="$tree/lib/lua/5.4/?.so;;" "$@"
}
debver() { dpkg-query -W -f='${Version}' "$1" | sed 's/[-+~].*//'; }
printf 'rocks_provided = { argparse = "%s-1", ["lua-cjson"] = "%s-1", luafilesystem = "%s-1" }\n' \
  "$(debver lua-argparse)" "$(debver lua-cjson)" "$(debver lua-filesystem)" >"$tree/luarocks-config.lua"
outside_build() { git status --porcelain --ignored --untracked-files=all | grep -v ' build/' || true; }
before=$(outside_build)
if LUAROCKS_CONFIG="$tree/luarocks-config.lua" luarocks --lua-version=5.4 make --tree "$tree" \
     rockspec/shingle-scm-1.rockspec >"$log" 2>&1 &&
   "$tree/bin/shingle" compare samples/docs/rabin-original.txt samples/docs/rabin-excerpt.txt >"$log" 2>&1 &&
   installed lua5.4 examples/custom_pipeline.lua "$tree/run1" >"$log" 2>&1 &&
   installed lua5.4 examples/cluster_dir.lua samples/docs "$tree/run2" >"$log" 2>&1 &&
   { [ "$(outside_build)" = "$before" ] || { echo "the rock's build left files in the checkout:" >"$log";
                                             diff <(echo "$before") <(outside_build) >>"$log"; false; }; }; then
  echo "[luarocks] make --tree (dependencies from Debian), run the command and the examples, nothing left outside build/: ok"
  passed=$((passed + 1))
else
  echo "[luarocks] make --tree, run the command and the examples: FAILED"; tail -20 "$log"; failed=$((failed + 1))
fi
rm -rf "$tree" build/rock

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
