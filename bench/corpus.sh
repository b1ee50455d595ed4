#!/usr/bin/env bash
# Assembles the sketching benchmark's corpus from Debian documentation packages:
#   bench/corpus.sh [DIR]           (default /tmp/shingle-corpus)
#   bench/corpus.sh --large [DIR]   also DIR/large/: the end-to-end corpus of
#                                   issue 13 (about 65,000 files, 700 MB; below)
# Installs the packages below when missing (as root, or through sudo), then
# copies every HTML page of them into DIR/html/ and every plain-text file
# (.txt, .rst, .pod, .md, README, NEWS, changelogs ...; .gz ones decompressed)
# into DIR/text/, with flattened names. Prints the count and size of each set.
# Real documents, so the figures do not depend on a synthetic generator; about
# 250 MB of HTML and text. Never commit DIR.
set -euo pipefail

LARGE=0
if [ "${1:-}" = "--large" ]; then LARGE=1; shift; fi
DIR=${1:-/tmp/shingle-corpus}

# All in Debian 12 main, all mostly English prose:
#   linux-doc-6.1       kernel Documentation/ (.rst, .txt) and its Sphinx HTML
#   python3.11-doc      the Python manual (HTML and its .rst.txt sources)
#   python-django-doc   the Django manual (HTML)
#   postgresql-doc-15   the PostgreSQL manual (HTML)
#   git-doc             git's manual pages and guides (.txt and HTML)
#   perl-doc            perl's pod pages
#   debian-policy, debian-reference-en   Debian's policy and reference
PACKAGES=(linux-doc-6.1 python3.11-doc python-django-doc postgresql-doc-15 git-doc
          perl-doc debian-policy debian-reference-en)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "corpus: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  # apt-get update only when a package is not known to apt at all
  for p in "${missing[@]}"; do
    if ! apt-cache show "$p" >/dev/null 2>&1; then $SUDO apt-get update -qq; break; fi
  done
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

rm -rf "$DIR/html" "$DIR/text"
mkdir -p "$DIR/html" "$DIR/text"

# A flat, unique name: the path below /usr/share with / turned into _.
flat() { local p=${1#/usr/share/}; p=${p#doc/}; printf '%s' "${p//\//_}"; }

# Copy the files listed in LIST (absolute paths) into DEST with flat names,
# .gz ones decompressed: one tar for all of them (a process per file took
# minutes on a busy machine).
copy_list() { # copy_list LIST DEST
  sed 's|^/||' "$1" | tar -C / -cf - -T - | tar -C "$2" -xf - --transform 's|^usr/share/||;s|^doc/||;s|/|_|g'
  find "$2" -name '*.gz' -print0 | xargs -0 -r gunzip -f
}

lists=$(mktemp -d)
trap 'rm -rf "$lists"' EXIT
: > "$lists/html"
: > "$lists/text"
for p in "${PACKAGES[@]}"; do
  dpkg -L "$p" | while IFS= read -r f; do
    [ -f "$f" ] && [ ! -L "$f" ] || continue
    base=${f##*/}
    base=${base%.gz}
    case $base in
      *.html|*.htm) printf '%s\n' "$f" >> "$lists/html" ;;
      *.txt|*.rst|*.pod|*.md|README|README.*|NEWS|NEWS.*|changelog|changelog.*|CREDITS|MAINTAINERS)
        printf '%s\n' "$f" >> "$lists/text" ;;
    esac
  done
done
copy_list "$lists/html" "$DIR/html"
copy_list "$lists/text" "$DIR/text"

for set in html text; do
  n=$(find "$DIR/$set" -type f | wc -l)
  bytes=$(find "$DIR/$set" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
  awk -v set="$set" -v n="$n" -v b="$bytes" -v d="$DIR/$set" \
    'BEGIN { printf "%-4s %6d files %10.1f MB  %s\n", set, n, b / 1e6, d }'
done

# --large: DIR/large/ holds every HTML page of the Rust manuals (rust-doc:
# the standard library's API pages, the book, the reference; about 32,000
# files), every man page installed on the machine, decompressed (about 23,000
# after scripts/setup.sh and the packages above; manpages and manpages-dev
# are installed for it), and DIR/text (9,364 files): about 65,000 files of
# real documentation, mostly small. The man pages are those of whatever
# packages the machine holds, so the count varies a little between machines:
# the script prints what it assembled.
if [ "$LARGE" = 1 ]; then
  more=()
  for p in rust-doc manpages manpages-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || more+=("$p")
  done
  if [ ${#more[@]} -gt 0 ]; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${more[@]}" >/dev/null
  fi
  rm -rf "$DIR/large"
  mkdir -p "$DIR/large/rust" "$DIR/large/man"
  dpkg -L rust-doc | while IFS= read -r f; do
    if [ -f "$f" ] && [ ! -L "$f" ] && [ "${f%.html}" != "$f" ]; then printf '%s\n' "$f"; fi
  done > "$lists/rust"
  copy_list "$lists/rust" "$DIR/large/rust"
  find /usr/share/man -type f -name '*.gz' > "$lists/man"
  copy_list "$lists/man" "$DIR/large/man"
  cp -r "$DIR/text" "$DIR/large/text"
  n=$(find "$DIR/large" -type f | wc -l)
  bytes=$(find "$DIR/large" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
  awk -v n="$n" -v b="$bytes" -v d="$DIR/large" 'BEGIN { printf "large %6d files %10.1f MB  %s\n", n, b / 1e6, d }'
fi
