# What the shell benchmarks share (source it from the repository's root):
#   bench_machine         the machine line printed with every figure (CPU model,
#                         cores, memory, kernel, time), as bench/lib/machine.lua
#   bench_snapshot DIR    a private copy of bin/, lua/ and build/5.4's modules in
#                         DIR, with LUA_PATH and LUA_CPATH pointing at it:
#                         others rebuilding build/5.4 or editing lua/ while a run
#                         is going cannot change or crash it. Sets SHINGLE.
#   $SHINGLE_CORE_LINK    what a C benchmark links to use the engine: build/5.4's
#                         static library and the libraries it needs (CMakeLists.txt's
#                         shingle_core), one list for every benchmark
#   bench_kernel NAME CORPUS
#                         for the kernel's C benchmarks (run_sketch.sh,
#                         run_select.sh): build/5.4 set up, CORPUS made by
#                         bench/corpus.sh if it has no text/ or html/ yet, and
#                         bench/NAME.c compiled with plain -O2, as the shipped
#                         build is, into build/bench/NAME
bench_machine() {
  echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores," \
       "$(free -g | awk '/^Mem:/{print $2}') GiB RAM, $(uname -sr); $(date -u '+%Y-%m-%d %H:%M UTC')"
}

bench_snapshot() {
  local snap=$1
  rm -rf "$snap"
  mkdir -p "$snap/build/5.4"
  cp -r bin lua "$snap/"
  cp -r build/5.4/lib "$snap/build/5.4/"
  export LUA_PATH="$snap/lua/?.lua;$snap/lua/?/init.lua;;" LUA_CPATH="$snap/build/5.4/lib/?.so;;"
  SHINGLE=$snap/bin/shingle
}

SHINGLE_CORE_LINK="build/5.4/libshingle_core.a -lz -lzstd -lutf8proc -llmdb -lxxhash -lpthread -lm"

bench_kernel() {
  local name=$1 corpus=$2
  SHINGLE_ONLY_54=1 bash scripts/setup.sh
  [ -d "$corpus/text" ] && [ -d "$corpus/html" ] || bash bench/corpus.sh "$corpus"
  mkdir -p build/bench
  # shellcheck disable=SC2086 # (a list of words)
  cc -std=c99 -O2 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Icore "bench/$name.c" $SHINGLE_CORE_LINK \
     -o "build/bench/$name"
}
