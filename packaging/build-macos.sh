#!/usr/bin/env bash
# Build the macOS app: PyInstaller makes dist/Arxiu.app from the shared spec, hdiutil wraps it as
#   dist/arxiu-VERSION-macos-ARCH.dmg        (ARCH: arm64 or x86_64, the build machine's)
# Parallel to build-linux.sh; NOT run by this project's CI (no Mac). See README.md.
#
# Needs: Python 3.11 (python.org or Homebrew) with the project installed:
#   CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_METAL=ON" pip install ".[packaging]"
# Signing and notarisation (for Gatekeeper) need an Apple Developer ID: set CODESIGN_IDENTITY.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
VERSION="$(sed -n 's/^__version__ = "\(.*\)"/\1/p' app/__init__.py)"
ARCH="$(uname -m)"
WORK="$ROOT/build/pyinstaller"
APP="$WORK/dist/Arxiu.app"
DMG="$ROOT/dist/arxiu-$VERSION-macos-$ARCH.dmg"

echo "==> check the build environment"
"$PYTHON" -m PyInstaller --version
"$PYTHON" packaging/check_llama_portable.py

echo "==> freeze with PyInstaller (.app)"
rm -rf "$WORK/dist"
"$PYTHON" -m PyInstaller --noconfirm --log-level WARN \
  --distpath "$WORK/dist" --workpath "$WORK/work" packaging/arxiu.spec

if [ -n "${CODESIGN_IDENTITY:-}" ]; then
  echo "==> codesign"
  codesign --deep --force --options runtime --sign "$CODESIGN_IDENTITY" "$APP"
fi

echo "==> dmg"
mkdir -p "$ROOT/dist"
STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
cp -R "$APP" "$STAGE/"
ln -s /Applications "$STAGE/Applications"
rm -f "$DMG"
hdiutil create -volname "Arxiu $VERSION" -srcfolder "$STAGE" -ov -format UDZO "$DMG"

echo "==> sizes"
"$PYTHON" packaging/bundle_sizes.py "$APP/Contents/Frameworks" "$DMG"
