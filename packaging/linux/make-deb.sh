#!/usr/bin/env bash
# Wrap a frozen one-folder bundle as a .deb with Debian's own tools (dpkg-deb under fakeroot).
# Usage: make-deb.sh BUNDLE_DIR VERSION OUT.deb
# Layout: /opt/arxiu (the bundle), /usr/bin/arxiu (a launcher), the desktop entry, the icon.
set -euo pipefail
BUNDLE="$1" VERSION="$2" OUT="$3"
HERE="$(cd "$(dirname "$0")" && pwd)"
ICONS="$HERE/../../resources/icons"
STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
PKG="$STAGE/arxiu"

mkdir -p "$PKG/DEBIAN" "$PKG/opt" "$PKG/usr/bin" "$PKG/usr/share/applications" \
  "$PKG/usr/share/icons/hicolor/scalable/apps" "$PKG/usr/share/icons/hicolor/256x256/apps"
cp -a "$BUNDLE" "$PKG/opt/arxiu"
cat > "$PKG/usr/bin/arxiu" <<'LAUNCHER'
#!/bin/sh
exec /opt/arxiu/arxiu "$@"
LAUNCHER
chmod 0755 "$PKG/usr/bin/arxiu"
install -m 0644 "$HERE/arxiu.desktop" "$PKG/usr/share/applications/arxiu.desktop"
install -m 0644 "$ICONS/arxiu.svg" "$PKG/usr/share/icons/hicolor/scalable/apps/arxiu.svg"
install -m 0644 "$ICONS/arxiu.png" "$PKG/usr/share/icons/hicolor/256x256/apps/arxiu.png"

SIZE_KB="$(du -sk --exclude=DEBIAN "$PKG" | cut -f1)"
sed -e "s/@VERSION@/$VERSION/" -e "s/@SIZE_KB@/$SIZE_KB/" "$HERE/control.in" > "$PKG/DEBIAN/control"
install -m 0755 "$HERE/postinst" "$PKG/DEBIAN/postinst"
install -m 0755 "$HERE/postinst" "$PKG/DEBIAN/postrm"

rm -f "$OUT"
fakeroot dpkg-deb -Zgzip -z6 --build "$PKG" "$OUT"
dpkg-deb --info "$OUT" | sed -n '1,/Description/p'
