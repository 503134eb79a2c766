#!/usr/bin/env bash
# Smoke-test a built bundle as a person on a fresh account would meet it.
#
# Usage: bash packaging/smoke.sh dist/arxiu-VERSION-linux-x86_64.tar.gz   (unpacked to a temp dir)
#        bash packaging/smoke.sh dist/arxiu_VERSION_amd64.deb              (dpkg -i, smoke, dpkg -r)
#        bash packaging/smoke.sh build/pyinstaller/dist/arxiu               (a bundle folder)
#
# Every bundle command runs under `env -i` with a fresh HOME, a PATH holding no Python (an empty
# folder) and, where `unshare --net` works (root), no network at all. Checks, each must pass:
#   1. --version prints "arxiu VERSION";
#   2. the first run (for the .deb: the desktop entry's Exec line) with --screenshot, offscreen,
#      creates the demo archive in the fresh HOME and writes a window-sized PNG;
#   3. `arxiu index` builds the semantic index with the bundled models;
#   4. `arxiu search` in Catalan puts a Catalan displacement interview (oh1/1-3) in the top 3;
#   5. `arxiu ask` answers with the bundled local model and cites at least one verified record;
# and before them, the bundle holds no torch, transformers nor sentence-transformers (MiniLM runs
# on ONNX Runtime: steps 3-5 pass without them).
# SMOKE_OUT=DIR keeps the screenshot and the command outputs.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TARGET="$(realpath "${1:?usage: smoke.sh BUNDLE (.tar.gz, .deb or folder)}")"
VERSION="$(sed -n 's/^__version__ = "\(.*\)"/\1/p' "$ROOT/app/__init__.py")"
WORK="$(mktemp -d /tmp/arxiu-smoke.XXXXXX)"
START=$SECONDS
DEB_INSTALLED=0
cleanup() {
  if [ "$DEB_INSTALLED" = 1 ]; then dpkg --purge arxiu > /dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
step() { printf -- '--- %s (+%ss)\n' "$1" "$((SECONDS - START))"; }
fail() {
  echo "FAIL: $*" >&2
  for log in "$WORK"/out/*.err; do [ -s "$log" ] && { echo "== $log" >&2; tail -20 "$log" >&2; }; done
  exit 1
}
mkdir -p "$WORK/home" "$WORK/emptybin" "$WORK/out"

step "prepare $(basename "$TARGET")"
case "$TARGET" in
  *.tar.gz)
    tar -C "$WORK" -xzf "$TARGET"
    EXE="$WORK/arxiu/arxiu"
    FIRST_RUN=("$EXE")
    ;;
  *.deb)
    dpkg -i "$TARGET" > "$WORK/out/dpkg.log" 2>&1 || { cat "$WORK/out/dpkg.log"; fail "dpkg -i"; }
    DEB_INSTALLED=1
    EXE=/usr/bin/arxiu
    DESKTOP=/usr/share/applications/arxiu.desktop
    for f in /opt/arxiu/arxiu "$DESKTOP" /usr/share/icons/hicolor/scalable/apps/arxiu.svg \
      /usr/share/icons/hicolor/256x256/apps/arxiu.png; do
      [ -e "$f" ] || fail "the .deb did not install $f"
    done
    if command -v desktop-file-validate > /dev/null; then desktop-file-validate "$DESKTOP"; fi
    EXEC_LINE="$(sed -n 's/^Exec=//p' "$DESKTOP")"
    read -r -a FIRST_RUN <<< "$EXEC_LINE"
    [ "${FIRST_RUN[0]}" = arxiu ] || fail "desktop entry Exec is not arxiu: $EXEC_LINE"
    # What a desktop session resolves on its standard PATH (this shell's may hold pyenv shims).
    FIRST_RUN[0]="$(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      sh -c 'command -v arxiu')"
    [ "${FIRST_RUN[0]}" = "$EXE" ] || fail "arxiu on PATH is ${FIRST_RUN[0]}, not $EXE"
    echo "installed: $(dpkg-query -W -f='${Package} ${Version} ${Installed-Size} KB' arxiu)"
    ;;
  *)
    EXE="$TARGET/arxiu"
    FIRST_RUN=("$EXE")
    ;;
esac
[ -x "$EXE" ] || fail "no executable at $EXE"
BUNDLE_DIR="$(dirname "$EXE")"
[ "$DEB_INSTALLED" = 1 ] && BUNDLE_DIR=/opt/arxiu  # /usr/bin/arxiu is its launcher
for unwanted in torch transformers sentence_transformers; do
  [ ! -e "$BUNDLE_DIR/_internal/$unwanted" ] || fail "the bundle ships $unwanted"
done
[ -d "$BUNDLE_DIR/_internal/onnxruntime" ] || fail "the bundle has no onnxruntime"
echo "no torch stack in $BUNDLE_DIR; onnxruntime $(du -sm "$BUNDLE_DIR/_internal/onnxruntime" | cut -f1) MB"

NONET=()
if unshare --net true 2> /dev/null; then NONET=(unshare --net); fi
echo "network: ${NONET[*]:-available (unshare --net not permitted here)}"
bare() {  # run a command with nothing from this shell's environment
  "${NONET[@]}" env -i HOME="$WORK/home" PATH="$WORK/emptybin" LANG=C.UTF-8 \
    QT_QPA_PLATFORM=offscreen "$@"
}
bare /bin/sh -c 'command -v python3 || command -v python' > /dev/null \
  && fail "a Python is reachable on the bare PATH"

step "1. --version"
bare "$EXE" --version > "$WORK/out/version.txt" 2> "$WORK/out/version.err" || fail "--version"
cat "$WORK/out/version.txt"
grep -qx "arxiu $VERSION" "$WORK/out/version.txt" || fail "expected 'arxiu $VERSION'"

step "2. first run: ${FIRST_RUN[*]} --screenshot (offscreen)"
bare "${FIRST_RUN[@]}" --screenshot "$WORK/out/first-run.png" 2> "$WORK/out/shot.err" \
  || fail "--screenshot"
PNG="$WORK/out/first-run.png"
[ "$(head -c 8 "$PNG" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "not a PNG"
WIDTH=$((16#$(od -An -tx1 -j16 -N4 "$PNG" | tr -d ' \n')))
HEIGHT=$((16#$(od -An -tx1 -j20 -N4 "$PNG" | tr -d ' \n')))
[ "$WIDTH" -ge 800 ] && [ "$HEIGHT" -ge 500 ] || fail "screenshot is ${WIDTH}x${HEIGHT}"
DEMO="$WORK/home/.local/share/arxiu/archives/demo/archive.db"
[ -s "$DEMO" ] || fail "the first run did not create the demo archive ($DEMO)"
echo "screenshot ${WIDTH}x${HEIGHT}, $(stat -c %s "$PNG") bytes; demo archive $(stat -c %s "$DEMO") bytes"

step "3. arxiu index (bundled MiniLM + USE)"
bare "$EXE" index > "$WORK/out/index.txt" 2> "$WORK/out/index.err" || fail "arxiu index"
tail -3 "$WORK/out/index.txt"

step "4. arxiu search in Catalan"
bare "$EXE" search "famílies que van haver de marxar quan van fer el pantà" --records --k 5 \
  > "$WORK/out/search.txt" 2> "$WORK/out/search.err" || fail "arxiu search"
cat "$WORK/out/search.txt"
grep -Eq '^ *[1-3]\. oh1/[123] ' "$WORK/out/search.txt" \
  || fail "no Catalan displacement interview (oh1/1-3) in the top 3"

step "5. arxiu ask with the bundled local model"
bare "$EXE" ask "Which interviews talk about families who had to leave when the reservoir was built?" \
  > "$WORK/out/ask.txt" 2> "$WORK/out/ask.err" || fail "arxiu ask"
cat "$WORK/out/ask.txt"
cat "$WORK/out/ask.err"
grep -q "^\[local · local / private" "$WORK/out/ask.err" || fail "the answer did not come from the local model"
[ -s "$WORK/out/ask.txt" ] || fail "empty answer"
grep -Eq '✓ .*\(oh1/[0-9]+\)' "$WORK/out/ask.err" || fail "no verified citation of an interview"

if [ -n "${SMOKE_OUT:-}" ]; then mkdir -p "$SMOKE_OUT" && cp "$WORK"/out/* "$SMOKE_OUT"/; fi
if [ "$DEB_INSTALLED" = 1 ]; then
  step "remove the .deb (dpkg -r, then --purge)"
  dpkg -r arxiu > /dev/null
  dpkg --purge arxiu > /dev/null
  DEB_INSTALLED=0
  [ ! -e /opt/arxiu ] && [ ! -e /usr/bin/arxiu ] && [ ! -e /usr/share/applications/arxiu.desktop ] \
    || fail "removing the .deb left files behind"
  dpkg-query -W arxiu > /dev/null 2>&1 && fail "dpkg still lists arxiu"
fi
step "smoke passed: $(basename "$TARGET")"
