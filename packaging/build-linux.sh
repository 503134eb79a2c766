#!/usr/bin/env bash
# Build the Linux bundle: a PyInstaller one-folder app, packed as
#   dist/arxiu-VERSION-linux-x86_64.tar.gz   (unpack, run arxiu/arxiu)
#   dist/arxiu_VERSION_amd64.deb             (installs to /opt/arxiu, `arxiu` on PATH, menu entry)
#
# Usage: bash packaging/build-linux.sh            (from anywhere; PYTHON=... picks the interpreter)
# Needs: the project installed in that interpreter with the packaging extra
#   (CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install ".[packaging]"), dpkg-deb and fakeroot.
# Prints each step with its time, the bundle's sizes and its ten largest parts.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python}"
VERSION="$(sed -n 's/^__version__ = "\(.*\)"/\1/p' app/__init__.py)"
WORK="$ROOT/build/pyinstaller"
BUNDLE="$WORK/dist/arxiu"
TARBALL="$ROOT/dist/arxiu-$VERSION-linux-x86_64.tar.gz"
DEB="$ROOT/dist/arxiu_${VERSION}_amd64.deb"
START=$SECONDS
step() { printf '\n==> %s (%s, +%ss)\n' "$1" "$(date +%H:%M:%S)" "$((SECONDS - START))"; }

step "check the build environment"
for tool in dpkg-deb fakeroot tar gzip; do
  command -v "$tool" >/dev/null || { echo "missing tool: $tool" >&2; exit 3; }
done
"$PYTHON" -m PyInstaller --version
"$PYTHON" packaging/check_llama_portable.py

step "freeze with PyInstaller (one folder)"
rm -rf "$WORK/dist"
"$PYTHON" -m PyInstaller --noconfirm --log-level WARN \
  --distpath "$WORK/dist" --workpath "$WORK/work" packaging/arxiu.spec

step "pack $TARBALL"
mkdir -p "$ROOT/dist"
tar -C "$WORK/dist" -cf - arxiu | gzip -6 > "$TARBALL.part"
mv "$TARBALL.part" "$TARBALL"

step "build $DEB"
bash packaging/linux/make-deb.sh "$BUNDLE" "$VERSION" "$DEB"

step "sizes"
"$PYTHON" packaging/bundle_sizes.py "$BUNDLE" "$TARBALL" "$DEB"
step "built in $((SECONDS - START)) s"
