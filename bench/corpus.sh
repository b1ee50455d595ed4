#!/usr/bin/env bash
# Assembles the sketching benchmark's corpus from Debian documentation packages:
#   bench/corpus.sh [DIR]      (default /tmp/shingle-corpus)
# Installs the packages below when missing (as root, or through sudo), then
# copies every HTML page of them into DIR/html/ and every plain-text file
# (.txt, .rst, .pod, .md, README, NEWS, changelogs ...; .gz ones decompressed)
# into DIR/text/, with flattened names. Prints the count and size of each set.
# Real documents, so the figures do not depend on a synthetic generator; about
# 250 MB of HTML and text. Never commit DIR.
set -euo pipefail

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

copy() { # copy SRC DESTDIR: decompress a .gz, else copy
  local src=$1 dest=$2/$(flat "$1")
  case $src in
    *.gz) gzip -dc -- "$src" > "${dest%.gz}" ;;
    *)    cp -- "$src" "$dest" ;;
  esac
}

for p in "${PACKAGES[@]}"; do
  dpkg -L "$p" | while IFS= read -r f; do
    [ -f "$f" ] && [ ! -L "$f" ] || continue
    base=${f##*/}
    base=${base%.gz}
    case $base in
      *.html|*.htm) copy "$f" "$DIR/html" ;;
      *.txt|*.rst|*.pod|*.md|README|README.*|NEWS|NEWS.*|changelog|changelog.*|CREDITS|MAINTAINERS)
        copy "$f" "$DIR/text" ;;
    esac
  done
done

for set in html text; do
  n=$(find "$DIR/$set" -type f | wc -l)
  bytes=$(find "$DIR/$set" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
  awk -v set="$set" -v n="$n" -v b="$bytes" -v d="$DIR/$set" \
    'BEGIN { printf "%-4s %6d files %10.1f MB  %s\n", set, n, b / 1e6, d }'
done
