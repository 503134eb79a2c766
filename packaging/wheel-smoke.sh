#!/usr/bin/env bash
# Build the wheel (python -m build: sdist, then the wheel from it), install it into a fresh venv
# outside the source tree, and smoke-test the installed `arxiu`: the imported `app` and its
# resources come from the venv, --version, a screenshot of the demo archive (created on first
# run), and a Catalan `arxiu search` that must find the displacement interviews.
#
# Usage: bash packaging/wheel-smoke.sh [--isolated]     (SMOKE_OUT=DIR keeps the screenshot)
#   default     the venv sees the system site-packages for the dependencies (torch, Qt, llama.cpp:
#               seconds instead of minutes), the wheel itself is installed with --no-deps;
#   --isolated  a venv with nothing but what pip installs from the wheel's dependencies.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-python}"
WORK="$(mktemp -d /tmp/arxiu-wheel-smoke.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
START=$SECONDS
step() { printf -- '--- %s (+%ss)\n' "$1" "$((SECONDS - START))"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

step "python -m build"
"$PYTHON" -m build --outdir "$WORK/dist" "$ROOT" > "$WORK/build.log" 2>&1 \
  || { tail -40 "$WORK/build.log"; fail "python -m build"; }
WHEEL="$(ls "$WORK"/dist/arxiu-*.whl)"
echo "$(basename "$WHEEL") $(du -k "$WHEEL" | cut -f1) KB"

step "install into a fresh venv"
if [ "${1:-}" = "--isolated" ]; then
  "$PYTHON" -m venv "$WORK/venv"
  "$WORK/venv/bin/python" -m pip install -q "$WHEEL"
else
  "$PYTHON" -m venv --system-site-packages "$WORK/venv"
  "$WORK/venv/bin/python" -m pip install -q --no-deps --no-index "$WHEEL"
fi
VENV_SITE="$("$WORK/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"

# Everything below runs from an empty folder with a fresh ARXIU_HOME: no source tree in reach.
mkdir -p "$WORK/run" "$WORK/home"
cd "$WORK/run"
export ARXIU_HOME="$WORK/home" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 QT_QPA_PLATFORM=offscreen
unset PYTHONPATH

step "the installed app is the wheel's"
"$WORK/venv/bin/python" -c 'import app, app.core.paths as p; print(app.__file__); print(p.resources_dir())' \
  | tee "$WORK/where.txt"
while read -r line; do
  case "$line" in "$VENV_SITE"/*) ;; *) fail "imported from outside the venv: $line" ;; esac
done < "$WORK/where.txt"

step "arxiu --version"
"$WORK/venv/bin/arxiu" --version | tee "$WORK/version.txt"
grep -qx "arxiu $(sed -n 's/^__version__ = "\(.*\)"/\1/p' "$ROOT/app/__init__.py")" "$WORK/version.txt" \
  || fail "--version does not match app/__init__.py"

step "arxiu --screenshot (first run creates the demo archive)"
"$WORK/venv/bin/arxiu" --screenshot "$WORK/shot.png" 2> "$WORK/shot.err" || { cat "$WORK/shot.err"; fail "screenshot"; }
[ "$(head -c 8 "$WORK/shot.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "not a PNG"
[ "$(stat -c %s "$WORK/shot.png")" -gt 20000 ] || fail "screenshot suspiciously small"
[ -f "$ARXIU_HOME/archives/demo/archive.db" ] || fail "no demo archive in the fresh ARXIU_HOME"
echo "screenshot $(stat -c %s "$WORK/shot.png") bytes; demo archive created"
if [ -n "${SMOKE_OUT:-}" ]; then mkdir -p "$SMOKE_OUT" && cp "$WORK/shot.png" "$SMOKE_OUT/wheel-screenshot.png"; fi

step "arxiu search (Catalan)"
"$WORK/venv/bin/arxiu" search "famílies que van haver de marxar quan van fer el pantà" --records --k 5 \
  2> "$WORK/search.err" | tee "$WORK/search.txt"
grep -Eq '^ *[1-3]\. oh1/[123] ' "$WORK/search.txt" || { cat "$WORK/search.err"; fail "no displacement interview in the top 3"; }
step "wheel smoke passed"
